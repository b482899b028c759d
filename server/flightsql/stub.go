//go:build !duckdb

package flightsql

import (
	"context"
	"crypto/tls"
	"net"

	"github.com/parqdb/parqdb/server"
	"github.com/parqdb/parqdb/server/sqlengine"
)

// Available reports whether this binary was built with Flight SQL.
const Available = false

// Serve returns sqlengine.ErrUnavailable: this binary was built without
// the duckdb tags.
func Serve(ctx context.Context, ln net.Listener, srv *server.Server) error {
	return sqlengine.ErrUnavailable
}

// ServeTLS returns sqlengine.ErrUnavailable: this binary was built
// without the duckdb tags.
func ServeTLS(ctx context.Context, ln net.Listener, srv *server.Server, cfg *tls.Config) error {
	return sqlengine.ErrUnavailable
}
