package serving

import (
	"context"
	"errors"
	"net"
	"testing"
)

// TestIsLoopbackResolvesNames checks that a host name counts as loopback
// only when every address it resolves to is one: a name that an /etc/hosts
// entry or DNS points at a public interface must not open the server without
// a token.
func TestIsLoopbackResolvesNames(t *testing.T) {
	hosts := map[string][]string{
		"localhost":  {"127.0.0.1", "::1"},
		"debian-box": {"127.0.1.1"},
		"evil":       {"10.0.0.7"},
		"mixed":      {"127.0.0.1", "192.168.1.4"},
		"empty":      {},
	}
	old := lookupIPAddr
	defer func() { lookupIPAddr = old }()
	lookupIPAddr = func(_ context.Context, host string) ([]net.IPAddr, error) {
		ips, ok := hosts[host]
		if !ok {
			return nil, errors.New("no such host")
		}
		var out []net.IPAddr
		for _, s := range ips {
			out = append(out, net.IPAddr{IP: net.ParseIP(s)})
		}
		return out, nil
	}
	for _, tc := range []struct {
		addr string
		want bool
	}{
		{"localhost:7878", true},
		{"debian-box:7878", true},
		{"evil:7878", false},
		{"mixed:7878", false},
		{"empty:7878", false},
		{"unknown:7878", false},
		{"127.0.0.1:7878", true},
		{"[::1]:7878", true},
		{":7878", false},
		{"localhost", false}, // no port: not a listen address
	} {
		if got := IsLoopback(tc.addr); got != tc.want {
			t.Errorf("IsLoopback(%q) = %v, want %v", tc.addr, got, tc.want)
		}
	}
	// A hostile hosts file that points "localhost" elsewhere.
	hosts["localhost"] = []string{"10.0.0.7"}
	if IsLoopback("localhost:7878") {
		t.Error(`IsLoopback("localhost:7878") = true with localhost resolving to 10.0.0.7`)
	}
}
