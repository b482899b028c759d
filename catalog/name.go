package catalog

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// MaxNameLen is the longest index name, in bytes.
const MaxNameLen = 128

// CheckName reports whether name is a valid index name: 1 to MaxNameLen
// characters from [A-Za-z0-9_.-], not starting with '.' or '-'. Names are
// case-sensitive. The rules keep a name usable unchanged as a file-name
// segment, an SQL value and a command-line argument. The error wraps
// ErrInvalidName and says which rule the name breaks.
func CheckName(name string) error {
	bad := func(rule string) error {
		return fmt.Errorf("%w %s: %s (allowed: 1-%d characters from A-Z a-z 0-9 _ . -, not starting with '.' or '-')",
			ErrInvalidName, strconv.Quote(name), rule, MaxNameLen)
	}
	switch {
	case name == "":
		return bad("empty")
	case len(name) > MaxNameLen:
		return bad(fmt.Sprintf("%d bytes long", len(name)))
	case name[0] == '.' || name[0] == '-':
		return bad(fmt.Sprintf("starts with %q", name[0]))
	}
	for i := 0; i < len(name); i++ {
		if !nameByte(name[i]) {
			return bad(describeByte(name, i))
		}
	}
	return nil
}

// describeByte names the byte at i of name for an error: printable ASCII
// as a quoted character, anything else in hex, with the character it
// starts when it begins a valid UTF-8 sequence (so "Ä" reads
// "byte 0 is 0xC3 (the first byte of 'Ä')", not the mojibake 'Ã').
func describeByte(name string, i int) string {
	c := name[i]
	if c >= 0x20 && c < 0x7f {
		return fmt.Sprintf("byte %d is %q", i, c)
	}
	if r, n := utf8.DecodeRuneInString(name[i:]); r != utf8.RuneError && n > 1 {
		return fmt.Sprintf("byte %d is 0x%02X (the first byte of %s, U+%04X)", i, c, strconv.QuoteRune(r), r)
	}
	return fmt.Sprintf("byte %d is 0x%02X", i, c)
}

func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
}
