package server

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"

	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/query"
)

const reflectFloat64 = reflect.Float64

// jsonValue makes a result value JSON-friendly exactly as `parqdb search
// --format json` does: byte slices as strings, non-finite floats as
// strings.
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

// row marshals a hit with its columns in result order, _distance last.
type row struct {
	cols []string
	hit  *query.Hit
}

func (r row) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, c := range r.cols {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(c)
		b.Write(k)
		b.WriteByte(':')
		var v any
		if c == metadata.ReservedField {
			v = r.hit.Distance
		} else {
			v = jsonValue(r.hit.Row[c])
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

// SearchResponse is the answer to a search request.
type SearchResponse struct {
	Index      string   `json:"index"`
	SnapshotID int64    `json:"snapshot_id"`
	Columns    []string `json:"columns"`
	// Results holds one list of rows per query vector, in request order;
	// each row has Columns as members, _distance last.
	Results [][]row     `json:"results"`
	Stats   searchStats `json:"stats"`
}

type searchStats struct {
	Lists      int64 `json:"lists"`
	Candidates int64 `json:"candidates"`
	Refined    int64 `json:"refined"`
	Requests   int64 `json:"requests"`
	BytesRead  int64 `json:"bytes_read"`
}

func newSearchResponse(ix *query.Index, results []*query.Result) *SearchResponse {
	resp := &SearchResponse{Index: ix.Name(), SnapshotID: ix.Snapshot().SnapshotID, Results: make([][]row, len(results))}
	var st query.Stats
	for i, r := range results {
		if i == 0 {
			resp.Columns = r.Columns
		}
		rows := make([]row, len(r.Hits))
		for j := range r.Hits {
			rows[j] = row{r.Columns, &r.Hits[j]}
		}
		resp.Results[i] = rows
		st.Add(r.Stats)
	}
	resp.Stats = searchStats{st.Lists, st.Candidates, st.Refined, st.Requests, st.BytesRead}
	return resp
}
