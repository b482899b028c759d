//go:build duckdb

package sqlengine_test

import (
	"strconv"
	"strings"
	"testing"
)

// TestTypedNullReachesGoFunction: a statement can reach the Go table
// functions behind the macros without naming them (query() runs a
// constant string, and duckdb_functions() lists their names), so their
// NULL arguments must not abort the process: duckdb-go before
// v2.20000.0 read a NULL argument with a C call that threw through cgo
// (SIGABRT). The engine answers with an error and keeps serving.
func TestTypedNullReachesGoFunction(t *testing.T) {
	e, _ := newEngine(t)
	_, fns := rows(t, e, `SELECT function_name, len(parameters) AS n FROM duckdb_functions() WHERE function_name LIKE 'parqdb%' ORDER BY 1`)
	if len(fns) == 0 {
		t.Fatal("no internal functions listed")
	}
	for _, f := range fns {
		name := strings.TrimPrefix(strings.Trim(f["function_name"].(string), `"`), "parqdb_")
		n, _ := strconv.Atoi(f["n"].(string))
		rest := strings.Repeat(", NULL", n-3)
		for _, args := range []string{
			"NULL, NULL, NULL" + rest,
			"''words'', ''king'', CAST(NULL AS BIGINT)" + rest,
			"''words'', CAST(NULL AS VARCHAR), 5" + rest,
		} {
			stmt := "SELECT * FROM query('SELECT * FROM parqdb_' || '" + name + "(" + args + ")')"
			err := queryErr(e, stmt)
			if err == nil || strings.Contains(err.Error(), "No function matches") {
				t.Errorf("%s: %v, want an argument error from the function", stmt, err)
			}
		}
	}
	if _, got := rows(t, e, "SELECT 42 AS x"); len(got) != 1 || got[0]["x"] != "42" {
		t.Fatalf("engine after NULL arguments: %v", got)
	}
}
