package server

import (
	"net/http"
	"strings"

	"github.com/parqdb/parqdb/server/console"
	"github.com/parqdb/parqdb/server/serving"
)

// consoleCSP keeps the console to its own origin: scripts, styles, images
// and API requests from the server only, no inline script or style, no
// framing.
const consoleCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// console answers / and /console (a redirect to /console/) and the
// console's files below /console/. The files are public: they hold no
// data, and the console asks for the token when the API answers 401.
func (s *Server) console(w http.ResponseWriter, r *http.Request, _ string) error {
	name, ok := strings.CutPrefix(r.URL.Path, "/console/")
	if !ok {
		http.Redirect(w, r, "/console/", http.StatusFound)
		return nil
	}
	f, ok := console.Lookup(name)
	if !ok {
		return serving.Errorf(http.StatusNotFound, serving.CodeNotFound, "no console file %s", r.URL.Path)
	}
	h := w.Header()
	h.Set("Content-Type", f.ContentType)
	h.Set("Content-Security-Policy", consoleCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", f.ETag)
	if r.Header.Get("If-None-Match") == f.ETag {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return nil
	}
	_, err := w.Write(f.Body)
	return err
}
