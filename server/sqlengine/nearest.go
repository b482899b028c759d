//go:build duckdb

package sqlengine

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"runtime"
	"strconv"
	"strings"

	"github.com/duckdb/duckdb-go/v2"
	"golang.org/x/sync/errgroup"

	"github.com/parqdb/parqdb/query"
)

// registerNearest registers the scalar functions behind the ivf_nearest
// and ivf_nearest_key macros: one search per row (by vector or by key),
// its hits as a list of (_distance, _row) structs, _row being the hit's
// source columns as the JSON object the HTTP API returns. A scalar
// function has one result type whatever the index, hence JSON rows; the
// macros cast _row to DuckDB's JSON type, so _row->>'word' reads a column.
func (e *Engine) registerNearest(conn *sql.Conn) error {
	varchar, _ := duckdb.NewTypeInfo(duckdb.TYPE_VARCHAR)
	bigint, _ := duckdb.NewTypeInfo(duckdb.TYPE_BIGINT)
	double, _ := duckdb.NewTypeInfo(duckdb.TYPE_DOUBLE)
	float, _ := duckdb.NewTypeInfo(duckdb.TYPE_FLOAT)
	floats, err := duckdb.NewListInfo(float)
	if err != nil {
		return err
	}
	dist, err := duckdb.NewStructEntry(float, "_distance")
	if err != nil {
		return err
	}
	row, err := duckdb.NewStructEntry(varchar, "_row")
	if err != nil {
		return err
	}
	hit, err := duckdb.NewStructInfo(dist, row)
	if err != nil {
		return err
	}
	hits, err := duckdb.NewListInfo(hit)
	if err != nil {
		return err
	}
	for _, byKey := range []bool{false, true} {
		name, query := fnNearest, floats
		if byKey {
			name, query = fnNearestKey, varchar
		}
		cfg := duckdb.ScalarFuncConfig{
			InputTypeInfos: []duckdb.TypeInfo{varchar, query, bigint, bigint, bigint, bigint, varchar, varchar, double},
			ResultTypeInfo: hits,
			// NULL options mean defaults; a NULL vector or key gives NULL.
			SpecialNullHandling: true,
			// Each row is a search with its own admission and time limit.
			Volatile: true,
		}
		if err := duckdb.RegisterScalarUDF(conn, name, nearestFunc{cfg: cfg, e: e, byKey: byKey}); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// nearestFunc: see registerNearest's doc above.
type nearestFunc struct {
	cfg   duckdb.ScalarFuncConfig
	e     *Engine
	byKey bool
}

func (f nearestFunc) Config() duckdb.ScalarFuncConfig { return f.cfg }

func (f nearestFunc) Executor() duckdb.ScalarFuncExecutor {
	return duckdb.ScalarFuncExecutor{ChunkContextExecutor: func(ctx context.Context, chunk *duckdb.ChunkIteratorState) error {
		return f.e.nearestChunk(ctx, chunk, f.byKey)
	}}
}

// nearestChunk searches for the rows of one chunk (up to 2,048) at once.
// Vector rows with the same index and options (the usual statement: one
// constant index, k and options, a vector per row) are searched as one
// batch (searchBatch: list-major on every core); key rows are searched
// GOMAXPROCS at a time, each with its own admission slot. DuckDB often
// calls a scalar function from one thread, as when a query reads one
// Parquet row group.
func (e *Engine) nearestChunk(ctx context.Context, chunk *duckdb.ChunkIteratorState, byKey bool) error {
	if ctx == nil {
		ctx = context.Background()
	}
	var rows [][]driver.Value
	for st, err := range chunk.Rows() {
		if err != nil {
			return err
		}
		vals := make([]driver.Value, st.ColumnCount())
		for i := range vals {
			vals[i] = *st.GetValuePtr(i)
		}
		rows = append(rows, vals)
	}
	out := make([]any, len(rows))
	var err error
	if byKey {
		err = e.nearestKeys(ctx, rows, out)
	} else {
		err = e.nearestVectors(ctx, rows, out)
	}
	if err != nil {
		return err
	}
	i := 0
	for st, err := range chunk.Rows() {
		if err != nil {
			return err
		}
		if err := st.SetResult(out[i]); err != nil {
			return err
		}
		i++
	}
	return nil
}

// nearestKeys searches near each row's key into out, GOMAXPROCS at a time.
func (e *Engine) nearestKeys(ctx context.Context, rows [][]driver.Value, out []any) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, vals := range rows {
		g.Go(func() error {
			r, err := nearestRequest(e, vals, true)
			if err != nil {
				return record(gctx, err)
			}
			if r == nil { // a NULL key: NULL
				return nil
			}
			res, err := e.search(gctx, *r)
			if err != nil {
				return record(gctx, err)
			}
			out[i], err = hitList(res)
			return err
		})
	}
	return g.Wait()
}

// nearestVectors searches near each row's vector into out: the rows are
// grouped by their other arguments, and each group is one batch.
func (e *Engine) nearestVectors(ctx context.Context, rows [][]driver.Value, out []any) error {
	type group struct {
		r    request
		rows []int
		qs   [][]float32
	}
	var groups []*group
	byArgs := map[string]*group{}
	for i, vals := range rows {
		key := optionsKey(vals)
		g := byArgs[key]
		if g == nil {
			r, err := nearestRequest(e, vals, false)
			if err != nil {
				return record(ctx, err)
			}
			if r == nil { // a NULL vector: NULL
				continue
			}
			g = &group{r: *r}
			g.r.vec = nil
			byArgs[key] = g
			groups = append(groups, g)
		}
		q, err := queryVector(vals[1])
		if err != nil {
			return record(ctx, err)
		}
		if q == nil {
			continue
		}
		g.rows = append(g.rows, i)
		g.qs = append(g.qs, q)
	}
	for _, g := range groups {
		res, err := e.searchBatch(ctx, g.r, g.qs)
		if err != nil {
			return record(ctx, err)
		}
		for j, i := range g.rows {
			if out[i], err = hitList(res[j]); err != nil {
				return err
			}
		}
	}
	return nil
}

// optionsKey identifies a row's arguments other than the query vector
// (index, k, options), distinctly for distinct values.
func optionsKey(vals []driver.Value) string {
	var b strings.Builder
	for i, v := range vals {
		if i == 1 {
			continue
		}
		switch v := v.(type) {
		case nil:
			b.WriteString("null")
		case string:
			b.WriteString(strconv.Quote(v))
		default:
			fmt.Fprintf(&b, "%T(%v)", v, v)
		}
		b.WriteByte(',')
	}
	return b.String()
}

// nearestRequest parses one row's arguments; nil when its query (vector
// or key) is NULL.
func nearestRequest(e *Engine, values []driver.Value, byKey bool) (*request, error) {
	fn := "ivf_nearest"
	if byKey {
		fn = "ivf_nearest_key"
	}
	args := make([]any, len(values))
	for i, v := range values {
		args[i] = v
	}
	r, err := e.parseArgs(fn, args)
	if err != nil {
		return nil, err
	}
	switch q := args[1].(type) {
	case nil:
		return nil, nil
	case string:
		r.byKey, r.text = true, q
	default:
		if r.vec, err = queryVector(q); err != nil {
			return nil, err
		}
	}
	return &r, nil
}

// queryVector reads ivf_nearest's query vector argument: nil for NULL.
func queryVector(v driver.Value) ([]float32, error) {
	switch q := v.(type) {
	case nil:
		return nil, nil
	case []any:
		vec := make([]float32, len(q))
		for i, x := range q {
			f, ok := x.(float32)
			if !ok {
				return nil, badArg("ivf_nearest: query_vector[%d] is NULL", i)
			}
			vec[i] = f
		}
		return vec, nil
	default:
		return nil, badArg("ivf_nearest: want a list of numbers or a key, not %T", q)
	}
}

// hitList is res as ivf_nearest's list of structs.
func hitList(res *query.Result) (any, error) {
	out := make([]any, len(res.Hits))
	for i, jr := range res.JSONRows() {
		b, err := jr.MarshalJSON()
		if err != nil {
			return nil, err
		}
		out[i] = map[string]any{"_distance": jr.Distance, "_row": string(b)}
	}
	return out, nil
}
