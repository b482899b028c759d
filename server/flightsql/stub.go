//go:build !duckdb

package flightsql

import (
	"context"
	"crypto/tls"
	"net"

	"github.com/parqdb/parqdb/server/sqlengine"
)

// Available reports whether this binary was built with Flight SQL.
const Available = false

// Serve returns sqlengine.ErrUnavailable: this binary was built without
// the duckdb tags.
func Serve(ctx context.Context, ln net.Listener, srv Backend) error {
	return sqlengine.ErrUnavailable
}

// ServeTLS returns sqlengine.ErrUnavailable: this binary was built
// without the duckdb tags.
func ServeTLS(ctx context.Context, ln net.Listener, srv Backend, cfg *tls.Config) error {
	return sqlengine.ErrUnavailable
}
