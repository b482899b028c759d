package metadata

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// node is one JSON value of a parsed document. The tree keeps what the
// strict decoder needs: kinds (to name wrong types and null), number
// literals exactly as written (so that 1.0 and 1e3 are refused as integers
// and int64 values survive exactly) and member order.
type node struct {
	kind    jsontext.Kind // '{', '[', '"', '0', 't', 'f' or 'n'
	text    string        // unescaped string value, or number literal
	members []nodeMember  // objects, in document order, duplicates dropped
	elems   []*node       // arrays
}

type nodeMember struct {
	name string
	val  *node
}

var bom = []byte{0xef, 0xbb, 0xbf}

// parseTree reads one RFC 8259 JSON document. Syntax errors, a byte-order
// mark, invalid UTF-8, an empty document and trailing data are fatal (nil
// result); duplicate keys, at any depth, are each reported and the first
// occurrence is kept so that decoding can go on and find more problems.
func parseTree(data []byte, ps *problems) *node {
	if bytes.HasPrefix(data, bom) {
		ps.add("", "document starts with a byte-order mark (U+FEFF); RFC 8259 JSON text must not")
		return nil
	}
	if !utf8.Valid(data) {
		off := 0
		for off < len(data) {
			r, size := utf8.DecodeRune(data[off:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			off += size
		}
		ps.add("", fmt.Sprintf("invalid UTF-8 at byte offset %d", off))
		return nil
	}
	tr := treeReader{
		dec:  jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true)),
		data: data,
		ps:   ps,
		strs: make(map[string]string),
	}
	n, ok := tr.value()
	if !ok {
		return nil
	}
	end := tr.dec.InputOffset()
	if _, err := tr.dec.ReadToken(); !errors.Is(err, io.EOF) {
		ps.add("", fmt.Sprintf("trailing data after the JSON value that ends at byte offset %d", end))
		return nil
	}
	return n
}

// treeReader builds the tree of one document. To keep a large document
// cheap to read it allocates nodes and member and element lists in slabs,
// and interns strings (names and values repeat from snapshot to snapshot),
// copying each distinct one out of data once.
type treeReader struct {
	dec  *jsontext.Decoder
	data []byte
	ps   *problems
	strs map[string]string

	nodes  []node       // slab the next nodes are taken from
	mslab  []nodeMember // slab of member lists
	eslab  []*node      // slab of element lists
	mstack []nodeMember // members of the objects being read, innermost last
	estack []*node      // elements of the lists being read, innermost last
	path   []jpath      // steps to the value being read (parents unused)
}

func (t *treeReader) syntax(err error) {
	if errors.Is(err, io.EOF) && len(t.path) == 0 {
		t.ps.add("", "empty document")
		return
	}
	msg := strings.TrimPrefix(err.Error(), "jsontext: ")
	t.ps.add(formatSteps(t.path), "JSON syntax error: "+msg)
}

// value reads the value at path t.path.
func (t *treeReader) value() (*node, bool) {
	prev := t.dec.InputOffset()
	tok, err := t.dec.ReadToken()
	if err != nil {
		t.syntax(err)
		return nil, false
	}
	switch k := tok.Kind(); k {
	case '{':
		n := t.node(k)
		base := len(t.mstack)
		var seen map[string]bool // for large objects only
		for t.dec.PeekKind() != '}' {
			prev := t.dec.InputOffset()
			nameTok, err := t.dec.ReadToken()
			if err != nil {
				t.syntax(err)
				return nil, false
			}
			name := t.text(nameTok, prev)
			t.path = append(t.path, jpath{name: name, kind: pathMember})
			v, ok := t.value()
			if !ok {
				return nil, false
			}
			dup := t.duplicate(base, name, &seen)
			if dup {
				t.ps.add(formatSteps(t.path), "duplicate key")
			}
			t.path = t.path[:len(t.path)-1]
			if !dup {
				t.mstack = append(t.mstack, nodeMember{name: name, val: v})
			}
		}
		if _, err := t.dec.ReadToken(); err != nil {
			t.syntax(err)
			return nil, false
		}
		n.members = t.members(base)
		return n, true
	case '[':
		n := t.node(k)
		base := len(t.estack)
		for t.dec.PeekKind() != ']' {
			t.path = append(t.path, jpath{i: len(t.estack) - base, kind: pathIndex})
			v, ok := t.value()
			if !ok {
				return nil, false
			}
			t.path = t.path[:len(t.path)-1]
			t.estack = append(t.estack, v)
		}
		if _, err := t.dec.ReadToken(); err != nil {
			t.syntax(err)
			return nil, false
		}
		n.elems = t.elems(base)
		return n, true
	case '"', '0':
		n := t.node(k)
		n.text = t.text(tok, prev)
		return n, true
	default: // 't', 'f', 'n'
		return t.node(k), true
	}
}

