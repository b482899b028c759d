//go:build duckdb

package sqlengine

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/parqdb/parqdb/filter"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/server"
)

// The table functions are Go functions with six arguments (index,
// query_vector or key, k, nprobe, refine, snapshot); NULL selects the
// default of the last three. Table macros, created on every connection,
// give the public names their optional trailing arguments: duckdb-go
// binds named arguments only when a query gives them, and keeps only the
// first of several registrations of one name.
//
// duckdb-go aborts the process when a table function gets a typed NULL
// argument, so statements never name the Go functions (their names carry
// a random suffix and Query refuses statements that mention the prefix),
// and the macros pass them no NULL: absent or NULL values become the
// sentinel nullArg.
var (
	suffix   = randomHex()
	fnVector = internalPrefix + "search_" + suffix
	fnKey    = internalPrefix + "search_key_" + suffix
)

const (
	internalPrefix = "parqdb_internal_ivf_"
	nullArg        = math.MinInt64
	nullText       = "\x01NULL\x01"
)

func randomHex() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// macros defines ivf_search and ivf_search_key with 3 to 6 arguments, and
// ivf_search_where and ivf_search_key_where (a filter predicate as the
// fourth argument) with 4 to 7. The Go functions take (index, query, k,
// nprobe, refine, snapshot, where).
var macros = func() string {
	var b strings.Builder
	for _, m := range []struct {
		name, fn string
		where    bool
	}{{"ivf_search", fnVector, false}, {"ivf_search_key", fnKey, false}, {"ivf_search_where", fnVector, true}, {"ivf_search_key_where", fnKey, true}} {
		fmt.Fprintf(&b, "CREATE OR REPLACE TEMP MACRO %s", m.name)
		params := []string{"index_name", "query", "k", "nprobe", "refine", "snapshot"}
		first := 3
		if m.where {
			params = []string{"index_name", "query", "k", "where_predicate", "nprobe", "refine", "snapshot"}
			first = 4
		}
		for n := first; n <= len(params); n++ {
			if n > first {
				b.WriteString(",")
			}
			given := map[string]bool{}
			for _, p := range params[:n] {
				given[p] = true
			}
			var args []string
			for _, p := range []string{"index_name", "query", "k", "nprobe", "refine", "snapshot", "where_predicate"} {
				switch {
				case !given[p] && p == "where_predicate":
					args = append(args, "'"+nullText+"'")
				case !given[p]:
					args = append(args, fmt.Sprint(int64(nullArg)))
				case p == "index_name" || p == "query" || p == "where_predicate":
					args = append(args, fmt.Sprintf("coalesce(CAST(%s AS VARCHAR), '%s')", p, nullText))
				default:
					args = append(args, fmt.Sprintf("coalesce(CAST(%s AS BIGINT), %d)", p, int64(nullArg)))
				}
			}
			fmt.Fprintf(&b, " (%s) AS TABLE (SELECT * FROM %s(%s))", strings.Join(params[:n], ", "), m.fn, strings.Join(args, ", "))
		}
		b.WriteString(";\n")
	}
	return b.String()
}()

