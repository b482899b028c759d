package metadata

import (
	"strconv"
	"strings"
)

// JSON paths in Problems use this notation: member names joined with '.',
// list elements as "[i]" (zero-based), e.g. "snapshots[1].parameters.nlist".
// A member name that is empty or holds a byte other than ASCII letters,
// digits, '_' and '-' is written as a quoted JSON string in brackets,
// e.g. `properties["a.b"]`, so that every path is unambiguous.

// member returns the path of member name inside the object at path.
func member(path, name string) string {
	if !plainName(name) {
		// Bytes that are not UTF-8 (possible only in Go-built values)
		// show as U+FFFD so that the path itself is valid text.
		return path + "[" + string(appendQuoted(nil, strings.ToValidUTF8(name, "\uFFFD"))) + "]"
	}
	if path == "" {
		return name
	}
	return path + "." + name
}

// index returns the path of element i of the list at path.
func index(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}

func plainName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}
