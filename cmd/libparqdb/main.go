package main

/*
#include <stdint.h>
#include <stdlib.h>
*/
import "C"

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/parqdb/parqdb/filter"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/server"
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
// {"stage", "total", "done", "warnings"} (free it with parqdb_free), or
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
}

// optionCache keeps the parsed options by their JSON text: a caller
// repeats the same options, and a where predicate must be the same
// *filter.Predicate for the index to reuse its matching rows.
var optionCache struct {
	mu sync.Mutex
	m  map[string]*parsedOptions
}

const maxCachedOptions = 256

func parseOptions(text string) (*parsedOptions, error) {
	optionCache.mu.Lock()
	p, ok := optionCache.m[text]
	optionCache.mu.Unlock()
	if ok {
		return p, nil
	}
	var so searchOptions
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&so); err != nil {
		return nil, fmt.Errorf("%w: search options: %v", query.ErrBadQuery, err)
	}
	if err := checkRanges(so); err != nil {
		return nil, err
	}
	p = &parsedOptions{
		opts:    query.Options{K: so.K, Refine: so.Refine, Recall: so.Recall, Columns: so.Columns},
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
	optionCache.mu.Lock()
	if optionCache.m == nil || len(optionCache.m) >= maxCachedOptions {
		optionCache.m = make(map[string]*parsedOptions)
	}
	optionCache.m[text] = p
	optionCache.mu.Unlock()
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
	return &server.Error{Status: http.StatusBadRequest, Code: server.CodeOutOfRange, Message: fmt.Sprintf(format, args...)}
}

// checkColumns refuses a requested column the source does not have, as
// the HTTP API does (unknown_column).
func checkColumns(ix *query.Index, cols []string) error {
	have := ix.Columns()
	for _, c := range cols {
		if !slices.Contains(have, c) {
			return &server.Error{Status: http.StatusBadRequest, Code: server.CodeUnknownColumn,
				Message: fmt.Sprintf("column %q is not in the source of index %q (columns: %s)", c, ix.Name(), strings.Join(have, ", "))}
		}
	}
	return nil
}

// result is what a result handle holds: one query.Result per query.
type result struct {
	rs []*query.Result
}

// parqdb_search searches index ixH (under task taskH, 0: none) with the n
// query vectors of dim float32 each at q (row-major; read during the call
// only) and the options JSON opts. It writes the distances of query i to
// dist[i*k : i*k+k] (k from opts; NaN past its hits) and its number of
// hits to counts[i], stores a result handle in *res and returns 0; on
// error it returns 1 and the error JSON in *errOut.
//
//export parqdb_search
func parqdb_search(ixH, taskH C.int64_t, q *C.float, n, dim C.int64_t, opts *C.char,
	dist *C.float, counts *C.int32_t, res *C.int64_t, errOut **C.char) C.int {
	ix, err := lookup[*index](int64(ixH), "index")
	if err != nil {
		return setError(errOut, err)
	}
	ctx, _, err := taskContext(int64(taskH))
	if err != nil {
		return setError(errOut, err)
	}
	p, err := parseOptions(C.GoString(opts))
	if err != nil {
		return setError(errOut, err)
	}
	if err := checkColumns(ix.ix, p.opts.Columns); err != nil {
		return setError(errOut, err)
	}
	nq, d := int(n), int(dim)
	if d != ix.ix.Dim() {
		return setError(errOut, &server.Error{Status: http.StatusBadRequest, Code: server.CodeWrongDimension,
			Message: fmt.Sprintf("query vectors have %d values; index %q has dimension %d", d, ix.ix.Name(), ix.ix.Dim())})
	}
	flat := unsafe.Slice((*float32)(unsafe.Pointer(q)), nq*d)
	qs := make([][]float32, nq)
	for i := range qs {
		qs[i] = flat[i*d : (i+1)*d : (i+1)*d]
	}
	var rs []*query.Result
	switch {
	case p.exact:
		rs, err = ix.exact(ctx, qs, p)
	case nq == 1:
		var r *query.Result
		r, err = ix.ix.Search(ctx, qs[0], p.opts)
		rs = []*query.Result{r}
	default:
		rs, err = ix.ix.SearchBatch(ctx, qs, p.opts, p.workers)
	}
	if err != nil {
		return setError(errOut, err)
	}
	fill(rs, p.opts.K, dist, counts)
	*res = C.int64_t(newHandle(&result{rs}))
	return 0
}

// parqdb_search_key searches index ixH near the source row whose key is
// the JSON key (a scalar, or an array with one value per key field), as
// parqdb_search does for one query.
//
//export parqdb_search_key
func parqdb_search_key(ixH, taskH C.int64_t, key, opts *C.char,
	dist *C.float, counts *C.int32_t, res *C.int64_t, errOut **C.char) C.int {
	ix, err := lookup[*index](int64(ixH), "index")
	if err != nil {
		return setError(errOut, err)
	}
	ctx, _, err := taskContext(int64(taskH))
	if err != nil {
		return setError(errOut, err)
	}
	p, err := parseOptions(C.GoString(opts))
	if err != nil {
		return setError(errOut, err)
	}
	if err := checkColumns(ix.ix, p.opts.Columns); err != nil {
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
	*res = C.int64_t(newHandle(&result{rs}))
	return 0
}

// fill writes the distances and hit counts of rs to the caller's buffers.
func fill(rs []*query.Result, k int, dist *C.float, counts *C.int32_t) {
	ds := unsafe.Slice((*float32)(unsafe.Pointer(dist)), len(rs)*k)
	cs := unsafe.Slice((*int32)(unsafe.Pointer(counts)), len(rs))
	nan := float32(math.NaN())
	for i, r := range rs {
		row := ds[i*k : (i+1)*k]
		for j := range row {
			if j < len(r.Hits) {
				row[j] = r.Hits[j].Distance
			} else {
				row[j] = nan
			}
		}
		cs[i] = int32(len(r.Hits))
	}
}

// parqdb_result_rows returns in *out the rows of result resH as JSON, one
// array of rows per query, each row an object of its columns and
// _distance (query.JSONRow); 0 on success, 1 and the error JSON in *out.
//
//export parqdb_result_rows
func parqdb_result_rows(resH C.int64_t, out **C.char) C.int {
	r, err := lookup[*result](int64(resH), "result")
	if err != nil {
		return setError(out, err)
	}
	rows := make([][]query.JSONRow, len(r.rs))
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
