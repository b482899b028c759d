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

// jpath is a JSON path built lazily: a parent pointer plus one member name
// or list index, formatted in the notation above (exactly as nested member
// and index calls would) only when a problem is reported. Checking a valid
// document therefore builds no path strings. A jpath lives on its
// creator's stack and is passed down; nothing keeps one after the call that
// received it returns (so that it stays off the heap, String copies bytes
// and never returns a name it holds).
type jpath struct {
	parent *jpath // nil: the parent is the document ("")
	name   string // member name, or the formatted path of a literal
	i      int    // list index
	kind   pathKind
}

type pathKind uint8

const (
	pathLiteral pathKind = iota // name is the formatted path; "" is the document
	pathMember
	pathIndex
)

// lit returns the path whose formatted form is s.
func lit(s string) jpath { return jpath{name: s} }

// key returns the path of member name inside the object at p.
func (p *jpath) key(name string) jpath { return jpath{parent: p, name: name, kind: pathMember} }

// at returns the path of element i of the list at p.
func (p *jpath) at(i int) jpath { return jpath{parent: p, i: i, kind: pathIndex} }

// String formats p exactly as the eager member and index calls would.
func (p *jpath) String() string { return string(p.appendTo(nil)) }

// appendTo appends the formatted path. It copies bytes only, never keeps
// p, so that paths stay on their creators' stacks.
func (p *jpath) appendTo(b []byte) []byte {
	if p == nil {
		return b
	}
	start := len(b)
	b = p.parent.appendTo(b)
	return p.appendStep(b, start)
}

// appendStep appends p's own step (ignoring its parent) to b, which holds
// the formatted parent path from b[start:].
func (p *jpath) appendStep(b []byte, start int) []byte {
	switch p.kind {
	case pathMember:
		if !plainName(p.name) {
			b = append(b, '[')
			b = appendQuoted(b, strings.ToValidUTF8(p.name, "\uFFFD"))
			return append(b, ']')
		}
		if len(b) > start {
			b = append(b, '.')
		}
		return append(b, p.name...)
	case pathIndex:
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(p.i), 10)
		return append(b, ']')
	default:
		return append(b, p.name...)
	}
}

// formatSteps formats the path whose steps, from the document down, are
// steps (their parents are ignored).
func formatSteps(steps []jpath) string {
	var b []byte
	for i := range steps {
		b = steps[i].appendStep(b, 0)
	}
	return string(b)
}
