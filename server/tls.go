package server

import (
	"crypto/tls"
	"errors"
	"fmt"
	"os"
)

// LoadTLS reads a PEM certificate chain (the server's certificate first,
// then any intermediates) and its PEM private key, as given to
// `parqdb serve --tls-cert F --tls-key F`, and returns a server TLS
// configuration (TLS 1.2 or later) for both the HTTP and the Flight SQL
// listener. Errors name the file at fault.
func LoadTLS(certFile, keyFile string) (*tls.Config, error) {
	switch {
	case certFile == "" && keyFile == "":
		return nil, errors.New("tls: no certificate: give --tls-cert and --tls-key")
	case certFile == "":
		return nil, fmt.Errorf("tls: --tls-key %s given without --tls-cert: give both", keyFile)
	case keyFile == "":
		return nil, fmt.Errorf("tls: --tls-cert %s given without --tls-key: give both", certFile)
	}
	for _, f := range []struct{ flag, path string }{{"--tls-cert", certFile}, {"--tls-key", keyFile}} {
		if _, err := os.Stat(f.path); err != nil {
			return nil, fmt.Errorf("tls: %s: %w", f.flag, err)
		}
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("tls: certificate %s with key %s: %w (both must be PEM, and the key must belong to the certificate)", certFile, keyFile, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}
