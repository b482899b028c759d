package server

import (
	"bytes"
	"errors"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/parqdb/parqdb/query/rowjson"
	"github.com/parqdb/parqdb/server/serving"
)

// checkMembers holds a request body to the same rule as metadata files:
// every object member name is given once, at any depth, and the body's
// top-level names are exactly (case included) the JSON names of the
// fields of *v. encoding/json alone would let the last of two equal
// names win and match names case-insensitively ("K" as "k").
//
// A member whose field is a slice of numbers (at any depth: vector,
// vectors) holds no null element: encoding/json would decode it as 0.
//
// Syntax errors are left to the decoder, which reports them with their
// offset; checkMembers returns nil for them.
func checkMembers(body []byte, v any) *serving.Error {
	d := memberDecoders.Get().(*memberDecoder)
	defer func() {
		d.r.Reset(nil)
		d.dec.Reset(&d.r)
		memberDecoders.Put(d)
	}()
	d.r.Reset(body)
	d.dec.Reset(&d.r)
	if _, err := d.dec.ReadValue(); err != nil {
		var se *jsontext.SyntacticError
		if errors.As(err, &se) && errors.Is(err, jsontext.ErrDuplicateName) {
			return serving.Errorf(http.StatusBadRequest, serving.CodeInvalidArgument,
				"field %s is given more than once: give each field once", pointerPath(se.JSONPointer))
		}
		return nil
	}
	t := reflect.TypeOf(v)
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil
	}
	names := jsonNames(t.Elem())
	d.r.Reset(body)
	d.dec.Reset(&d.r)
	dec := d.dec
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil // not an object: the decoder says so
	}
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil
		}
		name := tok.String()
		numbers, ok := names[name]
		if !ok {
			for n := range names {
				if strings.EqualFold(n, name) {
					return serving.Errorf(http.StatusBadRequest, serving.CodeInvalidArgument,
						"unknown field %q: field names are case-sensitive; did you mean %q?", name, n)
				}
			}
			return serving.Errorf(http.StatusBadRequest, serving.CodeInvalidArgument, "unknown field %q", name)
		}
		if !numbers {
			if err := dec.SkipValue(); err != nil {
				return nil
			}
			continue
		}
		val, err := dec.ReadValue()
		if err != nil {
			return nil
		}
		if p := rowjson.NullElement(val); p != nil {
			return serving.Errorf(http.StatusBadRequest, serving.CodeInvalidArgument,
				"%s%s is null: a vector needs a number in every element", name, rowjson.ElementPath(p))
		}
	}
	return nil
}

// memberDecoder is a reusable decoder over a body (checkMembers runs on
// every request).
type memberDecoder struct {
	r   bytes.Reader
	dec *jsontext.Decoder
}

var memberDecoders = sync.Pool{New: func() any {
	d := &memberDecoder{}
	d.dec = jsontext.NewDecoder(&d.r)
	return d
}}

// namesByType caches jsonNames by struct type: the names never change.
var namesByType sync.Map // reflect.Type → map[string]bool (read-only)

// jsonNames returns the JSON member names of struct type t's exported
// fields, as encoding/json names them, each mapped to whether its field
// is a slice of numbers (numberSlice). The map is shared: do not change
// it.
func jsonNames(t reflect.Type) map[string]bool {
	if m, ok := namesByType.Load(t); ok {
		return m.(map[string]bool)
	}
	m, _ := namesByType.LoadOrStore(t, fieldNames(t))
	return m.(map[string]bool)
}

func fieldNames(t reflect.Type) map[string]bool {
	names := map[string]bool{}
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		names[name] = numberSlice(f.Type)
	}
	return names
}

// numberSlice reports whether t is a slice (of slices …) of numbers.
func numberSlice(t reflect.Type) bool {
	if t.Kind() != reflect.Slice {
		return false
	}
	for t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// pointerPath writes a JSON pointer as the request's field path:
// /key/0/base64 as key[0].base64.
func pointerPath(p jsontext.Pointer) string {
	var b strings.Builder
	for tok := range p.Tokens() {
		if _, err := strconv.Atoi(tok); err == nil && b.Len() > 0 {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(strconv.Quote(tok)[1 : len(strconv.Quote(tok))-1])
	}
	if b.Len() == 0 {
		return "(the body)"
	}
	return strconv.Quote(b.String())
}
