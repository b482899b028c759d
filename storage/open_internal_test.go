package storage

import (
	"strings"
	"testing"
)

func TestSplitScheme(t *testing.T) {
	tests := []struct {
		in, scheme string
		ok         bool
	}{
		{"s3://b/p", "s3", true},
		{"file:///x", "file", true},
		{"file:/x", "file", true},
		{"FILE:x", "FILE", true},
		{"gs://b", "gs", true},
		{"s3+x.y-z://b", "s3+x.y-z", true},
		{"C:\\x", "", false},
		{"c:/x", "", false},
		{"a:b", "", false},
		{"rel/a:b", "", false},
		{"/abs/x://y", "", false},
		{"1s://x", "", false},
		{"://x", "", false},
		{"plain", "", false},
	}
	for _, tc := range tests {
		scheme, _, ok := splitScheme(tc.in)
		if scheme != tc.scheme || ok != tc.ok {
			t.Errorf("splitScheme(%q) = %q, %v; want %q, %v", tc.in, scheme, ok, tc.scheme, tc.ok)
		}
	}
}

func TestRedactURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"s3://k:s@b/p", "s3://REDACTED@b/p"},
		{"s3://b/p@x", "s3://b/p@x"},
		{"https://u:p@h:1/x?y@z", "https://REDACTED@h:1/x?y@z"},
		{"/local/a@b", "/local/a@b"},
		{"s3://b", "s3://b"},
	}
	for _, tc := range tests {
		if got := redactURL(tc.in); got != tc.want {
			t.Errorf("redactURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzURL checks that splitScheme only splits and that redactURL removes
// the user information of any URL that has some.
func FuzzURL(f *testing.F) {
	for _, s := range []string{"s3://k:s@b/p", "file:///x", "C:\\x", "a:b", "https://u:p@h/x?y@z", "s3://b/p@x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		scheme, rest, ok := splitScheme(s)
		if ok && scheme+":"+rest != s {
			t.Fatalf("splitScheme(%q) = %q, %q", s, scheme, rest)
		}
		red := redactURL(s)
		if !ok || !strings.HasPrefix(rest, "//") {
			if red != s {
				t.Fatalf("redactURL changed a non-URL %q to %q", s, red)
			}
			return
		}
		auth := rest[2:]
		if i := strings.IndexAny(auth, "/?#"); i >= 0 {
			auth = auth[:i]
		}
		if strings.LastIndexByte(auth, '@') >= 0 {
			// The user information, all of it, is replaced; the same bytes
			// may still appear in the host or path ("A0://p@/p@").
			rauth := strings.TrimPrefix(red, scheme+"://")
			if i := strings.IndexAny(rauth, "/?#"); i >= 0 {
				rauth = rauth[:i]
			}
			if at := strings.LastIndexByte(rauth, '@'); at < 0 || rauth[:at] != "REDACTED" {
				t.Fatalf("redactURL(%q) = %q: user information not replaced by REDACTED", s, red)
			}
		}
	})
}
