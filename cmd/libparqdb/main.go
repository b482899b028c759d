package main

/*
#include <stdint.h>
#include <stdlib.h>
*/
import "C"

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/parqdb/parqdb/filter"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/query/rowjson"
	"github.com/parqdb/parqdb/server/serving"
)

func main() {}

// cString returns b as a C string the caller frees with parqdb_free.
func cString(b []byte) *C.char { return C.CString(string(b)) }

// setError stores err's JSON in *out (when out is not nil) and returns 1.
func setError(out **C.char, err error) C.int {
	if out != nil {
		*out = cString(errorJSON(err))
	}
	return 1
}

//export parqdb_free
func parqdb_free(p *C.char) { C.free(unsafe.Pointer(p)) }

// parqdb_release closes the object of handle h (a warehouse, an index, a
// result or a task) and forgets h; it returns 0, or 1 when h was not open.
//
//export parqdb_release
func parqdb_release(h C.int64_t) C.int {
	if release(int64(h)) {
		return 0
	}
	return 1
}

// parqdb_release_many releases the n handles at hs (as parqdb_release
// does each): one call for the results a caller collected.
//
//export parqdb_release_many
func parqdb_release_many(hs *C.int64_t, n C.int64_t) {
	releaseMany(unsafe.Slice((*int64)(unsafe.Pointer(hs)), int(n)))
}

// parqdb_handles returns the number of open handles (for leak tests).
//
//export parqdb_handles
func parqdb_handles() C.int64_t { return C.int64_t(openHandles()) }

// parqdb_task_new returns a new task handle for one long call.
//
//export parqdb_task_new
func parqdb_task_new() C.int64_t { return C.int64_t(newHandle(newTask())) }

// parqdb_task_cancel cancels the calls running with task h: they return
// the "cancelled" error, and a build commits nothing.
//
//export parqdb_task_cancel
func parqdb_task_cancel(h C.int64_t) {
	if t, err := lookup[*task](int64(h), "task"); err == nil {
		t.cancel()
	}
}

// parqdb_task_progress returns the progress of task h as JSON
// {"stage", "unit", "elapsed", "total", "done", "warnings"} (the running
// stage, the unit of its counts, its seconds so far; free it with parqdb_free), or
// NULL when h is not a task.
//
//export parqdb_task_progress
func parqdb_task_progress(h C.int64_t) *C.char {
	t, err := lookup[*task](int64(h), "task")
	if err != nil {
		return nil
	}
	b, _ := json.Marshal(t.snapshot())
	return cString(b)
}

// parqdb_call runs the management method named method (ops.go) with its
// JSON arguments args, under task (0: none). It returns 0 and the result
// JSON in *out, or 1 and the error JSON in *out; free *out with
// parqdb_free.
//
//export parqdb_call
func parqdb_call(taskH C.int64_t, method, args *C.char, out **C.char) C.int {
	ctx, t, err := taskContext(int64(taskH))
	if err != nil {
		return setError(out, err)
	}
	res, err := call(ctx, t, C.GoString(method), []byte(C.GoString(args)))
	if err != nil {
		return setError(out, err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		return setError(out, err)
	}
	*out = cString(b)
	return 0
}

// searchOptions are a search's options as the C API takes them (JSON).
type searchOptions struct {
	K       int      `json:"k"`
	NProbe  *int     `json:"nprobe"` // absent: the default
	Refine  int      `json:"refine"`
	Recall  float64  `json:"recall"`
	Where   string   `json:"where"`
	Columns []string `json:"columns"`
	Workers int      `json:"workers"`
	// Exact searches by brute force over every row (ExactBatch), for
	// ground truth: results have keys and distances, no rows.
	Exact bool `json:"exact"`
}

type parsedOptions struct {
	opts    query.Options
	workers int
	exact   bool
	// checked is the last index whose columns opts.Columns were checked
	// against (checkColumns), so that repeated searches skip the check.
	checked atomic.Pointer[query.Index]
}

// parqdb_options parses the search options JSON text once (searchOptions)
// and returns their handle, which the searches take: a caller repeats the
// same options, and a where predicate must stay the same
// *filter.Predicate for the index to reuse its matching rows. Returns 0
// and the error JSON in *errOut when the options are invalid.
//
//export parqdb_options
func parqdb_options(text *C.char, errOut **C.char) C.int64_t {
	p, err := parseOptions(C.GoString(text))
	if err != nil {
		setError(errOut, err)
		return 0
	}
	return C.int64_t(newHandle(p))
}

func parseOptions(text string) (*parsedOptions, error) {
	var so searchOptions
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&so); err != nil {
		return nil, fmt.Errorf("%w: search options: %v", query.ErrBadQuery, err)
	}
	if err := checkRanges(so); err != nil {
		return nil, err
	}
	p := &parsedOptions{
		// SharedRows: the library only encodes a result's rows
		// (parqdb_result_rows), as the HTTP server does.
		opts:    query.Options{K: so.K, Refine: so.Refine, Recall: so.Recall, Columns: so.Columns, SharedRows: true},
		workers: so.Workers,
		exact:   so.Exact,
	}
	if so.NProbe != nil {
		p.opts.NProbe = *so.NProbe
	}
	if so.Where != "" {
		f, err := filter.Parse(so.Where)
		if err != nil {
			return nil, err
		}
		p.opts.Filter = f
	}
	return p, nil
}