// duplicate reports whether the object whose members start at
// mstack[base] already has a member name. Small objects are searched;
// from 16 members on, seen indexes them.
func (t *treeReader) duplicate(base int, name string, seen *map[string]bool) bool {
	ms := t.mstack[base:]
	if *seen == nil && len(ms) < 16 {
		for i := range ms {
			if ms[i].name == name {
				return true
			}
		}
		return false
	}
	if *seen == nil {
		*seen = make(map[string]bool, 2*len(ms))
		for i := range ms {
			(*seen)[ms[i].name] = true
		}
	}
	if (*seen)[name] {
		return true
	}
	(*seen)[name] = true
	return false
}

// text returns the text of tok, a string (unescaped) or a number (as
// written), which was read after input offset prev. A string without
// escapes and every number are taken from data directly and interned.
func (t *treeReader) text(tok jsontext.Token, prev int64) string {
	end := int(t.dec.InputOffset())
	start := int(prev)
	for start < end {
		switch t.data[start] {
		case ' ', '\t', '\n', '\r', ':', ',':
			start++
			continue
		}
		break
	}
	raw := t.data[start:end]
	if tok.Kind() == '"' {
		if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' || bytes.IndexByte(raw, '\\') >= 0 {
			return t.intern(tok.String())
		}
		raw = raw[1 : len(raw)-1]
	} else if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return t.intern(tok.String())
	}
	if s, ok := t.strs[string(raw)]; ok {
		return s
	}
	s := string(raw)
	t.strs[s] = s
	return s
}

func (t *treeReader) intern(s string) string {
	if c, ok := t.strs[s]; ok {
		return c
	}
	t.strs[s] = s
	return s
}

func (t *treeReader) node(k jsontext.Kind) *node {
	if len(t.nodes) == cap(t.nodes) {
		t.nodes = make([]node, 0, min(max(64, 2*cap(t.nodes)), 4096))
	}
	t.nodes = append(t.nodes, node{kind: k})
	return &t.nodes[len(t.nodes)-1]
}

// members moves the members of the object just read, mstack[base:], into
// the slab and returns them.
func (t *treeReader) members(base int) []nodeMember {
	ms := t.mstack[base:]
	t.mstack = t.mstack[:base]
	if len(ms) == 0 {
		return nil
	}
	if cap(t.mslab)-len(t.mslab) < len(ms) {
		t.mslab = make([]nodeMember, 0, max(len(ms), min(max(64, 2*cap(t.mslab)), 4096)))
	}
	i := len(t.mslab)
	t.mslab = append(t.mslab, ms...)
	clear(ms) // drop the stack's references
	return t.mslab[i:len(t.mslab):len(t.mslab)]
}

// elems is members for the elements of a list, estack[base:].
func (t *treeReader) elems(base int) []*node {
	es := t.estack[base:]
	t.estack = t.estack[:base]
	if len(es) == 0 {
		return nil
	}
	if cap(t.eslab)-len(t.eslab) < len(es) {
		t.eslab = make([]*node, 0, max(len(es), min(max(64, 2*cap(t.eslab)), 4096)))
	}
	i := len(t.eslab)
	t.eslab = append(t.eslab, es...)
	clear(es)
	return t.eslab[i:len(t.eslab):len(t.eslab)]
}

// describe names a value's JSON type for "expected X, got Y" messages.
func describe(n *node) string {
	switch n.kind {
	case '{':
		return "an object"
	case '[':
		return "a list"
	case '"':
		return "a string"
	case '0':
		return "the number " + n.text
	case 't', 'f':
		return "a boolean"
	default:
		return "null"
	}
}
