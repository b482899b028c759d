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
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/parqdb/parqdb/filter"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/query/rowjson"
	"github.com/parqdb/parqdb/server/serving"
)

// The table functions are Go functions with nine arguments (index,
// query_vector or key, k, nprobe, refine, snapshot, filter, columns,
// recall); NULL selects the default of the last six. Table macros, created on every
// connection, give the public names DuckDB's named optional arguments
// (nprobe := 16) with defaults: duckdb-go's table functions cannot read a
// named argument a query leaves out.
//
// Statements can reach the Go functions without the macros (query() runs
// a constant string; duckdb_functions() lists the names), so the Go side
// takes any argument, NULLs included: duckdb-go v2.20000.0 passes a NULL
// argument as nil (older versions aborted the process on a typed NULL).
// The random suffix only keeps the names out of the way of user macros.
var (
	suffix       = randomHex()
	fnVector     = internalPrefix + "search_" + suffix
	fnKey        = internalPrefix + "search_key_" + suffix
	fnNearest    = internalPrefix + "nearest_" + suffix
	fnNearestKey = internalPrefix + "nearest_key_" + suffix
)

const internalPrefix = "parqdb_internal_ivf_"

func randomHex() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// namedArgs are the optional arguments every search takes by name, in the
// Go functions' order after (index, query, k).
var namedArgs = []string{"nprobe", "refine", "snapshot", "columns", "filter", `"where"`, "recall"}

// macroArgs returns the Go function's arguments for a macro whose
// parameters are given, casting each so that DuckDB picks the function's
// only signature (and a value of the wrong type fails there, by name).
func macroArgs(query, queryType string, filterExpr string) string {
	return strings.Join([]string{
		"CAST(index_name AS VARCHAR)",
		fmt.Sprintf("CAST(%s AS %s)", query, queryType),
		"CAST(k AS BIGINT)",
		"CAST(nprobe AS BIGINT)",
		"CAST(refine AS BIGINT)",
		"CAST(snapshot AS BIGINT)",
		"CAST(" + filterExpr + " AS VARCHAR)",
		// A list of names or one comma-separated string: JSON tells them apart.
		"CAST(to_json(columns) AS VARCHAR)",
		"CAST(recall AS DOUBLE)",
	}, ", ")
}

// macros defines the public functions:
//
//	ivf_search(index_name, query_vector, k, name := value …)
//	ivf_search_key(index_name, key, k, name := value …)
//	ivf_search_where(index_name, query_vector, k, where_predicate, name := value …)
//	ivf_search_key_where(index_name, key, k, where_predicate, name := value …)
//	ivf_nearest(index_name, query_vector, k, name := value …)   (scalar)
//	ivf_nearest_key(index_name, key, k, name := value …)        (scalar)
//
// with the named arguments namedArgs (the _where forms take no filter).
// DuckDB refuses overloads that differ only in defaults, so the options
// are named only.
var macros = func() string {
	var b strings.Builder
	for _, m := range []struct {
		name, fn, query string
		where           bool
	}{
		{"ivf_search", fnVector, "query_vector", false},
		{"ivf_search_key", fnKey, "key", false},
		{"ivf_search_where", fnVector, "query_vector", true},
		{"ivf_search_key_where", fnKey, "key", true},
	} {
		fmt.Fprintf(&b, "CREATE OR REPLACE TEMP MACRO %s", m.name)
		fixed := []string{"index_name", m.query, "k"}
		filterExpr := `coalesce("filter", "where")`
		if m.where {
			fixed = append(fixed, "where_predicate")
			filterExpr = "where_predicate"
		}
		params := fixed
		for _, a := range namedArgs {
			if m.where && (a == "filter" || a == `"where"`) {
				continue
			}
			params = append(params, a+" := NULL")
		}
		fmt.Fprintf(&b, "(%s) AS TABLE (SELECT * FROM %s(%s))", strings.Join(params, ", "), m.fn, macroArgs(m.query, "VARCHAR", filterExpr))
		b.WriteString(";\n")
	}
	params := []string{"index_name", "query_vector", "k"}
	for _, a := range namedArgs {
		params = append(params, a+" := NULL")
	}
	fmt.Fprintf(&b, "CREATE OR REPLACE TEMP MACRO ivf_nearest(%s) AS CAST(%s(%s) AS STRUCT(_distance FLOAT, _row JSON)[]);\n",
		strings.Join(params, ", "), fnNearest, macroArgs("query_vector", "FLOAT[]", `coalesce("filter", "where")`))
	params[1] = "key"
	fmt.Fprintf(&b, "CREATE OR REPLACE TEMP MACRO ivf_nearest_key(%s) AS CAST(%s(%s) AS STRUCT(_distance FLOAT, _row JSON)[]);\n",
		strings.Join(params, ", "), fnNearestKey, macroArgs("key", "VARCHAR", `coalesce("filter", "where")`))
	return b.String()
}()

