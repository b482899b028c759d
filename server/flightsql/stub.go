//go:build !duckdb

package flightsql

import (
	"context"
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
