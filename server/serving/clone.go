package serving

import (
	"bytes"
	"strings"

	"github.com/parqdb/parqdb/query"
)

// CloneResult deep-copies the values of r's rows in place. A result's
// strings and byte slices may share buffers the Parquet reader reuses, so
// a result that outlives the call that made it (the SQL table function
// keeps it across DuckDB callbacks) must own its memory.
func CloneResult(r *query.Result) {
	for i := range r.Hits {
		h := &r.Hits[i]
		h.Key = bytes.Clone(h.Key)
		for k, v := range h.Row {
			h.Row[k] = cloneValue(v)
		}
	}
}

func cloneValue(v any) any {
	switch x := v.(type) {
	case string:
		return strings.Clone(x)
	case []byte:
		return bytes.Clone(x)
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = cloneValue(x[i])
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = cloneValue(e)
		}
		return out
	}
	return v
}
