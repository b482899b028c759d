package metadata

import "strconv"

// JSON paths in Problems use this notation: member names joined with '.',
// list elements as "[i]" (zero-based), e.g. "snapshots[1].parameters.nlist".
// A member name that is empty or holds a byte other than ASCII letters,
// digits, '_' and '-' is written as a quoted JSON string in brackets,
// e.g. `properties["a.b"]`, so that every path is unambiguous.

// member returns the path of member name inside the object at path.
func member(path, name string) string {
	if !plainName(name) {
		return path + "[" + string(appendQuoted(nil, name)) + "]"
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

// under reports whether path is p or lies inside the value at p.
func under(path, p string) bool {
	if p == "" {
		return true
	}
	if len(path) < len(p) || path[:len(p)] != p {
		return false
	}
	return len(path) == len(p) || path[len(p)] == '.' || path[len(p)] == '['
}