// register adds the Go table functions behind the macros.
func (e *Engine) register(conn *sql.Conn) error {
	varchar, _ := duckdb.NewTypeInfo(duckdb.TYPE_VARCHAR)
	bigint, _ := duckdb.NewTypeInfo(duckdb.TYPE_BIGINT)
	for _, name := range []string{fnVector, fnKey} {
		byKey := name == fnKey
		f := duckdb.RowTableFunction{
			Config: duckdb.TableFunctionConfig{Arguments: []duckdb.TypeInfo{varchar, varchar, bigint, bigint, bigint, bigint, varchar}},
			BindArgumentsContext: func(ctx context.Context, _ map[string]any, args ...any) (duckdb.RowTableSource, error) {
				return e.bind(ctx, byKey, args)
			},
		}
		if err := duckdb.RegisterTableUDF(conn, name, f); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

func intArg(args []any, i int, name string) (*int, error) {
	if i >= len(args) || args[i] == nil || args[i] == int64(nullArg) {
		return nil, nil
	}
	n, ok := args[i].(int64)
	if !ok {
		return nil, fmt.Errorf("%s must be a non-NULL integer", name)
	}
	n = min(max(n, -1), math.MaxInt32) // out of range either way; CheckOptions says so
	v := int(n)
	return &v, nil
}

func badArg(format string, args ...any) error {
	return &server.Error{Status: http.StatusBadRequest, Code: server.CodeInvalidArgument, Message: fmt.Sprintf(format, args...)}
}

// bind runs the search (DuckDB binds table functions with constant
// arguments) and returns its rows as the table.
func (e *Engine) bind(ctx context.Context, byKey bool, args []any) (duckdb.RowTableSource, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	fn := "ivf_search"
	if byKey {
		fn = "ivf_search_key"
	}
	index, ok1 := args[0].(string)
	arg, ok2 := args[1].(string)
	k64, ok3 := args[2].(int64)
	if !ok1 || !ok2 || !ok3 || index == nullText || arg == nullText || k64 == nullArg {
		return nil, record(ctx, badArg("%s(index VARCHAR, %s VARCHAR, k BIGINT): NULL or mistyped argument", fn, map[bool]string{false: "query_vector", true: "key"}[byKey]))
	}
	k := int(min(max(k64, -1), math.MaxInt32))
	nprobe, err := intArg(args, 3, "nprobe")
	if err != nil {
		return nil, record(ctx, badArg("%s: %v", fn, err))
	}
	refine, err := intArg(args, 4, "refine")
	if err != nil {
		return nil, record(ctx, badArg("%s: %v", fn, err))
	}
	opts, err := e.opts.Limits.CheckOptions(&k, nprobe, refine)
	if err != nil {
		return nil, record(ctx, err)
	}
	if len(args) > 6 {
		if w, ok := args[6].(string); ok && w != nullText {
			if opts.Filter, err = filter.Parse(w); err != nil {
				return nil, record(ctx, server.AsError(err))
			}
		}
	}
	var snapshot int64
	if len(args) > 5 && args[5] != nil && args[5] != int64(nullArg) {
		s, ok := args[5].(int64)
		if !ok || s < 0 {
			return nil, record(ctx, badArg("%s: snapshot must be a non-negative integer", fn))
		}
		snapshot = s
	}
	res, err := e.search(ctx, index, arg, byKey, snapshot, opts)
	if err != nil {
		return nil, record(ctx, err)
	}
	src, err := newSource(res)
	if err != nil {
		return nil, record(ctx, err)
	}
	if e.opts.OnSearch != nil {
		e.opts.OnSearch(index, len(res.Hits))
	}
	return src, nil
}

func (e *Engine) search(ctx context.Context, index, arg string, byKey bool, snapshot int64, opts query.Options) (*query.Result, error) {
	timeout := e.opts.Limits.Timeout
	if timeout == 0 {
		timeout = server.DefaultLimits.Timeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if e.opts.Admitter != nil {
		release, err := e.opts.Admitter.Admit(ctx)
		if err != nil {
			return nil, err
		}
		defer release()
	}
	lease, err := e.pool.Acquire(ctx, index, snapshot)
	if err != nil {
		return nil, err
	}
	defer lease.Release()
	ix := lease.Index()
	if opts.Columns != nil {
		have := ix.Columns()
		for _, c := range opts.Columns {
			found := false
			for _, h := range have {
				found = found || h == c
			}
			if !found {
				return nil, &server.Error{Status: http.StatusBadRequest, Code: server.CodeUnknownColumn,
					Message: fmt.Sprintf("column %q is not in the source of index %q (columns: %s)", c, index, strings.Join(have, ", "))}
			}
		}
	}
	var q []float32
	if byKey {
		vals, err := ix.ParseKey(strings.Split(arg, ","))
		if err != nil {
			return nil, err
		}
		if q, err = ix.VectorOf(ctx, vals); err != nil {
			return nil, err
		}
	} else if q, err = parseVector(arg, ix); err != nil {
		return nil, err
	}
	res, err := ix.Search(ctx, q, opts)
	if err != nil {
		return nil, err
	}
	server.CloneResult(res)
	return res, nil
}

// parseVector parses a JSON array of numbers for ix.
func parseVector(s string, ix *query.Index) ([]float32, error) {
	var xs []float64
	if err := json.Unmarshal([]byte(s), &xs); err != nil {
		for _, tok := range []string{"NaN", "Infinity"} {
			if strings.Contains(s, tok) {
				return nil, &server.Error{Status: 400, Code: server.CodeInvalidVector, Message: "query_vector: values must be finite numbers (NaN and Infinity are not)"}
			}
		}
		return nil, &server.Error{Status: 400, Code: server.CodeInvalidArgument, Message: fmt.Sprintf("query_vector: want a JSON array of numbers like '[0.1, 2, -3e-2]': %v", err)}
	}
	if len(xs) != ix.Dim() {
		return nil, &server.Error{Status: 400, Code: server.CodeWrongDimension, Message: fmt.Sprintf("query_vector has %d values; index %q has dimension %d", len(xs), ix.Name(), ix.Dim())}
	}
	out := make([]float32, len(xs))
	zero := true
	for i, x := range xs {
		out[i] = float32(x)
		if math.IsInf(float64(out[i]), 0) {
			return nil, &server.Error{Status: 400, Code: server.CodeInvalidVector, Message: fmt.Sprintf("query_vector[%d] = %g overflows float32", i, x)}
		}
		zero = zero && out[i] == 0
	}
	if zero && ix.Snapshot().Metric == metadata.MetricCosine {
		return nil, &server.Error{Status: 400, Code: server.CodeInvalidVector, Message: "query_vector is all zeros: it has no direction under the cosine metric"}
	}
	return out, nil
}

// source is a search result as a DuckDB table.
type source struct {
	cols  []duckdb.ColumnInfo
	names []string
	convs []func(any) any
	res   *query.Result
	next  int
}

func newSource(res *query.Result) (*source, error) {
	s := &source{res: res, names: res.Columns}
	for _, c := range res.Columns {
		var t duckdb.TypeInfo
		var conv func(any) any
		var err error
		if c == metadata.ReservedField {
			t, err = duckdb.NewTypeInfo(duckdb.TYPE_FLOAT)
		} else {
			vals := make([]any, len(res.Hits))
			for i, h := range res.Hits {
				vals[i] = h.Row[c]
			}
			t, conv, err = typeOf(vals)
		}
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c, err)
		}
		s.cols = append(s.cols, duckdb.ColumnInfo{Name: c, T: t})
		s.convs = append(s.convs, conv)
	}
	return s, nil
}

func (s *source) ColumnInfos() []duckdb.ColumnInfo { return s.cols }

func (s *source) Cardinality() *duckdb.CardinalityInfo {
	return &duckdb.CardinalityInfo{Cardinality: uint(len(s.res.Hits)), Exact: true}
}

func (s *source) Init() {}

func (s *source) FillRow(row duckdb.Row) (bool, error) {
	if s.next >= len(s.res.Hits) {
		return false, nil
	}
	h := &s.res.Hits[s.next]
	s.next++
	for i, c := range s.names {
		if !row.IsProjected(i) {
			continue
		}
		var v any
		if c == metadata.ReservedField {
			v = h.Distance
		} else {
			v = h.Row[c]
			if v != nil && s.convs[i] != nil {
				v = s.convs[i](v)
			}
		}
		if err := duckdb.SetRowValue(row, i, v); err != nil {
			return false, fmt.Errorf("column %s: %w", c, err)
		}
	}
	return true, nil
}

// typeOf picks the DuckDB type of a result column from its values (the
// first non-null one; lists from all their elements), with a conversion
// for values DuckDB cannot take as they are. Anything unknown becomes
// VARCHAR holding JSON.
func typeOf(vals []any) (duckdb.TypeInfo, func(any) any, error) {
	var first any
	for _, v := range vals {
		if v != nil {
			first = v
			break
		}
	}
	simple := func(t duckdb.Type) (duckdb.TypeInfo, func(any) any, error) {
		ti, err := duckdb.NewTypeInfo(t)
		return ti, nil, err
	}
	switch first.(type) {
	case nil, string:
		return simple(duckdb.TYPE_VARCHAR)
	case bool:
		return simple(duckdb.TYPE_BOOLEAN)
	case int8:
		return simple(duckdb.TYPE_TINYINT)
	case int16:
		return simple(duckdb.TYPE_SMALLINT)
	case int32:
		return simple(duckdb.TYPE_INTEGER)
	case int64:
		return simple(duckdb.TYPE_BIGINT)
	case int:
		ti, err := duckdb.NewTypeInfo(duckdb.TYPE_BIGINT)
		return ti, func(v any) any { return int64(v.(int)) }, err
	case uint8:
		return simple(duckdb.TYPE_UTINYINT)
	case uint16:
		return simple(duckdb.TYPE_USMALLINT)
	case uint32:
		return simple(duckdb.TYPE_UINTEGER)
	case uint64:
		return simple(duckdb.TYPE_UBIGINT)
	case float32:
		return simple(duckdb.TYPE_FLOAT)
	case float64:
		return simple(duckdb.TYPE_DOUBLE)
	case []byte:
		return simple(duckdb.TYPE_BLOB)
	case time.Time:
		return simple(duckdb.TYPE_TIMESTAMP)
	case []any:
		var elems []any
		for _, v := range vals {
			if l, ok := v.([]any); ok {
				elems = append(elems, l...)
			}
		}
		et, econv, err := typeOf(elems)
		if err != nil {
			return nil, nil, err
		}
		lt, err := duckdb.NewListInfo(et)
		if econv == nil {
			return lt, nil, err
		}
		return lt, func(v any) any {
			l := v.([]any)
			out := make([]any, len(l))
			for i, x := range l {
				if x != nil {
					out[i] = econv(x)
				}
			}
			return out
		}, err
	}
	ti, err := duckdb.NewTypeInfo(duckdb.TYPE_VARCHAR)
	return ti, func(v any) any {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Sprint(v)
		}
		return string(b)
	}, err
}