// checkRanges refuses k, nprobe and refine outside their ranges with the
// HTTP API's out_of_range error; k is required (the caller sized the
// distance buffer by it).
func checkRanges(so searchOptions) error {
	switch {
	case so.K < query.MinK || so.K > query.MaxK:
		return outOfRange("k = %d is outside [%d, %d]", so.K, query.MinK, query.MaxK)
	case so.NProbe != nil && (*so.NProbe < query.MinNProbe || *so.NProbe > query.MaxNProbe):
		return outOfRange("nprobe = %d is outside [%d, %d]", *so.NProbe, query.MinNProbe, query.MaxNProbe)
	case so.Refine < query.MinRefine || so.Refine > query.MaxRefine:
		return outOfRange("refine = %d is outside [%d, %d]", so.Refine, query.MinRefine, query.MaxRefine)
	}
	return nil
}

func outOfRange(format string, args ...any) error {
	return &serving.Error{Status: http.StatusBadRequest, Code: serving.CodeOutOfRange, Message: fmt.Sprintf(format, args...)}
}

// checkColumns refuses a requested column the source does not have, as
// the HTTP API does (unknown_column).
func checkColumns(ix *query.Index, cols []string) error {
	have := ix.Columns()
	for _, c := range cols {
		if !slices.Contains(have, c) {
			return &serving.Error{Status: http.StatusBadRequest, Code: serving.CodeUnknownColumn,
				Message: fmt.Sprintf("column %q is not in the source of index %q (columns: %s)", c, ix.Name(), strings.Join(have, ", "))}
		}
	}
	return nil
}

// queryViews checks the n query vectors of d values at q as the HTTP API
// checks request vectors (wrong_dimension; invalid_vector: a value that is
// not finite, and under cosine an all-zero vector) and returns them as
// one slice per query, aliasing q.
func queryViews(ix *query.Index, q *C.float, n, d int) ([][]float32, error) {
	if err := checkDim(ix, d); err != nil {
		return nil, err
	}
	flat := unsafe.Slice((*float32)(unsafe.Pointer(q)), n*d)
	cosine := ix.Snapshot().Metric == metadata.MetricCosine
	qs := make([][]float32, n)
	for i := range qs {
		qs[i] = flat[i*d : (i+1)*d : (i+1)*d]
		if p := serving.VectorProblem(qs[i], cosine); p != "" {
			where := "vector"
			if n > 1 {
				where = fmt.Sprintf("vectors[%d]", i)
			}
			return nil, serving.InvalidVector(where, p)
		}
	}
	return qs, nil
}

// queryView is queryViews for one vector, without allocating.
func queryView(ix *query.Index, q *C.float, d int) ([]float32, error) {
	if err := checkDim(ix, d); err != nil {
		return nil, err
	}
	v := unsafe.Slice((*float32)(unsafe.Pointer(q)), d)
	if p := serving.VectorProblem(v, ix.Snapshot().Metric == metadata.MetricCosine); p != "" {
		return nil, serving.InvalidVector("vector", p)
	}
	return v, nil
}

func checkDim(ix *query.Index, d int) error {
	return serving.CheckDim("each query vector", d, ix.Dim(), ix.Name())
}

// result is what a result handle holds: one query.Result per query.
type result struct {
	rs  []*query.Result
	one [1]*query.Result // rs of one query
	e   entry            // its handle's
}

// newResult registers the results rs and returns their handle.
func newResult(rs []*query.Result) int64 {
	x := &result{rs: rs}
	return register(&x.e, x)
}

