package query

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/parqdb/parqdb/metadata"
)

// JSONRow marshals one hit as a JSON object whose members are Columns in
// order (_distance last), losslessly: text that is valid UTF-8 becomes a
// JSON string; binary values (BYTE_ARRAY or FIXED_LEN_BYTE_ARRAY without a
// string annotation) and text that is not valid UTF-8 become
// {"base64": "<standard base64 of the bytes>"} (see BinaryJSON), which
// ParseKey takes back; non-finite floats become their text. It is the row
// form shared by `parqdb search --format json` and the HTTP API, so that
// both print identical bytes.
type JSONRow struct {
	Columns []string
	Hit     *Hit
}

// MarshalJSON implements json.Marshaler.
func (r JSONRow) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, c := range r.Columns {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(c)
		b.Write(k)
		b.WriteByte(':')
		var v any
		if c == metadata.ReservedField {
			v = r.Hit.Distance
		} else {
			v = jsonValue(r.Hit.Row[c])
		}
		enc, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		b.Write(enc)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

// JSONRows returns the rows of r in JSONRow form.
func (r *Result) JSONRows() []JSONRow {
	rows := make([]JSONRow, len(r.Hits))
	for i := range r.Hits {
		rows[i] = JSONRow{r.Columns, &r.Hits[i]}
	}
	return rows
}

// BinaryJSON is the JSON form of bytes that are binary or not valid
// UTF-8: {"base64": "<standard base64, with padding>"}. A JSON string
// cannot carry them (encoders replace invalid UTF-8 with U+FFFD), so this
// form keeps every byte, and ParseKey (and the HTTP API's "key") accept
// it back as a key value.
type BinaryJSON struct {
	Base64 string `json:"base64"`
}

// NewBinaryJSON returns the JSON form of b.
func NewBinaryJSON(b []byte) BinaryJSON {
	return BinaryJSON{Base64: base64.StdEncoding.EncodeToString(b)}
}

// ParseBinaryJSON reads text as the BinaryJSON form. ok is false when
// text does not start as that form (a JSON object whose first member is
// "base64"): it is then an ordinary key text, so a string key such as
// "{x}" is still taken as written. A text that starts as the form but is
// not exactly {"base64": "<valid standard base64>"} is an error.
func ParseBinaryJSON(text string) (b []byte, ok bool, err error) {
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

// jsonValue makes a result value JSON-friendly and lossless: binary
// values and non-UTF-8 text as BinaryJSON, non-finite floats as strings,
// lists element by element and groups member by member.
func jsonValue(v any) any {
	switch x := v.(type) {
	case []byte:
		return NewBinaryJSON(x)
	case string:
		if !utf8.ValidString(x) {
			return NewBinaryJSON([]byte(x))
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
			out[i] = jsonValue(x[i])
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonValue(e)
		}
		return out
	}
	return v
}
