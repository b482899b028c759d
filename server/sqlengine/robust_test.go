//go:build duckdb

package sqlengine_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/parqdb/parqdb/server/serving"
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

// TestOddArguments: every search function, with each argument in turn
// replaced by a NULL (typed or not), a value of the wrong type or an
// out-of-range value, answers rows or a clear error (a *serving.Error with
// a code that is not internal and a message), never a crash; the engine
// keeps answering.
func TestOddArguments(t *testing.T) {
	e, ix := newEngine(t)
	vec := make([]float32, ix.Dim())
	vec[0] = 1
	good := map[string]string{
		"index_name": "'words'", "query_vector": "'" + vectorText(vec) + "'", "key": "'king'", "k": "3",
		"where_predicate": "'rank > 5'",
	}
	odd := []string{
		"NULL", "CAST(NULL AS BIGINT)", "CAST(NULL AS VARCHAR)", "CAST(NULL AS FLOAT[])", "''", "-1", "0",
		"9223372036854775807", "1.5", "[]", "[NULL]", "'x'", "TRUE", "{'a': 1}", "'[1, 2'", "['word', NULL]",
	}
	type call struct {
		name   string
		fixed  []string
		scalar bool
	}
	calls := []call{
		{"ivf_search", []string{"index_name", "query_vector", "k"}, false},
		{"ivf_search_key", []string{"index_name", "key", "k"}, false},
		{"ivf_search_where", []string{"index_name", "query_vector", "k", "where_predicate"}, false},
		{"ivf_search_key_where", []string{"index_name", "key", "k", "where_predicate"}, false},
		{"ivf_nearest", []string{"index_name", "query_vector", "k"}, true},
	}
	named := []string{"nprobe", "refine", "snapshot", "columns", "filter"}
	stmt := func(c call, args []string) string {
		if c.scalar {
			return "SELECT unnest(" + c.name + "(" + strings.Join(args, ", ") + "))"
		}
		return "SELECT * FROM " + c.name + "(" + strings.Join(args, ", ") + ")"
	}
	var stmts []string
	for _, c := range calls {
		base := make([]string, len(c.fixed))
		for i, p := range c.fixed {
			base[i] = good[p]
			if c.scalar && p == "query_vector" {
				base[i] = "CAST(" + base[i] + " AS FLOAT[])"
			}
		}
		for i := range c.fixed {
			for _, v := range odd {
				args := append([]string{}, base...)
				args[i] = v
				stmts = append(stmts, stmt(c, args))
			}
		}
		for _, n := range named {
			for _, v := range odd {
				stmts = append(stmts, stmt(c, append(append([]string{}, base...), n+" := "+v)))
			}
		}
		stmts = append(stmts, stmt(c, base[:len(base)-1]), stmt(c, append(append([]string{}, base...), "nope := 1")),
			stmt(c, append(append([]string{}, base...), "1", "2", "3", "4", "5", "6", "7")))
	}
	stmts = append(stmts, "SELECT * FROM source(NULL)", "SELECT * FROM source(1)", "SELECT * FROM source('')")
	for _, s := range stmts {
		err := queryErr(e, s)
		if err == nil {
			continue
		}
		var ae *serving.Error
		if !errors.As(err, &ae) || ae.Code == serving.CodeInternal || ae.Message == "" {
			t.Errorf("%s: %v (%T), want rows or a clear error", s, err, err)
		}
	}
	if _, got := rows(t, e, "SELECT 42 AS x"); len(got) != 1 || got[0]["x"] != "42" {
		t.Fatalf("engine after %d odd statements: %v", len(stmts), got)
	}
	t.Logf("%d statements", len(stmts))
}
