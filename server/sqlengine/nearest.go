//go:build duckdb

package sqlengine

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"runtime"

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

// nearestChunk searches for the rows of one chunk (up to 2,048) at once,
// GOMAXPROCS at a time (each search still takes its own admission slot):
// DuckDB often calls a scalar function from one thread, as when a query
// reads one Parquet row group.
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
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, vals := range rows {
		g.Go(func() error {
			var err error
			out[i], err = e.nearestRow(gctx, vals, byKey)
			return err
		})
	}
	if err := g.Wait(); err != nil {
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

// nearestRow searches for one row.
func (e *Engine) nearestRow(ctx context.Context, values []driver.Value, byKey bool) (any, error) {
	if ctx == nil {
		ctx = context.Background()
	}
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
		return nil, record(ctx, err)
	}
	switch q := args[1].(type) {
	case nil:
		return nil, nil
	case string:
		r.byKey, r.text = true, q
	case []any:
		r.vec = make([]float32, len(q))
		for i, x := range q {
			f, ok := x.(float32)
			if !ok {
				return nil, record(ctx, badArg("%s: query_vector[%d] is NULL", fn, i))
			}
			r.vec[i] = f
		}
	default:
		return nil, record(ctx, badArg("%s: want a list of numbers or a key, not %T", fn, q))
	}
	res, err := e.search(ctx, r)
	if err != nil {
		return nil, record(ctx, err)
	}
	return hitList(res)
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
