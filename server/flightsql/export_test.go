//go:build duckdb

package flightsql

import "time"

// SetPreparedIdle sets how long prepared statements stay open unused and
// returns a function that restores it.
func SetPreparedIdle(d time.Duration) (restore func()) {
	old := preparedIdle
	preparedIdle = d
	return func() { preparedIdle = old }
}
