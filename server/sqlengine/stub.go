//go:build !duckdb

package sqlengine

import (
	"context"
	"github.com/parqdb/parqdb/server/serving"
	"io"
)

// Available reports whether this binary was built with DuckDB.
const Available = false

// Engine is unavailable in this build.
type Engine struct{}

// New returns ErrUnavailable.
func New(pool *serving.Pool, opts Options) (*Engine, error) { return nil, ErrUnavailable }

// Print returns ErrUnavailable.
func (e *Engine) Print(ctx context.Context, sql string, w io.Writer, format string) error {
	return ErrUnavailable
}

// Close does nothing.
func (e *Engine) Close() error { return nil }
