package query

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/parqdb/parqdb/metadata"
)

// JSONRow marshals one hit as a JSON object whose members are Columns in
// order (_distance last): byte slices become strings and non-finite floats
// their text. It is the row form shared by `parqdb search --format json`
// and the HTTP API, so that both print identical bytes.
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

// jsonValue makes a result value JSON-friendly: byte slices as strings,
// non-finite floats as strings, lists element by element.
func jsonValue(v any) any {
	switch x := v.(type) {
	case []byte:
		return string(x)
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
	}
	return v
}
