package catalog

import (
	"fmt"
	"strconv"
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
			return bad(fmt.Sprintf("byte %d is %q", i, name[i]))
		}
	}
	return nil
}

func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
}