// register adds the Go functions behind the macros.
func (e *Engine) register(conn *sql.Conn) error {
	varchar, _ := duckdb.NewTypeInfo(duckdb.TYPE_VARCHAR)
	bigint, _ := duckdb.NewTypeInfo(duckdb.TYPE_BIGINT)
	double, _ := duckdb.NewTypeInfo(duckdb.TYPE_DOUBLE)
	for _, name := range []string{fnVector, fnKey} {
		byKey := name == fnKey
		f := duckdb.RowTableFunction{
			Config: duckdb.TableFunctionConfig{Arguments: []duckdb.TypeInfo{varchar, varchar, bigint, bigint, bigint, bigint, varchar, varchar, double}},
			BindArgumentsContext: func(ctx context.Context, _ map[string]any, args ...any) (duckdb.RowTableSource, error) {
				return e.bind(ctx, byKey, args)
			},
		}
		if err := duckdb.RegisterTableUDF(conn, name, f); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return e.registerNearest(conn)
}

func badArg(format string, args ...any) error {
	return &serving.Error{Status: http.StatusBadRequest, Code: serving.CodeInvalidArgument, Message: fmt.Sprintf(format, args...)}
}

// request is one search as the SQL functions give it.
type request struct {
	index    string
	snapshot int64
	opts     query.Options
	byKey    bool
	text     string    // the key, or the query vector as JSON
	vec      []float32 // the query vector, when given as a list
}

// parseArgs reads the Go functions' arguments (index, query, k, nprobe,
// refine, snapshot, filter, columns, recall) past the query, which the
// caller reads; any may be nil (NULL), the first three may not.
func (e *Engine) parseArgs(fn string, args []any) (request, error) {
	var r request
	if len(args) != 9 {
		return r, badArg("%s: want 9 arguments, got %d", fn, len(args))
	}
	index, ok := args[0].(string)
	if !ok {
		return r, badArg("%s: index_name must be the name of an index, not NULL", fn)
	}
	r.index = index
	k64, ok := args[2].(int64)
	if !ok {
		return r, badArg("%s: k must be an integer, not NULL", fn)
	}
	k := clampInt(k64)
	var nprobe, refine *int
	for i, p := range []**int{&nprobe, &refine} {
		if n, ok := args[3+i].(int64); ok {
			v := clampInt(n)
			*p = &v
		}
	}
	opts, err := e.opts.Limits.CheckOptions(&k, nprobe, refine)
	if err != nil {
		return r, err
	}
	if x, ok := args[8].(float64); ok {
		if opts, err = e.opts.Limits.CheckRecall(opts, &x, nprobe, refine); err != nil {
			return r, err
		}
	}
	if s, ok := args[5].(int64); ok {
		if s < 0 {
			return r, badArg("%s: snapshot must be a non-negative snapshot id, not %d", fn, s)
		}
		r.snapshot = s
	}
	if w, ok := args[6].(string); ok {
		if opts.Filter, err = filter.Parse(w); err != nil {
			return r, serving.AsError(err)
		}
	}
	if c, ok := args[7].(string); ok {
		if opts.Columns, err = parseColumns(c); err != nil {
			return r, badArg("%s: columns: %v", fn, err)
		}
	}
	r.opts = opts
	return r, nil
}

// clampInt narrows n to int; values out of range either way stay out of
// range, for CheckOptions to name.
func clampInt(n int64) int { return int(min(max(n, -1), math.MaxInt32)) }

// parseColumns reads the columns argument as to_json gives it: a list of
// names (["word", "rank"]) or one string of comma-separated names
// ("word,rank").
func parseColumns(text string) ([]string, error) {
	var list []string
	if err := json.Unmarshal([]byte(text), &list); err == nil {
		if len(list) == 0 {
			return nil, fmt.Errorf("the list is empty; omit columns for every column")
		}
		for i, c := range list {
			if c == "" {
				return nil, fmt.Errorf("columns[%d] is NULL or empty; give column names", i+1)
			}
		}
		return list, nil
	}
	var one string
	if err := json.Unmarshal([]byte(text), &one); err != nil {
		return nil, fmt.Errorf("want a list of column names like ['word', 'rank'] or a string 'word,rank', not %s", text)
	}
	for _, c := range strings.Split(one, ",") {
		if c = strings.TrimSpace(c); c != "" {
			list = append(list, c)
		}
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("no column names in %q", one)
	}
	return list, nil
}

// bind runs the search (DuckDB binds table functions with constant
// arguments) and returns its rows as the table.
func (e *Engine) bind(ctx context.Context, byKey bool, args []any) (duckdb.RowTableSource, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	fn, what := "ivf_search", "query_vector"
	if byKey {
		fn, what = "ivf_search_key", "key"
	}
	r, err := e.parseArgs(fn, args)
	if err != nil {
		return nil, record(ctx, err)
	}
	text, ok := args[1].(string)
	if !ok {
		return nil, record(ctx, badArg("%s: %s must be given, not NULL", fn, what))
	}
	r.byKey, r.text = byKey, text
	res, err := e.search(ctx, r)
	if err != nil {
		return nil, record(ctx, err)
	}
	src, err := newSource(res)
	if err != nil {
		return nil, record(ctx, err)
	}
	return src, nil
}

// search runs r under the engine's time limit and admission, and reports
// it to OnSearch.
func (e *Engine) search(ctx context.Context, r request) (*query.Result, error) {
	var res *query.Result
	err := e.withIndex(ctx, r, 1, func(ctx context.Context, ix *query.Index, opts query.Options) error {
		q := r.vec
		switch {
		case r.byKey:
			// A one-field key is the whole text (a key may hold commas);
			// composite keys are comma-separated.
			parts := []string{r.text}
			if len(ix.Snapshot().SourceKeyFields) > 1 {
				parts = strings.Split(r.text, ",")
			}
			vals, err := ix.ParseKey(parts)
			if err != nil {
				return err
			}
			if q, err = ix.VectorOf(ctx, vals); err != nil {
				return err
			}
		case q != nil:
			if err := checkVector(q, ix); err != nil {
				return err
			}
		default:
			var err error
			if q, err = parseVector(r.text, ix); err != nil {
				return err
			}
		}
		var err error
		if res, err = ix.Search(ctx, q, opts); err != nil {
			return err
		}
		e.searched(r.index, res)
		return nil
	})
	return res, err
}

// searchBatch searches qs, all with r's index and options, as one batch
// (Index.SearchBatch on every core: list-major where the index is large
// enough) under one admission slot and the time limit of len(qs) searches
// run GOMAXPROCS at a time, and reports each to OnSearch. With an
// Admitter (parqdb serve) the batch runs on its query slots
// (Admitter.SearchBatch), as an HTTP batch does, so that SQL and HTTP
// together search at most GOMAXPROCS vectors at once. The results are
// those of searching each vector alone.
func (e *Engine) searchBatch(ctx context.Context, r request, qs [][]float32) ([]*query.Result, error) {
	var out []*query.Result
	err := e.withIndex(ctx, r, len(qs), func(ctx context.Context, ix *query.Index, opts query.Options) error {
		for _, q := range qs {
			if err := checkVector(q, ix); err != nil {
				return err
			}
		}
		var err error
		if e.opts.Admitter != nil {
			out, err = e.opts.Admitter.SearchBatch(ctx, ix, qs, opts)
		} else {
			out, err = ix.SearchBatch(ctx, qs, opts, runtime.GOMAXPROCS(0))
		}
		if err != nil {
			return err
		}
		for _, res := range out {
			e.searched(r.index, res)
		}
		return nil
	})
	return out, err
}

// withIndex runs f on r's index (a pool lease) with r's options, recall
// resolved and columns checked, under one admission slot and the time
// limit of n searches run GOMAXPROCS at a time.
func (e *Engine) withIndex(ctx context.Context, r request, n int, f func(context.Context, *query.Index, query.Options) error) error {
	index, opts := r.index, r.opts
	timeout := e.opts.Limits.Timeout
	if timeout == 0 {
		timeout = serving.DefaultLimits.Timeout
	}
	if p := runtime.GOMAXPROCS(0); n > p {
		timeout *= time.Duration((n + p - 1) / p)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if e.opts.Admitter != nil {
		release, err := e.opts.Admitter.Admit(ctx)
		if err != nil {
			return err
		}
		defer release()
	}
	lease, err := e.pool.Acquire(ctx, index, r.snapshot)
	if err != nil {
		return err
	}
	defer lease.Release()
	ix := lease.Index()
	if opts, err = e.opts.Limits.ResolveRecall(ctx, ix, opts); err != nil {
		return err
	}
	if opts.Columns != nil {
		have := ix.Columns()
		for _, c := range opts.Columns {
			if !slices.Contains(have, c) {
				return &serving.Error{Status: http.StatusBadRequest, Code: serving.CodeUnknownColumn,
					Message: fmt.Sprintf("column %q is not in the source of index %q (columns: %s)", c, index, strings.Join(have, ", "))}
			}
		}
	}
	return f(ctx, ix, opts)
}

// searched detaches res from the index's buffers and reports it.
func (e *Engine) searched(index string, res *query.Result) {
	serving.CloneResult(res)
	if e.opts.OnSearch != nil {
		e.opts.OnSearch(index, len(res.Hits))
	}
}

// parseVector parses a JSON array of numbers for ix.
func parseVector(s string, ix *query.Index) ([]float32, error) {
	var xs []float64
	if err := json.Unmarshal([]byte(s), &xs); err != nil {
		for _, tok := range []string{"NaN", "Infinity"} {
			if strings.Contains(s, tok) {
				return nil, &serving.Error{Status: 400, Code: serving.CodeInvalidVector, Message: "query_vector: values must be finite numbers (NaN and Infinity are not)"}
			}
		}
		return nil, &serving.Error{Status: 400, Code: serving.CodeInvalidArgument, Message: fmt.Sprintf("query_vector: want a JSON array of numbers like '[0.1, 2, -3e-2]': %v", err)}
	}
	if p := rowjson.NullElement([]byte(s)); p != nil {
		return nil, &serving.Error{Status: 400, Code: serving.CodeInvalidArgument, Message: fmt.Sprintf("query_vector[%d] is null: a query vector needs a number in every element", p[0])}
	}
	out := make([]float32, len(xs))
	for i, x := range xs {
		out[i] = float32(x) // a number beyond float32's range becomes ±Inf: checkVector refuses it
	}
	return out, checkVector(out, ix)
}

// checkVector checks q's dimension and values for ix (serving's checks,
// the HTTP API's messages).
func checkVector(q []float32, ix *query.Index) error {
	if err := serving.CheckDim("query_vector", len(q), ix.Dim(), ix.Name()); err != nil {
		return err
	}
	if p := serving.VectorProblem(q, ix.Snapshot().Metric == metadata.MetricCosine); p != "" {
		return serving.InvalidVector("query_vector", p)
	}
	return nil
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
