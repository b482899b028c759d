package location

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// Valid locations. Percent-escapes are literal text: ParqDB never decodes a
// location, so "%2e%2e" names a file called "%2e%2e", not a parent folder
// (docs/storage.md).
var validLocations = []string{
	"a",
	"a/b",
	"tables/t1/",
	"tables/t1/data/part-00000.parquet",
	"ü/日本語/🙂",
	"with space/x y",
	"%2e%2e",
	"%2e%2e/%2F/x",
	"...",
	"a/..../b",
	".hidden",
	"a..b/c..",
	"a/.b/",
	"a+b=c&d?e#f",
	"~",
	strings.Repeat("k", MaxLen),
}

// Invalid locations, each with a part of the rule it must report. The
// first group tries to escape the warehouse.
var invalidLocations = []struct {
	name, loc, rule string
}{
	{"absolute", "/etc/passwd", "absolute"},
	{"root", "/", "absolute"},
	{"network path", "//host/share", "absolute"},
	{"parent", "..", `".."`},
	{"parent prefix", "../x", `".."`},
	{"parent inside", "a/../../x", `".."`},
	{"parent at end", "a/..", `".."`},
	{"parent as folder", "a/../", `".."`},
	{"current", ".", `"."`},
	{"current prefix", "./a", `"."`},
	{"current inside", "a/./b", `"."`},
	{"empty segment", "a//b", "empty path segment"},
	{"two trailing slashes", "a//", "empty path segment"},
	{"backslash", "a\\b", "backslash"},
	{"Windows parent", "..\\x", "backslash"},
	{"Windows drive", "C:\\x", "backslash"},
	{"Windows drive slash", "C:/x", "':'"},
	{"drive relative", "c:x", "':'"},
	{"UNC", "\\\\host\\share", "backslash"},
	{"s3 scheme", "s3://bucket/x", "':'"},
	{"file URL", "file:///etc/passwd", "':'"},
	{"opaque file URL", "file:x", "':'"},
	{"http URL", "http://host/x", "':'"},
	{"NUL", "a\x00b", "control"},
	{"newline", "a\nb", "control"},
	{"tab", "a\tb", "control"},
	{"DEL", "a\x7f", "control"},
	{"C1 control", "a\u0085b", "control"},
	{"C1 CSI", "\u009b", "control"},
	{"invalid UTF-8", "a\xffb", "UTF-8"},
	{"overlong dot", "\xc0\xae\xc0\xae/x", "UTF-8"},
	{"empty", "", "empty"},
	{"too long", strings.Repeat("k", MaxLen+1), "longer than"},
}

func TestCheckValid(t *testing.T) {
	for _, loc := range validLocations {
		t.Run(fmt.Sprintf("%.40q", loc), func(t *testing.T) {
			if err := Check(loc); err != nil {
				t.Fatalf("Check(%q) = %v, want nil", loc, err)
			}
		})
	}
}

func TestCheckInvalid(t *testing.T) {
	for _, tc := range invalidLocations {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(tc.loc)
			if err == nil {
				t.Fatalf("Check(%q) = nil, want an error", tc.loc)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v does not wrap ErrInvalid", err)
			}
			var le *Error
			if !errors.As(err, &le) {
				t.Fatalf("error %v is not a *Error", err)
			}
			if le.Location != tc.loc {
				t.Errorf("Error.Location = %q, want %q", le.Location, tc.loc)
			}
			if !strings.Contains(le.Rule, tc.rule) {
				t.Errorf("Error.Rule = %q, want it to mention %q", le.Rule, tc.rule)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("%q", tc.loc)) {
				t.Errorf("message %q does not quote the location", err)
			}
		})
	}
}

func TestJoin(t *testing.T) {
	tests := []struct {
		dir  string
		elem []string
		want string // "" means an error wrapping ErrInvalid
	}{
		{"a", []string{"b"}, "a/b"},
		{"a/", []string{"b"}, "a/b"},
		{"tables/t1/", []string{"data", "part-0.parquet"}, "tables/t1/data/part-0.parquet"},
		{"a", []string{"b/c"}, "a/b/c"},
		{"a", nil, "a"},
		{"a", []string{"b/"}, "a/b/"},
		{"a", []string{".."}, ""},
		{"a", []string{"../b"}, ""},
		{"a", []string{"/b"}, ""},
		{"a", []string{"b", ""}, "a/b/"},
		{"a", []string{"", "b"}, ""},
		{"", []string{"b"}, ""},
		{"/a", []string{"b"}, ""},
		{"a//", []string{"b"}, ""},
		{"a", []string{"s3://x"}, ""},
		{"a", []string{"b\\c"}, ""},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%q+%q", tc.dir, tc.elem), func(t *testing.T) {
			got, err := Join(tc.dir, tc.elem...)
			if tc.want == "" {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("Join = %q, %v; want an error wrapping ErrInvalid", got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Join = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// FuzzCheck checks Check's promises on arbitrary input: a valid location
// stays inside any folder it is joined to and is already clean; an invalid
// one gets an error wrapping ErrInvalid that quotes it. The seeds are the
// tables above plus the corpus in testdata/fuzz/FuzzCheck.
func FuzzCheck(f *testing.F) {
	for _, loc := range validLocations {
		f.Add(loc)
	}
	for _, tc := range invalidLocations {
		f.Add(tc.loc)
	}
	f.Fuzz(func(t *testing.T, loc string) {
		err := Check(loc)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Check(%q) = %v, not wrapping ErrInvalid", loc, err)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("%q", loc)) {
				t.Fatalf("Check(%q): message %q does not quote the location", loc, err)
			}
			return
		}
		if !utf8.ValidString(loc) || len(loc) > MaxLen || strings.ContainsAny(loc, ":\\") {
			t.Fatalf("Check(%q) accepted a bad location", loc)
		}
		if !filepath.IsLocal(loc) {
			t.Fatalf("Check(%q) accepted a location that escapes its folder", loc)
		}
		if body := strings.TrimSuffix(loc, "/"); path.Clean(body) != body {
			t.Fatalf("Check(%q) accepted an unclean location (clean: %q)", loc, path.Clean(body))
		}
		if j, err := Join(loc, "x"); len(strings.TrimSuffix(loc, "/"))+2 <= MaxLen && (err != nil || !strings.HasSuffix(j, "/x")) {
			t.Fatalf("Join(%q, x) = %q, %v", loc, j, err)
		}
	})
}