// newResult1 registers the result of one query and returns its handle
// (one allocation, with the handle's entry).
func newResult1(r *query.Result) int64 {
	x := &result{}
	x.one[0] = r
	x.rs = x.one[:]
	return register(&x.e, x)
}

// parqdb_search searches index ixH (under task taskH, 0: none) with the n
// query vectors of dim float32 each at q (row-major; read during the call
// only) and the options of handle optH (parqdb_options). It writes the
// distances of query i to dist[i*k : i*k+k] (NaN past its hits) — distK,
// the k the caller sized dist for, must be the options' — and its number
// of hits to counts[i], stores a result handle in *res and returns 0; on
// error it returns 1 and the error JSON in *errOut.
//
//export parqdb_search
func parqdb_search(ixH, taskH C.int64_t, q *C.float, n, dim, optH C.int64_t,
	dist *C.float, distK C.int64_t, counts *C.int32_t, res *C.int64_t, errOut **C.char) C.int {
	ctx, ix, p, err := searchArgs(ixH, optH, taskH)
	if err != nil {
		return setError(errOut, err)
	}
	if err := checkBufferK(p, distK); err != nil {
		return setError(errOut, err)
	}
	qs, err := queryViews(ix.ix, q, int(n), int(dim))
	if err != nil {
		return setError(errOut, err)
	}
	var rs []*query.Result
	filled := false
	switch {
	case p.exact:
		rs, err = ix.exact(ctx, qs, p)
	case len(qs) == 1:
		var r *query.Result
		r, err = ix.ix.Search(ctx, qs[0], p.opts)
		rs = []*query.Result{r}
	default:
		// each worker writes its queries' distances while they are hot
		k := p.opts.K
		ds := unsafe.Slice((*float32)(unsafe.Pointer(dist)), len(qs)*k)
		cs := unsafe.Slice((*int32)(unsafe.Pointer(counts)), len(qs))
		rs, err = ix.ix.SearchBatchFunc(ctx, qs, p.opts, p.workers, func(i int, r *query.Result) {
			fillOne(r, ds[i*k:(i+1)*k])
			cs[i] = int32(len(r.Hits))
		})
		filled = true
	}
	if err != nil {
		return setError(errOut, err)
	}
	if !filled {
		fill(rs, p.opts.K, dist, counts)
	}
	*res = C.int64_t(newResult(rs))
	return 0
}

// parqdb_search1 is parqdb_search for one query vector with the fewest
// arguments (the per-call cost matters for one query): it writes the
// distances to dist[0:k] (NaN past the hits) and the number of hits to
// dist[k] — distLen, the floats at dist, must be k+1 — and
// returns the result handle, or minus an error handle whose JSON
// parqdb_error returns.
//
//export parqdb_search1
func parqdb_search1(ixH C.int64_t, q *C.float, dim, optH C.int64_t, dist *C.float, distLen C.int64_t) C.int64_t {
	ctx, ix, p, err := searchArgs(ixH, optH, 0)
	if err != nil {
		return -C.int64_t(newHandle(err))
	}
	if err := checkBufferK(p, distLen-1); err != nil {
		return -C.int64_t(newHandle(err))
	}
	v, err := queryView(ix.ix, q, int(dim))
	if err != nil {
		return -C.int64_t(newHandle(err))
	}
	r, err := ix.ix.Search(ctx, v, p.opts)
	if err != nil {
		return -C.int64_t(newHandle(err))
	}
	k := p.opts.K
	ds := unsafe.Slice((*float32)(unsafe.Pointer(dist)), k+1)
	fillOne(r, ds[:k])
	ds[k] = float32(len(r.Hits))
	return C.int64_t(newResult1(r))
}

// checkBufferK reports an invalid_argument error unless k, the hits per
// query the caller's distance buffer holds, is the k of options p (the
// library writes that many).
func checkBufferK(p *parsedOptions, k C.int64_t) error {
	if int64(k) != int64(p.opts.K) {
		return fmt.Errorf("%w: a distance buffer for k = %d, and options of k = %d", query.ErrBadQuery, k, p.opts.K)
	}
	return nil
}

// parqdb_error returns the JSON of error handle h (from parqdb_search1)
// and releases it; free the text with parqdb_free.
//
//export parqdb_error
func parqdb_error(h C.int64_t) *C.char {
	err, lerr := lookup[error](int64(h), "error")
	if lerr != nil {
		err = lerr
	}
	release(int64(h))
	return cString(errorJSON(err))
}

