package filter

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors, tested with errors.Is.
var (
	// ErrSyntax means the text is not a predicate of the grammar.
	ErrSyntax = errors.New("syntax error")
	// ErrUnknownColumn means the predicate names a column the source does
	// not have.
	ErrUnknownColumn = errors.New("unknown column")
	// ErrType means a column's type cannot be filtered on, or a literal's
	// type does not match its column's.
	ErrType = errors.New("type mismatch")
)

// Error is a predicate error at a position of the text.
type Error struct {
	Text string // the whole predicate
	Pos  int    // 1-based character (rune) position of the offending token
	Msg  string // what is wrong and, where one exists, the fix
	Err  error  // one of the sentinels
}

func (e *Error) Error() string {
	return fmt.Sprintf("filter %q: %v at position %d%s: %s", e.Text, e.Err, e.Pos, e.near(), e.Msg)
}

// near quotes the text from the error's position, shortened.
func (e *Error) near() string {
	r := []rune(e.Text)
	if e.Pos < 1 || e.Pos > len(r) {
		return " (end of text)"
	}
	rest := string(r[e.Pos-1:])
	if len([]rune(rest)) > 20 {
		rest = string([]rune(rest)[:20]) + "…"
	}
	return " (near " + strings.TrimSpace(fmt.Sprintf("%q", rest)) + ")"
}

func (e *Error) Unwrap() error { return e.Err }

// errAt builds an *Error at byte offset off of text.
func errAt(text string, off int, sentinel error, format string, args ...any) *Error {
	if off > len(text) {
		off = len(text)
	}
	return &Error{Text: text, Pos: len([]rune(text[:off])) + 1, Msg: fmt.Sprintf(format, args...), Err: sentinel}
}
