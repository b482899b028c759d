// Package location checks and joins warehouse-relative locations
// (clarification 9). Every location read from metadata passes Check before
// any I/O, so that no metadata file can make ParqDB read or write outside
// its warehouse.
package location

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ErrInvalid is wrapped by every error Check returns.
var ErrInvalid = errors.New("invalid warehouse-relative location")

// Error describes why a location was refused.
type Error struct {
	Location string
	Rule     string
}

func (e *Error) Error() string {
	return fmt.Sprintf("location %q: %s: %s", e.Location, ErrInvalid, e.Rule)
}

func (e *Error) Unwrap() error { return ErrInvalid }

// MaxLen is the longest location accepted, in bytes.
const MaxLen = 1024

// Check reports whether loc is a valid warehouse-relative location: not
// empty, no scheme, no leading '/', no '.', '..' or empty segment (a single
// trailing '/' marks a folder and is allowed), no backslash, no ':', no NUL
// or other control character (C0, DEL, C1), valid UTF-8, at most MaxLen
// bytes. The error names loc and the rule it breaks.
func Check(loc string) error {
	bad := func(rule string) error { return &Error{Location: loc, Rule: rule} }
	switch {
	case loc == "":
		return bad("empty")
	case len(loc) > MaxLen:
		return bad(fmt.Sprintf("longer than %d bytes", MaxLen))
	case !utf8.ValidString(loc):
		return bad("not valid UTF-8")
	case strings.HasPrefix(loc, "/"):
		return bad("absolute path")
	case strings.ContainsRune(loc, '\\'):
		return bad("contains a backslash")
	case strings.Contains(loc, ":"):
		// A colon allows schemes (s3:, file:) and Windows drive letters.
		return bad("contains ':' (schemes and drive letters are not allowed)")
	}
	for _, r := range loc {
		// C0, DEL and C1 (U+0080–U+009F) control characters.
		if unicode.IsControl(r) {
			return bad("contains a control character")
		}
	}
	body := strings.TrimSuffix(loc, "/")
	for _, seg := range strings.Split(body, "/") {
		switch seg {
		case "":
			return bad("empty path segment")
		case ".", "..":
			return bad(fmt.Sprintf("%q path segment", seg))
		}
	}
	return nil
}

// Join joins a folder location and a relative name with exactly one '/',
// and checks the result.
func Join(dir string, elem ...string) (string, error) {
	parts := make([]string, 0, len(elem)+1)
	parts = append(parts, strings.TrimSuffix(dir, "/"))
	parts = append(parts, elem...)
	loc := strings.Join(parts, "/")
	if err := Check(loc); err != nil {
		return "", err
	}
	return loc, nil
}
