package server

import (
	"reflect"
	"slices"
	"strconv"
	"sync/atomic"

	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/query/rowjson"
)

const reflectFloat64 = reflect.Float64

// SearchResponse is the answer to a search request.
type SearchResponse struct {
	Index      string   `json:"index"`
	SnapshotID int64    `json:"snapshot_id"`
	Columns    []string `json:"columns"`
	// Results holds one list of rows per query vector, in request order;
	// each row has Columns as members, _distance last.
	Results [][]rowjson.Row `json:"results"`
	Stats   searchStats     `json:"stats"`

	rows  *rowEncoder      // nil: encode every row
	stale *query.Staleness // the served snapshot's, for the ParqDB-Stale header
}

type searchStats struct {
	Lists      int64 `json:"lists"`
	Candidates int64 `json:"candidates"`
	Refined    int64 `json:"refined"`
	Requests   int64 `json:"requests"`   // postings only (query.Stats.Requests)
	BytesRead  int64 `json:"bytes_read"` // postings only (query.Stats.BytesRead)
	// Filtered search ("where") only: see query.Stats.
	FilterRows      int64 `json:"filter_rows,omitempty"`
	FilterRejected  int64 `json:"filter_rejected,omitempty"`
	FilterExact     int64 `json:"filter_exact_plans,omitempty"`
	FilterLists     int64 `json:"filter_list_plans,omitempty"`
	FilterWidenings int64 `json:"filter_widenings,omitempty"`
	// Exact vectors read for refine or the source encoding, when not zero:
	// the vectors file's ranged reads and bytes, and the rows read from
	// source pages (see query.Stats).
	VectorFileRequests int64 `json:"vectors_file_requests,omitempty"`
	VectorFileBytes    int64 `json:"vectors_file_bytes,omitempty"`
	SourceVectorRows   int64 `json:"source_vector_rows,omitempty"`
}

// newSearchResponse builds the answer; rows (may be nil) caches the
// rows' JSON for encodeResponse, and enc (may be nil) keeps the row
// encoder last made for ix, reused while the column list is the same.
func newSearchResponse(ix *query.Index, results []*query.Result, rows *rowJSON, enc *atomic.Value) *SearchResponse {
	resp := &SearchResponse{Index: ix.Name(), SnapshotID: ix.Snapshot().SnapshotID, Results: make([][]rowjson.Row, len(results))}
	var st query.Stats
	for i, r := range results {
		if i == 0 {
			resp.Columns = r.Columns
		}
		resp.Results[i] = r.JSONRows()
		st.Add(r.Stats)
	}
	var last *rowEncoder
	if enc != nil {
		last, _ = enc.Load().(*rowEncoder)
	}
	if last != nil && last.cache == rows && slices.Equal(last.cols, resp.Columns) {
		resp.rows = last
	} else if resp.rows = newRowEncoder(rows, ix, resp.Columns); enc != nil && resp.rows != nil {
		enc.Store(resp.rows)
	}
	resp.Stats = searchStats{st.Lists, st.Candidates, st.Refined, st.Requests, st.BytesRead,
		st.FilterRows, st.FilterRejected, st.FilterExact, st.FilterLists, st.FilterWidenings,
		st.VectorFileRequests, st.VectorFileBytes, st.SourceVectorRows}
	return resp
}

// appendJSON appends st as encoding/json encodes it (members in field
// order, the omitempty ones only when not zero).
func (st *searchStats) appendJSON(b []byte) []byte {
	member := func(b []byte, name string, v int64, always bool) []byte {
		if v == 0 && !always {
			return b
		}
		if b[len(b)-1] != '{' {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, '"', ':')
		return strconv.AppendInt(b, v, 10)
	}
	b = append(b, '{')
	b = member(b, "lists", st.Lists, true)
	b = member(b, "candidates", st.Candidates, true)
	b = member(b, "refined", st.Refined, true)
	b = member(b, "requests", st.Requests, true)
	b = member(b, "bytes_read", st.BytesRead, true)
	b = member(b, "filter_rows", st.FilterRows, false)
	b = member(b, "filter_rejected", st.FilterRejected, false)
	b = member(b, "filter_exact_plans", st.FilterExact, false)
	b = member(b, "filter_list_plans", st.FilterLists, false)
	b = member(b, "filter_widenings", st.FilterWidenings, false)
	b = member(b, "vectors_file_requests", st.VectorFileRequests, false)
	b = member(b, "vectors_file_bytes", st.VectorFileBytes, false)
	b = member(b, "source_vector_rows", st.SourceVectorRows, false)
	return append(b, '}')
}
