//go:build duckdb

package sqlengine

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/duckdb/duckdb-go/v2"

	"github.com/parqdb/parqdb/server/serving"
)

// Available reports whether this binary was built with DuckDB.
const Available = true

// dsn configures the database: without external access, no access to
// files or the network from SQL but the allowed paths (the server reads
// the warehouse and the bound sources through ivf_search and the source
// views), no extension loading; with it, DuckDB's defaults for a local
// user (known extensions such as httpfs load on first use).
func dsn(external bool) string {
	if external {
		return "?allow_community_extensions=false"
	}
	// enable_external_access is turned off in createViews, after the
	// allowed paths are set: DuckDB refuses to change them afterwards.
	return "?autoinstall_known_extensions=false&autoload_known_extensions=false&allow_community_extensions=false"
}

// Engine is an embedded DuckDB database with ParqDB's table functions. It
// is safe for concurrent use: each statement runs on its own connection.
type Engine struct {
	conn *duckdb.Connector
	db   *sql.DB
	reg  *sql.Conn // the connection the functions were registered on
	pool *serving.Pool
	opts Options
	open atomic.Int64

	registered  atomic.Bool
	sourceMacro atomic.Pointer[string] // CREATE MACRO source(…), by createViews
	memory      int64                  // DuckDB's memory_limit, bytes
}

