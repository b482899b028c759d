// Package rowjson is the JSON form that `parqdb search --format json` and
// the HTTP API share, so that both print identical bytes: search hits as
// JSON objects (Row), binary values and non-UTF-8 text in the lossless
// {"base64": …} form (Binary, which keys are read back from too), and the
// check every reader of a JSON vector makes for null elements
// (NullElement).
package rowjson

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/parqdb/parqdb/metadata"
)

// Row marshals one search hit as a JSON object whose members are Columns
// in order (_distance, metadata.ReservedField, last), losslessly: text
// that is valid UTF-8 becomes a JSON string; binary values (BYTE_ARRAY or
// FIXED_LEN_BYTE_ARRAY without a string annotation) and text that is not
// valid UTF-8 become {"base64": "<standard base64 of the bytes>"} (see
// Binary), which query.ParseKey takes back; non-finite floats become their
// text. Values are the hit's joined columns, Distance its _distance; Key,
// the hit's encoded source key, is not written (it names the row, for a
// cache of its bytes). Row and the slices and map it holds are read only.
type Row struct {
	Columns  []string
	Key      []byte
	Values   map[string]any
	Distance float32
}

// MarshalJSON implements json.Marshaler.
func (r Row) MarshalJSON() ([]byte, error) {
	return r.AppendJSON(make([]byte, 0, 64*len(r.Columns)))
}

// AppendJSON appends the row's JSON (MarshalJSON's bytes) to b. Numbers,
// booleans, ASCII text and lists of them are written directly (the HTTP
// search spent half its time in encoding/json's reflection on float
// lists); everything else goes through encoding/json, so the bytes are
// exactly those of json.Marshal (TestAppendJSONEqualsMarshal).
func (r Row) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, '{')
	for i, c := range r.Columns {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendString(b, c, true)
		b = append(b, ':')
		var err error
		if b, err = appendValue(b, r.Value(c)); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// Value returns the row's value of column name: Distance for
// metadata.ReservedField, else Values[name] (nil when absent).
func (r Row) Value(name string) any {
	if name == metadata.ReservedField {
		return r.Distance
	}
	return r.Values[name]
}

// appendValue appends the JSON of value(v) as json.Marshal
// writes it.
func appendValue(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int8:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int16:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int32:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case uint8:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint16:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint32:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint64:
		return strconv.AppendUint(b, x, 10), nil
	case float32:
		if !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0) {
			return appendFloat(b, float64(x), 32), nil
		}
	case float64:
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			return appendFloat(b, x, 64), nil
		}
	case string:
		if utf8.ValidString(x) {
			return AppendString(b, x, true), nil
		}
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendValue(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	}
	enc, err := json.Marshal(value(v))
	if err != nil {
		return nil, err
	}
	return append(b, enc...), nil
}

// appendFloat is encoding/json's float encoding: shortest
// round-trip digits, exponent form below 1e-6 and from 1e21, and e-07
// written e-7.
func appendFloat(b []byte, f float64, bits int) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21)) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// AppendString appends s as encoding/json quotes it: with its HTML
// escapes (<, >, & as \u003c…) as json.Marshal writes them when
// escapeHTML, else as an Encoder with SetEscapeHTML(false) does. ASCII
// text with nothing to escape is appended directly, anything else goes
// through encoding/json.
func AppendString(b []byte, s string, escapeHTML bool) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || escapeHTML && (c == '<' || c == '>' || c == '&') {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(escapeHTML)
			_ = enc.Encode(s) // a string always encodes
			return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// Binary is the JSON form of bytes that are binary or not valid UTF-8:
// {"base64": "<standard base64, with padding>"}. A JSON string cannot
// carry them (encoders replace invalid UTF-8 with U+FFFD), so this form
// keeps every byte, and query.ParseKey (and the HTTP API's "key") accept
// it back as a key value.
type Binary struct {
	Base64 string `json:"base64"`
}

// NewBinary returns the JSON form of b.
func NewBinary(b []byte) Binary {
	return Binary{Base64: base64.StdEncoding.EncodeToString(b)}
}

// ParseBinary reads text as the Binary form. ok is false when
// text does not start as that form (a JSON object whose first member is
// "base64"): it is then an ordinary key text, so a string key such as
// "{x}" is still taken as written. A text that starts as the form but is
// not exactly {"base64": "<valid standard base64>"} is an error.
func ParseBinary(text string) (b []byte, ok bool, err error) {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "{") {
		return nil, false, nil
	}
	dec := jsontext.NewDecoder(strings.NewReader(t))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, false, nil
	}
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '"' || tok.String() != "base64" {
		return nil, false, nil
	}
	bad := fmt.Errorf(`%q is not {"base64": "<standard base64>"}`, text)
	val, err := dec.ReadToken()
	if err != nil || val.Kind() != '"' {
		return nil, true, bad
	}
	enc := val.String() // a Token is void after the next read
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '}' {
		return nil, true, bad
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, true, bad
	}
	if b, err = base64.StdEncoding.DecodeString(enc); err != nil {
		return nil, true, fmt.Errorf("%q: %q is not standard base64 with padding: %v", text, enc, err)
	}
	return b, true, nil
}

// value makes a result value JSON-friendly and lossless: binary
// values and non-UTF-8 text as Binary, non-finite floats as strings,
// lists element by element and groups member by member.
func value(v any) any {
	switch x := v.(type) {
	case []byte:
		return NewBinary(x)
	case string:
		if !utf8.ValidString(x) {
			return NewBinary([]byte(x))
		}
	case float32:
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Sprint(x)
		}
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Sprint(x)
		}
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = value(x[i])
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = value(e)
		}
		return out
	}
	return v
}

// NullElement returns the index path of the first null inside text, a
// JSON array of numbers or of arrays of numbers ([1, 3] is text[1][3]),
// or nil when it holds none; text that is not valid JSON gives nil too,
// for the decoder to report. encoding/json decodes null into a number as
// no change, so that [null, 1] would read as [0, 1]: every reader of a
// JSON vector (the HTTP API, --vector, .jsonl query files, SQL's
// query_vector) asks it first and refuses the vector, naming the place.
func NullElement(text []byte) []int {
	dec := jsontext.NewDecoder(bytes.NewReader(text))
next:
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil
		}
		if tok.Kind() != 'n' {
			continue
		}
		var path []int
		for t := range dec.StackPointer().Tokens() {
			i, err := strconv.Atoi(t)
			if err != nil {
				continue next // a null member of an object, not an element
			}
			path = append(path, i)
		}
		if len(path) > 0 {
			return path
		}
	}
}

// ElementPath writes an index path as Go and JSON index it: [1][3].
func ElementPath(path []int) string {
	var b strings.Builder
	for _, i := range path {
		b.WriteString("[" + strconv.Itoa(i) + "]")
	}
	return b.String()
}