// searchArgs looks up the index, options and task (0: none) handles of a
// search and returns the task's context.
func searchArgs(ixH, optH, taskH C.int64_t) (context.Context, *index, *parsedOptions, error) {
	ix, err := lookup[*index](int64(ixH), "index")
	if err != nil {
		return nil, nil, nil, err
	}
	p, err := lookup[*parsedOptions](int64(optH), "search options")
	if err != nil {
		return nil, nil, nil, err
	}
	if p.opts.Columns != nil && p.checked.Load() != ix.ix {
		if err := checkColumns(ix.ix, p.opts.Columns); err != nil {
			return nil, nil, nil, err
		}
		p.checked.Store(ix.ix)
	}
	ctx, _, err := taskContext(int64(taskH))
	return ctx, ix, p, err
}

// parqdb_search_key searches index ixH near the source row whose key is
// the JSON key (a scalar, or an array with one value per key field), as
// parqdb_search does for one query.
//
//export parqdb_search_key
func parqdb_search_key(ixH, taskH C.int64_t, key *C.char, optH C.int64_t,
	dist *C.float, distK C.int64_t, counts *C.int32_t, res *C.int64_t, errOut **C.char) C.int {
	ctx, ix, p, err := searchArgs(ixH, optH, taskH)
	if err != nil {
		return setError(errOut, err)
	}
	if err := checkBufferK(p, distK); err != nil {
		return setError(errOut, err)
	}
	texts, err := query.KeyTextsJSON([]byte(C.GoString(key)))
	if err != nil {
		return setError(errOut, err)
	}
	vals, err := ix.ix.ParseKey(texts)
	if err != nil {
		return setError(errOut, err)
	}
	r, err := ix.ix.SearchNearKey(ctx, vals, p.opts)
	if err != nil {
		return setError(errOut, err)
	}
	rs := []*query.Result{r}
	fill(rs, p.opts.K, dist, counts)
	*res = C.int64_t(newResult(rs))
	return 0
}

// fill writes the distances and hit counts of rs to the caller's buffers.
func fill(rs []*query.Result, k int, dist *C.float, counts *C.int32_t) {
	ds := unsafe.Slice((*float32)(unsafe.Pointer(dist)), len(rs)*k)
	cs := unsafe.Slice((*int32)(unsafe.Pointer(counts)), len(rs))
	for i, r := range rs {
		fillOne(r, ds[i*k:(i+1)*k])
		cs[i] = int32(len(r.Hits))
	}
}

// fillOne writes the distances of r's hits to row, NaN past them.
func fillOne(r *query.Result, row []float32) {
	nan := float32(math.NaN())
	for j := range row {
		if j < len(r.Hits) {
			row[j] = r.Hits[j].Distance
		} else {
			row[j] = nan
		}
	}
}

// parqdb_result_rows returns in *out the rows of result resH as JSON, one
// array of rows per query, each row an object of its columns and
// _distance (rowjson.Row); 0 on success, 1 and the error JSON in *out.
//
//export parqdb_result_rows
func parqdb_result_rows(resH C.int64_t, out **C.char) C.int {
	r, err := lookup[*result](int64(resH), "result")
	if err != nil {
		return setError(out, err)
	}
	rows := make([][]rowjson.Row, len(r.rs))
	for i, x := range r.rs {
		rows[i] = x.JSONRows()
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rows); err != nil {
		return setError(out, err)
	}
	*out = cString(buf.Bytes())
	return 0
}

// parqdb_result_recall returns the mean recall of result gotH against the
// ground truth result truthH (same queries): per query, the share of the
// truth's keys that got holds; -1 when a handle is not a result or the
// query counts differ.
//
//export parqdb_result_recall
func parqdb_result_recall(gotH, truthH C.int64_t) C.double {
	got, err1 := lookup[*result](int64(gotH), "result")
	truth, err2 := lookup[*result](int64(truthH), "result")
	if err1 != nil || err2 != nil || len(got.rs) != len(truth.rs) || len(got.rs) == 0 {
		return -1
	}
	var sum float64
	for i, t := range truth.rs {
		if len(t.Hits) == 0 {
			sum++
			continue
		}
		have := make(map[string]bool, len(got.rs[i].Hits))
		for _, h := range got.rs[i].Hits {
			have[string(h.Key)] = true
		}
		n := 0
		for _, h := range t.Hits {
			if have[string(h.Key)] {
				n++
			}
		}
		sum += float64(n) / float64(len(t.Hits))
	}
	return C.double(sum / float64(len(truth.rs)))
}
