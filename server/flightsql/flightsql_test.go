//go:build duckdb

package flightsql_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/server"
	pqflight "github.com/parqdb/parqdb/server/flightsql"
	"github.com/parqdb/parqdb/server/serving"
	"github.com/parqdb/parqdb/storage"
)

const secret = "flight-token"

// start builds the GloVe sample, serves it over Flight SQL with a token
// and returns a client and an index opened directly.
func start(t *testing.T) (*flightsql.Client, *query.Index) {
	t.Helper()
	addr, ix := serve(t, serveOptions{})
	cl, err := flightsql.NewClient(addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl, ix
}

// serveOptions vary serve.
type serveOptions struct {
	tls *tls.Config // nil: plain text
	log io.Writer   // server log (nil: discarded)
}

// serve builds the GloVe sample as index "words", serves it over Flight
// SQL with the token secret until the test ends, and returns the address
// and the index opened directly.
func serve(t *testing.T, o serveOptions) (string, *query.Index) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	wh, err := storage.NewLocal(filepath.Join(dir, "wh"))
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.OpenSQLite(ctx, filepath.Join(dir, "wh", "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	src, _ := filepath.Abs("../../examples/glove/glove-10k.parquet")
	if _, err := indexer.Create(ctx, indexer.Env{Warehouse: wh, Catalog: cat}, indexer.Options{
		Name: "words", Source: src, VectorField: "embedding", KeyFields: []string{"word"}, Metric: "cosine", NList: 64,
	}); err != nil {
		t.Fatal(err)
	}
	env := query.Env{Warehouse: wh, Catalog: cat}
	tok, _ := serving.NewToken(secret)
	if o.log == nil {
		o.log = io.Discard
	}
	srv, err := server.New(server.Config{Env: env, Token: tok, Logger: slog.New(slog.NewTextHandler(o.log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- pqflight.ServeTLS(sctx, ln, srv, o.tls) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		srv.Close()
	})
	ix, err := query.Open(ctx, env, "words", query.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ln.Addr().String(), ix
}

func bearer(ctx context.Context) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+secret)
}

// run executes a statement and returns its column names and its rows as
// JSON texts per column.
func run(ctx context.Context, cl *flightsql.Client, stmt string) ([]string, []map[string]string, error) {
	info, err := cl.Execute(ctx, stmt)
	if err != nil {
		return nil, nil, err
	}
	rdr, err := cl.DoGet(ctx, info.Endpoint[0].Ticket)
	if err != nil {
		return nil, nil, err
	}
	defer rdr.Release()
	var names []string
	for _, f := range rdr.Schema().Fields() {
		names = append(names, f.Name)
	}
	var rows []map[string]string
	for rdr.Next() {
		rec := rdr.RecordBatch()
		for r := 0; r < int(rec.NumRows()); r++ {
			m := map[string]string{}
			for c, n := range names {
				b, _ := json.Marshal(rec.Column(c).GetOneForMarshal(r))
				m[n] = string(b)
			}
			rows = append(rows, m)
		}
	}
	return names, rows, rdr.Err()
}

func TestFlightSQLEqualsQuery(t *testing.T) {
	cl, ix := start(t)
	ctx := bearer(context.Background())
	vals, _ := ix.ParseKey([]string{"king"})
	king, err := ix.VectorOf(ctx, vals)
	if err != nil {
		t.Fatal(err)
	}
	vec, _ := json.Marshal(king)
	for _, tc := range []struct {
		sql  string
		opts query.Options
	}{
		{"SELECT * FROM ivf_search_key('words', 'king', 10)", query.Options{K: 10, NProbe: 8}},
		{fmt.Sprintf("SELECT * FROM ivf_search('words', '%s', 7, 16, 3)", vec), query.Options{K: 7, NProbe: 16, Refine: 3}},
	} {
		names, rows, err := run(ctx, cl, tc.sql)
		if err != nil {
			t.Fatal(err)
		}
		want, err := ix.Search(ctx, king, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(names) != fmt.Sprint(want.Columns) || len(rows) != len(want.Hits) {
			t.Fatalf("%v, %d rows; want %v, %d", names, len(rows), want.Columns, len(want.Hits))
		}
		for i, h := range want.Hits {
			for _, c := range want.Columns {
				w := any(h.Distance)
				if c != "_distance" {
					w = h.Row[c]
				}
				wj, _ := json.Marshal(w)
				if rows[i][c] != string(wj) {
					t.Fatalf("row %d %s: %s, want %s", i, c, rows[i][c], wj)
				}
			}
		}
	}
	_, rows, err := run(ctx, cl, "SELECT r.word, r._distance FROM ivf_search_key('words', 'king', 10) r WHERE r.word <> 'king'")
	if err != nil || len(rows) != 9 {
		t.Fatalf("join/filter: %v, %d rows", err, len(rows))
	}
}

func TestFlightSQLErrorsAndAuth(t *testing.T) {
	cl, _ := start(t)
	auth := bearer(context.Background())
	basicCtx, err := cl.Client.AuthenticateBasicToken(context.Background(), "anyone", secret)
	if err != nil {
		t.Fatalf("basic auth handshake: %v", err)
	}
	wrong := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer nope")
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		sql   string
		code  codes.Code
		token string
	}{
		{"basic auth", basicCtx, "SELECT count(*) FROM ivf_search_key('words', 'king', 3)", codes.OK, ""},
		{"missing token", context.Background(), "SELECT 1", codes.Unauthenticated, serving.CodeUnauthenticated},
		{"wrong token", wrong, "SELECT 1", codes.Unauthenticated, serving.CodeUnauthenticated},
		{"SQL error", auth, "SELEC 1", codes.InvalidArgument, serving.CodeSQLError},
		{"unknown index", auth, "SELECT * FROM ivf_search_key('nope', 'king', 3)", codes.NotFound, serving.CodeIndexNotFound},
		{"k = 0", auth, "SELECT * FROM ivf_search_key('words', 'king', 0)", codes.InvalidArgument, serving.CodeOutOfRange},
		{"wrong dimension", auth, "SELECT * FROM ivf_search('words', '[1, 2]', 3)", codes.InvalidArgument, serving.CodeWrongDimension},
		{"no file access", auth, "SELECT * FROM read_text('/etc/hostname')", codes.InvalidArgument, serving.CodeSQLError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := run(tc.ctx, cl, tc.sql)
			st, _ := status.FromError(err)
			if st.Code() != tc.code || !strings.HasPrefix(st.Message(), tc.token) {
				t.Fatalf("got %v, want %v %s", err, tc.code, tc.token)
			}
		})
	}
}
