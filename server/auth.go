package server

import "net/http"

func (s *Server) authorized(r *http.Request) bool {
	return s.cfg.Token.CheckAuthorization(r.Header.Get("Authorization"), false)
}