// New opens an in-memory DuckDB and registers ivf_search and
// ivf_search_key over pool. Close releases it (not the pool).
func New(pool *serving.Pool, opts Options) (*Engine, error) {
	if err := opts.Limits.Validate(); err != nil {
		return nil, err
	}
	dirs, err := checkDirs(opts.AllowedDirs)
	if err != nil {
		return nil, err
	}
	e := &Engine{pool: pool, opts: opts, memory: opts.MemoryLimit}
	if e.memory == 0 {
		e.memory = DefaultMemoryLimit()
	}
	if e.memory < MinMemoryLimit {
		return nil, fmt.Errorf("SQL memory limit %d bytes: below the minimum of %d (16 MiB)", e.memory, MinMemoryLimit)
	}
	// The macros name the Go functions, so they can be created only on
	// connections opened after the registration.
	c, err := duckdb.NewConnector(dsn(opts.ExternalAccess), func(ex driver.ExecerContext) error {
		if !e.registered.Load() {
			return nil
		}
		m := macros
		if src := e.sourceMacro.Load(); src != nil {
			m += *src
		}
		_, err := ex.ExecContext(context.Background(), m, nil)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("duckdb: %w", err)
	}
	e.conn, e.db = c, sql.OpenDB(c)
	// Every statement gets a new connection (with fresh temporary macros)
	// and runs in a transaction that is rolled back: statements leave no
	// state behind for the next client.
	e.db.SetMaxIdleConns(0)
	ctx := context.Background()
	if e.reg, err = e.db.Conn(ctx); err != nil {
		e.Close()
		return nil, fmt.Errorf("duckdb: %w", err)
	}
	if err := e.register(e.reg); err != nil {
		e.Close()
		return nil, fmt.Errorf("duckdb: register table functions: %w", err)
	}
	e.registered.Store(true)
	if err := e.createViews(ctx, dirs, e.memory); err != nil {
		e.Close()
		return nil, fmt.Errorf("duckdb: %w", err)
	}
	// Nothing a statement runs may change the settings above.
	if _, err := e.reg.ExecContext(ctx, "SET lock_configuration = true"); err != nil {
		e.Close()
		return nil, fmt.Errorf("duckdb: %w", err)
	}
	return e, nil
}

// Close closes the database.
func (e *Engine) Close() error {
	var errs []error
	if e.reg != nil {
		errs = append(errs, e.reg.Close())
	}
	errs = append(errs, e.db.Close(), e.conn.Close())
	return errors.Join(errs...)
}

// errKey carries an *errHolder in a statement's context, so that a table
// function's error keeps its API code through DuckDB.
type errKey struct{}

type errHolder struct {
	err    atomic.Pointer[serving.Error]
	memory int64 // the engine's memory limit, for the message
}

func withHolder(ctx context.Context, memory int64) (context.Context, *errHolder) {
	h := &errHolder{memory: memory}
	return context.WithValue(ctx, errKey{}, h), h
}

func record(ctx context.Context, err error) error {
	ae := serving.AsError(err)
	if h, ok := ctx.Value(errKey{}).(*errHolder); ok {
		h.err.CompareAndSwap(nil, ae)
	}
	return ae
}

// classify turns a statement's failure into an *serving.Error: the table
// function's own error when it failed, else a sql_error for a statement
// DuckDB rejected, else internal.
func classify(ctx context.Context, h *errHolder, err error) error {
	if ae := h.err.Load(); ae != nil {
		return ae
	}
	if ctx.Err() != nil {
		return serving.AsError(ctx.Err())
	}
	var de *duckdb.Error
	if errors.As(err, &de) && de.Type == duckdb.ErrorTypeOutOfMemory {
		return &serving.Error{Status: 400, Code: serving.CodeSQLError, Err: fmt.Errorf("%w: %w", ErrSQL, err),
			Message: fmt.Sprintf("the statement needs more than the SQL memory limit of %s (--sql-memory; nothing spills to disk): %s", formatBytes(h.memory), firstLine(de.Error()))}
	}
	if errors.As(err, &de) {
		return &serving.Error{Status: 400, Code: serving.CodeSQLError, Message: de.Error(), Err: fmt.Errorf("%w: %w", ErrSQL, err)}
	}
	return &serving.Error{Status: 400, Code: serving.CodeSQLError, Message: err.Error(), Err: fmt.Errorf("%w: %w", ErrSQL, err)}
}

// Query runs one statement and returns its result as a stream of Arrow
// record batches. The caller must Release the reader; errors are
// *serving.Error values (sql_error for a statement DuckDB rejects, the
// API's codes for a bad ivf_search argument).
func (e *Engine) Query(ctx context.Context, statement string) (array.RecordReader, error) {
	return e.QueryArgs(ctx, statement, nil)
}

// onlyQueries refuses a statement that is not a query (all of them, if
// several): without external access the engine reads its allowed paths
// but must not write them, and DuckDB's allowed_directories allow COPY …
// TO as well as reading. DuckDB's parser says (json_serialize_sql
// serializes SELECT statements only, SHOW, DESCRIBE and SUMMARIZE
// included); a statement that does not parse goes on, for DuckDB's own
// error.
func onlyQueries(ctx context.Context, conn *sql.Conn, statement string) error {
	var text string
	if err := conn.QueryRowContext(ctx, "SELECT CAST(json_serialize_sql(CAST(? AS VARCHAR)) AS VARCHAR)", statement).Scan(&text); err != nil {
		return serving.AsError(err)
	}
	var res struct {
		Error     bool   `json:"error"`
		ErrorType string `json:"error_type"`
	}
	if err := json.Unmarshal([]byte(text), &res); err != nil {
		return serving.AsError(fmt.Errorf("check statement: %w", err))
	}
	if res.Error && res.ErrorType != "parser" {
		return &serving.Error{Status: 400, Code: serving.CodeSQLError, Err: ErrSQL,
			Message: "this SQL is read-only: only queries run (SELECT, FROM …, WITH …, SHOW, DESCRIBE, SUMMARIZE); COPY, EXPORT, ATTACH, SET, PRAGMA, EXPLAIN and the like are refused"}
	}
	return nil
}

// reader keeps the statement's connection until the last Release.
type reader struct {
	array.RecordReader
	conn *sql.Conn
	e    *Engine
	ctx  context.Context
	h    *errHolder
	refs atomic.Int64
}

func (r *reader) Retain() { r.refs.Add(1); r.RecordReader.Retain() }

func (r *reader) Release() {
	r.RecordReader.Release()
	if r.refs.Add(-1) < 0 && r.conn != nil {
		rollback(r.conn)
		r.conn = nil
		r.e.open.Add(-1)
	}
}

func (r *reader) Err() error {
	if err := r.RecordReader.Err(); err != nil {
		return classify(r.ctx, r.h, err)
	}
	return nil
}

// Schema is the result schema.
func (r *reader) Schema() *arrow.Schema { return r.RecordReader.Schema() }

// firstLine is the first line of DuckDB's message (its advice on
// temporary directories and threads does not apply here).
func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// formatBytes prints n in MiB or GiB.
func formatBytes(n int64) string {
	if n >= 1<<30 {
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// rollback ends the statement's transaction (if still open) and closes
// its connection.
func rollback(conn *sql.Conn) {
	_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
	conn.Close()
}
