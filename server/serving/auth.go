package serving

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"
)

// Token is a shared secret clients present as "Authorization: Bearer T"
// (HTTP and Flight) or as the password of HTTP basic auth (Flight). The
// zero Token accepts every request. A Token never prints its secret.
type Token struct {
	sum [sha256.Size]byte
	set bool
}

// NewToken returns a token for secret, which must not be empty.
func NewToken(secret string) (Token, error) {
	if secret == "" {
		return Token{}, errors.New("token: empty secret")
	}
	return Token{sum: sha256.Sum256([]byte(secret)), set: true}, nil
}

// ReadTokenFile reads a token from the first line of path (surrounding
// white space removed). The file should be readable by its owner only.
func ReadTokenFile(path string) (Token, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Token{}, fmt.Errorf("token file: %w", err)
	}
	line, _, _ := strings.Cut(string(data), "\n")
	t, err := NewToken(strings.TrimSpace(line))
	if err != nil {
		return Token{}, fmt.Errorf("token file %s: %w", path, err)
	}
	return t, nil
}

// Set reports whether a token is required.
func (t Token) Set() bool { return t.set }

// String hides the secret.
func (t Token) String() string {
	if t.set {
		return "Token(set)"
	}
	return "Token(none)"
}

// Check compares secret with the token in constant time (over the SHA-256
// digests, so the time does not depend on either length either). A zero
// Token accepts anything.
func (t Token) Check(secret string) bool {
	if !t.set {
		return true
	}
	sum := sha256.Sum256([]byte(secret))
	return subtle.ConstantTimeCompare(sum[:], t.sum[:]) == 1
}

// CheckAuthorization checks an Authorization header value: "Bearer T", or
// "Basic base64(user:T)" when basic is true (any user name).
func (t Token) CheckAuthorization(header string, basic bool) bool {
	if !t.set {
		return true
	}
	scheme, cred, ok := strings.Cut(header, " ")
	if !ok {
		return false
	}
	cred = strings.TrimSpace(cred)
	switch {
	case strings.EqualFold(scheme, "Bearer"):
		return t.Check(cred)
	case basic && strings.EqualFold(scheme, "Basic"):
		pass, ok := BasicPassword(cred)
		return ok && t.Check(pass)
	}
	return false
}

// IsLoopback reports whether a listen address ("host:port") binds only
// loopback interfaces: an IP in 127.0.0.0/8 or ::1, or a host name (such as
// "localhost") every address of which, as the resolver answers now, is a
// loopback address. An empty host (all interfaces) is not loopback, nor is a
// name that does not resolve.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	addrs, err := lookupIPAddr(ctx, host)
	if err != nil || len(addrs) == 0 {
		return false
	}
	for _, a := range addrs {
		if !a.IP.IsLoopback() {
			return false
		}
	}
	return true
}

// lookupIPAddr resolves a listen host name; tests replace it.
var lookupIPAddr = net.DefaultResolver.LookupIPAddr

// CheckListen enforces the security rule: listening on a non-loopback
// address requires a token.
func CheckListen(addr string, t Token) error {
	if !IsLoopback(addr) && !t.Set() {
		return fmt.Errorf("listen %s: not a loopback address, so a token is required (--token-file)", addr)
	}
	return nil
}

// BasicPassword returns the password of HTTP basic credentials
// (base64 of "user:password", padded or not).
func BasicPassword(cred string) (string, bool) {
	raw, err := base64.StdEncoding.DecodeString(cred)
	if err != nil {
		if raw, err = base64.RawStdEncoding.DecodeString(cred); err != nil {
			return "", false
		}
	}
	_, pass, ok := strings.Cut(string(raw), ":")
	return pass, ok
}
