//go:build duckdb

package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// flightRows runs stmt over Flight SQL and returns its rows as JSON texts
// per column.
func flightRows(ctx context.Context, cl *flightsql.Client, stmt string) ([]map[string]string, error) {
	info, err := cl.Execute(ctx, stmt)
	if err != nil {
		return nil, err
	}
	rdr, err := cl.DoGet(ctx, info.Endpoint[0].Ticket)
	if err != nil {
		return nil, err
	}
	defer rdr.Release()
	var out []map[string]string
	for rdr.Next() {
		rec := rdr.RecordBatch()
		for r := 0; r < int(rec.NumRows()); r++ {
			m := map[string]string{}
			for c, f := range rdr.Schema().Fields() {
				b, _ := json.Marshal(rec.Column(c).GetOneForMarshal(r))
				m[f.Name] = string(b)
			}
			out = append(out, m)
		}
	}
	return out, rdr.Err()
}

// TestServeSQLAllowDir: over Flight SQL, parqdb serve joins search
// results with the index's source (source('words')), reads files in a
// --sql-allow-dir directory, and refuses every other file, including one
// in a sibling directory whose name the allowed one prefixes.
func TestServeSQLAllowDir(t *testing.T) {
	wh := cliIndex(t)
	root := t.TempDir()
	b, err := os.ReadFile("../../examples/glove/glove-10k.parquet")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"data", "data2"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, d, "g.parquet"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, faddr := startServe(t, wh, "--flight", "127.0.0.1:0", "--sql-allow-dir", filepath.Join(root, "data"))
	cl, err := flightsql.NewClient(faddr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	got, err := flightRows(ctx, cl, `SELECT r.word, s.rank, g.rank AS g_rank FROM ivf_search_key('words', 'king', 3) r
		JOIN source('words') s USING (word) JOIN read_parquet('`+filepath.Join(root, "data", "g.parquet")+`') g USING (word)
		ORDER BY r._distance`)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0]["word"] != `"king"` || got[0]["rank"] != "692" || got[0]["g_rank"] != "692" {
		t.Fatalf("join: %v", got)
	}
	for _, stmt := range []string{
		"SELECT count(*) FROM read_parquet('" + filepath.Join(root, "data2", "g.parquet") + "')",
		"SELECT * FROM read_csv('/etc/passwd')",
	} {
		if _, err := flightRows(ctx, cl, stmt); err == nil || !strings.Contains(err.Error(), "disabled by configuration") {
			t.Errorf("%s: %v, want a refusal", stmt, err)
		}
	}
	if out, code := runCLI(t, wh, "serve", "--flight", "", "--sql-allow-dir", filepath.Join(root, "nope")); code != exitUsage || !strings.Contains(out, "--sql-allow-dir") {
		t.Errorf("a missing --sql-allow-dir: exit %d\n%s", code, out)
	}
}

// TestServeSQLMemory: with --sql-memory 64MiB, a statement that needs
// more fails over Flight SQL with an error naming the limit, and the
// server keeps answering; parqdb sql takes the same flag, and a bound
// that cannot be parsed or is below 16 MiB is a usage error.
func TestServeSQLMemory(t *testing.T) {
	wh := cliIndex(t)
	_, faddr := startServe(t, wh, "--flight", "127.0.0.1:0", "--sql-memory", "64MiB")
	cl, err := flightsql.NewClient(faddr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	const hungry = "SELECT count(*) FROM (SELECT * FROM range(40000000) ORDER BY random())"
	for i := 0; i < 2; i++ {
		if _, err := flightRows(ctx, cl, hungry); err == nil || !strings.Contains(err.Error(), "SQL memory limit of 64.0 MiB") {
			t.Fatalf("memory-hungry statement: %v, want the limit named", err)
		}
		got, err := flightRows(ctx, cl, "SELECT count(*) AS n FROM words")
		if err != nil || len(got) != 1 || got[0]["n"] != "10000" {
			t.Fatalf("after it: %v, %v", got, err)
		}
	}
	if out, code := runCLI(t, wh, "sql", "--sql-memory", "64MiB", hungry); code != exitUsage || !strings.Contains(out, "SQL memory limit of 64.0 MiB") {
		t.Errorf("parqdb sql --sql-memory 64MiB: exit %d\n%s", code, out)
	}
	for _, args := range [][]string{
		{"sql", "--sql-memory", "1MiB", "SELECT 1"},
		{"sql", "--sql-memory", "lots", "SELECT 1"},
		{"serve", "--flight", "", "--sql-memory", "15MiB"},
	} {
		if out, code := runCLI(t, append([]string{wh}, args...)...); code != exitUsage || !strings.Contains(out, "--sql-memory") {
			t.Errorf("%v: exit %d\n%s", args, code, out)
		}
	}
}
