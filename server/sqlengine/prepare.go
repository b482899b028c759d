//go:build duckdb

package sqlengine

import (
	"context"
	"database/sql/driver"
	"fmt"
	"github.com/parqdb/parqdb/server/serving"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/duckdb/duckdb-go/v2"
)

// Prepared describes a statement with positional parameters (? or $n)
// before it runs: how many parameters it takes and DuckDB's type for
// each.
type Prepared struct {
	// Statement is the SQL text.
	Statement string
	// Params are the parameters' DuckDB types, in order (TYPE_INVALID when
	// DuckDB cannot tell before the values are known).
	Params []duckdb.Type
}

// refuse rejects statements that name the internal functions (see
// functions.go): they must go through the macros.
func refuse(statement string) error {
	if l := strings.ToLower(statement); strings.Contains(l, internalPrefix) || strings.Contains(l, "u&") {
		return &serving.Error{Status: 400, Code: serving.CodeSQLError,
			Message: "statements may not name ParqDB's internal functions or use U& escapes; call ivf_search, ivf_search_key or ivf_nearest",
			Err:     ErrSQL}
	}
	return nil
}

// Prepare parses and binds statement without running it and reports its
// parameters. A statement whose table function arguments are all
// constants is bound (and so searches) here too.
func (e *Engine) Prepare(ctx context.Context, statement string) (*Prepared, error) {
	if err := refuse(statement); err != nil {
		return nil, err
	}
	ctx, h := withHolder(ctx, e.memory)
	conn, err := e.db.Conn(ctx)
	if err != nil {
		return nil, serving.AsError(err)
	}
	defer conn.Close()
	p := &Prepared{Statement: statement}
	err = conn.Raw(func(dc any) error {
		pc, ok := dc.(driver.ConnPrepareContext)
		if !ok {
			return fmt.Errorf("duckdb connection cannot prepare")
		}
		st, err := pc.PrepareContext(ctx, statement)
		if err != nil {
			return err
		}
		defer st.Close()
		ds, ok := st.(*duckdb.Stmt)
		if !ok {
			return fmt.Errorf("duckdb statement has type %T", st)
		}
		for i := 1; i <= ds.NumInput(); i++ {
			t, err := ds.ParamType(i)
			if err != nil {
				return err
			}
			p.Params = append(p.Params, t)
		}
		return nil
	})
	if err != nil {
		return nil, classify(ctx, h, err)
	}
	return p, nil
}

// QueryArgs is Query with values for the statement's positional
// parameters (nil, bool, int64, float64, string or []byte). Query and the
// prepared statements of Flight SQL both run here, so both get the same
// checks: no internal function names and, without external access, only
// queries (no COPY … TO into an allowed directory).
func (e *Engine) QueryArgs(ctx context.Context, statement string, args []any) (array.RecordReader, error) {
	if err := refuse(statement); err != nil {
		return nil, err
	}
	ctx, h := withHolder(ctx, e.memory)
	conn, err := e.db.Conn(ctx)
	if err != nil {
		return nil, serving.AsError(err)
	}
	var ar *duckdb.Arrow
	err = conn.Raw(func(dc any) error {
		var err error
		ar, err = duckdb.NewArrowFromConn(dc.(driver.Conn))
		return err
	})
	if err != nil {
		conn.Close()
		return nil, serving.AsError(err)
	}
	if !e.opts.ExternalAccess {
		if err := onlyQueries(ctx, conn, statement); err != nil {
			conn.Close()
			return nil, err
		}
	}
	if _, err := conn.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		conn.Close()
		return nil, serving.AsError(err)
	}
	rr, err := ar.QueryContext(ctx, statement, args...)
	if err != nil {
		rollback(conn)
		return nil, classify(ctx, h, err)
	}
	e.open.Add(1)
	return &reader{RecordReader: rr, conn: conn, e: e, ctx: ctx, h: h}, nil
}
