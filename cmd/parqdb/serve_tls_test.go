package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parqdb/parqdb/internal/testcert"
)

// TestServeTLS: with --tls-cert and --tls-key the HTTP API answers over
// HTTPS to a client that trusts the CA, refuses one that does not, and
// does not answer plain HTTP.
func TestServeTLS(t *testing.T) {
	wh := cliIndex(t)
	c := testcert.New(t)
	addr, _ := startServe(t, wh, "--flight", "", "--tls-cert", c.CertFile, "--tls-key", c.KeyFile)
	trusting := &http.Client{Timeout: time.Minute, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: c.Pool}}}
	resp, err := trusting.Get("https://" + addr + "/v1/indexes")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "words") {
		t.Fatalf("https: %d %s", resp.StatusCode, body)
	}
	if resp.TLS == nil {
		t.Fatal("https answer without TLS state")
	}

	other := &http.Client{Timeout: time.Minute, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: x509.NewCertPool()}}}
	_, err = other.Get("https://" + addr + "/healthz")
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) {
		t.Fatalf("client without the CA: %v, want an unknown-authority error", err)
	}

	resp, err = (&http.Client{Timeout: time.Minute}).Get("http://" + addr + "/healthz")
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Fatal("plain HTTP answered 200 on a TLS listener")
		}
	}
}

// TestServeTLSFlagErrors: a missing half of the pair, an unreadable file
// or a key that does not fit the certificate is a usage error naming the
// flag or file; TLS does not lift the token rule.
func TestServeTLSFlagErrors(t *testing.T) {
	c := testcert.New(t)
	missing := filepath.Join(t.TempDir(), "nope.pem")
	other := testcert.New(t)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"cert only", []string{"--tls-cert", c.CertFile}, "--tls-key"},
		{"key only", []string{"--tls-key", c.KeyFile}, "--tls-cert"},
		{"missing cert", []string{"--tls-cert", missing, "--tls-key", c.KeyFile}, missing},
		{"missing key", []string{"--tls-cert", c.CertFile, "--tls-key", missing}, missing},
		{"key of another certificate", []string{"--tls-cert", c.CertFile, "--tls-key", other.KeyFile}, other.KeyFile},
		{"not PEM", []string{"--tls-cert", c.CAFile + ".txt", "--tls-key", c.KeyFile}, c.CAFile + ".txt"},
		{"open listen without token", []string{"--listen", "0.0.0.0:0", "--tls-cert", c.CertFile, "--tls-key", c.KeyFile}, "token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "not PEM" {
				if err := os.WriteFile(c.CAFile+".txt", []byte("not a certificate"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			out, code := runCLI(t, append([]string{"--warehouse", t.TempDir(), "serve", "--flight", ""}, tc.args...)...)
			if code != exitUsage || !strings.Contains(out, tc.want) {
				t.Fatalf("exit %d: %s; want a usage error naming %s", code, out, tc.want)
			}
		})
	}
}
