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
	tr := treeReader{dec: jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true)), ps: ps}
	root, ok := tr.value("")
	if !ok {
		return nil
	}
	end := tr.dec.InputOffset()
	if _, err := tr.dec.ReadToken(); !errors.Is(err, io.EOF) {
		ps.add("", fmt.Sprintf("trailing data after the JSON value that ends at byte offset %d", end))
		return nil
	}
	return root
}

type treeReader struct {
	dec *jsontext.Decoder
	ps  *problems
}

func (t *treeReader) syntax(path string, err error) {
	if errors.Is(err, io.EOF) && path == "" {
		t.ps.add("", "empty document")
		return
	}
	msg := strings.TrimPrefix(err.Error(), "jsontext: ")
	t.ps.add(path, "JSON syntax error: "+msg)
}

func (t *treeReader) value(path string) (*node, bool) {
	tok, err := t.dec.ReadToken()
	if err != nil {
		t.syntax(path, err)
		return nil, false
	}
	switch k := tok.Kind(); k {
	case '{':
		n := &node{kind: k}
		seen := make(map[string]bool)
		for t.dec.PeekKind() != '}' {
			nameTok, err := t.dec.ReadToken()
			if err != nil {
				t.syntax(path, err)
				return nil, false
			}
			name := nameTok.String()
			p := member(path, name)
			v, ok := t.value(p)
			if !ok {
				return nil, false
			}
			if seen[name] {
				t.ps.add(p, "duplicate key")
				continue
			}
			seen[name] = true
			n.members = append(n.members, nodeMember{name: name, val: v})
		}
		if _, err := t.dec.ReadToken(); err != nil {
			t.syntax(path, err)
			return nil, false
		}
		return n, true
	case '[':
		n := &node{kind: k}
		for t.dec.PeekKind() != ']' {
			v, ok := t.value(index(path, len(n.elems)))
			if !ok {
				return nil, false
			}
			n.elems = append(n.elems, v)
		}
		if _, err := t.dec.ReadToken(); err != nil {
			t.syntax(path, err)
			return nil, false
		}
		return n, true
	case '"', '0':
		return &node{kind: k, text: tok.String()}, true
	default: // 't', 'f', 'n'
		return &node{kind: k}, true
	}
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
