//go:build duckdb

package flightsql_test

// The ADBC suite drives the server with the Go ADBC Flight SQL driver
// (apache/arrow-adbc), the client that JDBC/ADBC-based tools build on: it
// calls the metadata methods before any query, prepares statements and
// binds parameters as Arrow record batches.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-adbc/go/adbc"
	adbcflight "github.com/apache/arrow-adbc/go/adbc/driver/flightsql"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/parqdb/parqdb/internal/testcert"
	"github.com/parqdb/parqdb/internal/version"
	"github.com/parqdb/parqdb/query"
	pqflight "github.com/parqdb/parqdb/server/flightsql"
)

// connect opens an ADBC connection to uri with the token and extra
// options; it returns the error of the first call that fails.
func connect(t *testing.T, uri string, extra map[string]string) (adbc.Connection, error) {
	t.Helper()
	opts := map[string]string{adbc.OptionKeyURI: uri, adbcflight.OptionAuthorizationHeader: "Bearer " + secret}
	for k, v := range extra {
		if v == "" {
			delete(opts, k)
		} else {
			opts[k] = v
		}
	}
	db, err := adbcflight.NewDriver(memory.DefaultAllocator).NewDatabase(opts)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { db.Close() })
	cn, err := db.Open(context.Background())
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { cn.Close() })
	return cn, nil
}

// adbcServer serves the sample in plain text and returns an ADBC
// connection with the token, and the index opened directly.
func adbcServer(t *testing.T) (adbc.Connection, *query.Index) {
	t.Helper()
	addr, ix := serve(t, serveOptions{})
	cn, err := connect(t, "grpc://"+addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cn, ix
}

// jsonRows reads a reader to the end as one JSON object per row.
func jsonRows(t *testing.T, rr array.RecordReader) []map[string]any {
	t.Helper()
	defer rr.Release()
	var out []map[string]any
	for rr.Next() {
		var buf bytes.Buffer
		if err := array.RecordToJSON(rr.RecordBatch(), &buf); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(&buf)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatal(err)
			}
			out = append(out, m)
		}
	}
	if err := rr.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestADBCGetInfo(t *testing.T) {
	cn, _ := adbcServer(t)
	rr, err := cn.GetInfo(context.Background(), []adbc.InfoCode{
		adbc.InfoVendorName, adbc.InfoVendorVersion, adbc.InfoVendorArrowVersion, adbc.InfoVendorSql, adbc.InfoVendorSubstrait,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	got := map[adbc.InfoCode]string{}
	for rr.Next() {
		rec := rr.RecordBatch()
		codes := rec.Column(0).(*array.Uint32)
		vals := rec.Column(1).(*array.DenseUnion)
		for i := 0; i < int(rec.NumRows()); i++ {
			child := vals.Field(vals.ChildID(i))
			got[adbc.InfoCode(codes.Value(i))] = child.ValueStr(int(vals.ValueOffset(i)))
		}
	}
	want := map[adbc.InfoCode]string{
		adbc.InfoVendorName:         "parqdb",
		adbc.InfoVendorVersion:      version.String(),
		adbc.InfoVendorArrowVersion: arrow.PkgVersion,
		adbc.InfoVendorSql:          "true",
		adbc.InfoVendorSubstrait:    "false",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("info %d = %q, want %q (all: %v)", k, got[k], w, got)
		}
	}
}

// TestFlightSQLInfoReadOnly: GetSqlInfo tells clients the server is
// read-only and has no transactions, and leaves out the ids it has no
// answer for instead of failing the call.
func TestFlightSQLInfoReadOnly(t *testing.T) {
	cl, _ := start(t)
	ctx := bearer(context.Background())
	info, err := cl.GetSqlInfo(ctx, []flightsql.SqlInfo{flightsql.SqlInfoFlightSqlServerReadOnly, flightsql.SqlInfoFlightSqlServerTransaction})
	if err != nil {
		t.Fatal(err)
	}
	rdr, err := cl.DoGet(ctx, info.Endpoint[0].Ticket)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	got := map[uint32]string{}
	for rdr.Next() {
		rec := rdr.RecordBatch()
		ids := rec.Column(0).(*array.Uint32)
		vals := rec.Column(1).(*array.DenseUnion)
		for i := 0; i < int(rec.NumRows()); i++ {
			got[ids.Value(i)] = vals.Field(vals.ChildID(i)).ValueStr(int(vals.ValueOffset(i)))
		}
	}
	if got[uint32(flightsql.SqlInfoFlightSqlServerReadOnly)] != "true" || got[uint32(flightsql.SqlInfoFlightSqlServerTransaction)] != "0" {
		t.Fatalf("sql info %v: want read-only true, transactions 0 (none)", got)
	}

	// Ids the server has no answer for are left out, not an error.
	for _, tc := range []struct {
		ids  []flightsql.SqlInfo
		want string
	}{
		{[]flightsql.SqlInfo{flightsql.SqlInfoFlightSqlServerName, flightsql.SqlInfoKeywords, 99999}, "[0:parqdb]"},
		{[]flightsql.SqlInfo{flightsql.SqlInfoKeywords}, "[]"},
	} {
		info, err := cl.GetSqlInfo(ctx, tc.ids)
		if err != nil {
			t.Fatal(err)
		}
		rdr, err := cl.DoGet(ctx, info.Endpoint[0].Ticket)
		if err != nil {
			t.Fatalf("%v: %v", tc.ids, err)
		}
		var rows []string
		for rdr.Next() {
			rec := rdr.RecordBatch()
			ids := rec.Column(0).(*array.Uint32)
			vals := rec.Column(1).(*array.DenseUnion)
			for i := 0; i < int(rec.NumRows()); i++ {
				rows = append(rows, fmt.Sprintf("%d:%s", ids.Value(i), vals.Field(vals.ChildID(i)).ValueStr(int(vals.ValueOffset(i)))))
			}
		}
		err = rdr.Err()
		rdr.Release()
		if err != nil || fmt.Sprint(rows) != tc.want {
			t.Fatalf("GetSqlInfo(%v): %v %v, want %s", tc.ids, rows, err, tc.want)
		}
	}
}

func TestADBCGetObjects(t *testing.T) {
	cn, _ := adbcServer(t)
	ctx := context.Background()
	str := func(s string) *string { return &s }
	objects := func(depth adbc.ObjectDepth, table *string, types []string) string {
		t.Helper()
		rr, err := cn.GetObjects(ctx, depth, nil, nil, table, nil, types)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(jsonRows(t, rr))
		return string(b)
	}
	views := func(cols string) string {
		return `[{"catalog_db_schemas":[{"db_schema_name":"main","db_schema_tables":[{"table_columns":` + cols +
			`,"table_constraints":` + map[bool]string{true: "null", false: "[]"}[cols == "null"] + `,"table_name":"words","table_type":"VIEW"}]}],"catalog_name":"parqdb"}]`
	}
	for _, tc := range []struct {
		name  string
		depth adbc.ObjectDepth
		table *string
		types []string
		want  string
	}{
		{"catalogs", adbc.ObjectDepthCatalogs, nil, nil, `[{"catalog_db_schemas":null,"catalog_name":"parqdb"}]`},
		{"db schemas", adbc.ObjectDepthDBSchemas, nil, nil, `[{"catalog_db_schemas":[{"db_schema_name":"main","db_schema_tables":null}],"catalog_name":"parqdb"}]`},
		{"tables", adbc.ObjectDepthTables, nil, nil, views("null")},
		{"tables by pattern", adbc.ObjectDepthTables, str("wor%"), []string{"VIEW"}, views("null")},
		{"no such table", adbc.ObjectDepthTables, str("nope%"), nil, `[{"catalog_db_schemas":[{"db_schema_name":"main","db_schema_tables":[]}],"catalog_name":"parqdb"}]`},
		{"no such type", adbc.ObjectDepthTables, nil, []string{"TABLE"}, `[{"catalog_db_schemas":[{"db_schema_name":"main","db_schema_tables":[]}],"catalog_name":"parqdb"}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := objects(tc.depth, tc.table, tc.types); got != tc.want {
				t.Fatalf("GetObjects:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
	t.Run("columns", func(t *testing.T) {
		rr, err := cn.GetObjects(ctx, adbc.ObjectDepthAll, nil, nil, nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []struct {
			Catalog string `json:"catalog_name"`
			Schemas []struct {
				Tables []struct {
					Name    string `json:"table_name"`
					Columns []struct {
						Name string `json:"column_name"`
						Pos  int    `json:"ordinal_position"`
						Type string `json:"xdbc_type_name"`
					} `json:"table_columns"`
				} `json:"db_schema_tables"`
			} `json:"catalog_db_schemas"`
		}
		b, _ := json.Marshal(jsonRows(t, rr))
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || len(got[0].Schemas) != 1 || len(got[0].Schemas[0].Tables) != 1 {
			t.Fatalf("GetObjects(all): %s", b)
		}
		var cols []string
		for i, c := range got[0].Schemas[0].Tables[0].Columns {
			if c.Pos != i+1 {
				t.Errorf("column %s at ordinal %d, want %d", c.Name, c.Pos, i+1)
			}
			cols = append(cols, c.Name+" "+c.Type)
		}
		if want := "[word VARCHAR rank INTEGER embedding FLOAT[] _distance FLOAT]"; fmt.Sprint(cols) != want {
			t.Fatalf("columns %v, want the search result's %s", cols, want)
		}
	})
}

// queryADBC runs a statement through ADBC and returns its schema and rows.
func queryADBC(t *testing.T, cn adbc.Connection, sql string) (*arrow.Schema, []map[string]any) {
	t.Helper()
	st, err := cn.NewStatement()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.SetSqlQuery(sql); err != nil {
		t.Fatal(err)
	}
	rr, _, err := st.ExecuteQuery(context.Background())
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	sc := rr.Schema()
	return sc, jsonRows(t, rr)
}

func TestADBCGetTableSchemaAndTypes(t *testing.T) {
	cn, _ := adbcServer(t)
	ctx := context.Background()
	sc, err := cn.GetTableSchema(ctx, nil, nil, "words")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := queryADBC(t, cn, "SELECT * FROM ivf_search_key('words', 'king', 3)")
	if sc.NumFields() != want.NumFields() {
		t.Fatalf("GetTableSchema:\n%v\nwant the result schema\n%v", sc, want)
	}
	var types []string
	for i, f := range sc.Fields() {
		if w := want.Field(i); f.Name != w.Name || !arrow.TypeEqual(f.Type, w.Type) {
			t.Fatalf("GetTableSchema field %d: %v, want the result's %v", i, f, w)
		}
		md := flightsql.ColumnMetadata{Data: &f.Metadata}
		tn, _ := md.TypeName()
		table, _ := md.TableName()
		ro, _ := md.IsReadOnly()
		if table != "words" || !ro {
			t.Fatalf("field %s metadata %v: want table words, read-only", f.Name, f.Metadata)
		}
		types = append(types, tn)
	}
	if fmt.Sprint(types) != "[VARCHAR INTEGER FLOAT[] FLOAT]" {
		t.Fatalf("column type names %v, want [VARCHAR INTEGER FLOAT[] FLOAT]", types)
	}
	if _, err := cn.GetTableSchema(ctx, nil, nil, "nope"); !isADBC(err, adbc.StatusNotFound) {
		t.Fatalf("unknown table: %v, want NotFound", err)
	}
	rr, err := cn.GetTableTypes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(jsonRows(t, rr)); string(b) != `[{"table_type":"VIEW"}]` {
		t.Fatalf("GetTableTypes: %s", b)
	}
}

func isADBC(err error, code adbc.Status) bool {
	var ae adbc.Error
	return errors.As(err, &ae) && ae.Code == code
}

// vectorBatch is a one-row batch whose columns are the given arrays.
func vectorBatch(t *testing.T, fields []arrow.Field, build func(b *array.RecordBuilder)) arrow.RecordBatch {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	build(b)
	return b.NewRecordBatch()
}

func TestADBCPrepareBindExecute(t *testing.T) {
	cn, ix := adbcServer(t)
	ctx := context.Background()
	vecOf := func(word string) []float32 {
		vals, err := ix.ParseKey([]string{word})
		if err != nil {
			t.Fatal(err)
		}
		v, err := ix.VectorOf(ctx, vals)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	st, err := cn.NewStatement()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.SetSqlQuery("SELECT word, _distance FROM ivf_search('words', ?, ?)"); err != nil {
		t.Fatal(err)
	}
	if err := st.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	ps, err := st.GetParameterSchema()
	if err != nil || ps.NumFields() != 2 {
		t.Fatalf("parameter schema %v, %v; want 2 parameters", ps, err)
	}
	if _, _, err := st.ExecuteQuery(ctx); !isADBC(err, adbc.StatusInvalidArgument) {
		t.Fatalf("execute before bind: %v, want InvalidArgument", err)
	}
	dim := ix.Dim()
	for _, tc := range []struct {
		word, form string
		k          int
	}{{"king", "fixed_size_list<float32>", 5}, {"queen", "list<float64>", 7}, {"paris", "fixed_size_list<float32>", 1}} {
		t.Run(tc.word, func(t *testing.T) {
			v := vecOf(tc.word)
			var rec arrow.RecordBatch
			if tc.form == "list<float64>" {
				rec = vectorBatch(t, []arrow.Field{{Name: "q", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64)}, {Name: "k", Type: arrow.PrimitiveTypes.Int64}}, func(b *array.RecordBuilder) {
					lb := b.Field(0).(*array.ListBuilder)
					lb.Append(true)
					for _, x := range v {
						lb.ValueBuilder().(*array.Float64Builder).Append(float64(x))
					}
					b.Field(1).(*array.Int64Builder).Append(int64(tc.k))
				})
			} else {
				rec = vectorBatch(t, []arrow.Field{{Name: "q", Type: arrow.FixedSizeListOf(int32(dim), arrow.PrimitiveTypes.Float32)}, {Name: "k", Type: arrow.PrimitiveTypes.Int32}}, func(b *array.RecordBuilder) {
					lb := b.Field(0).(*array.FixedSizeListBuilder)
					lb.Append(true)
					lb.ValueBuilder().(*array.Float32Builder).AppendValues(v, nil)
					b.Field(1).(*array.Int32Builder).Append(int32(tc.k))
				})
			}
			defer rec.Release()
			if err := st.Bind(ctx, rec); err != nil {
				t.Fatal(err)
			}
			rr, _, err := st.ExecuteQuery(ctx)
			if err != nil {
				t.Fatal(err)
			}
			rows := jsonRows(t, rr)
			want, err := ix.Search(ctx, v, query.Options{K: tc.k, NProbe: 8})
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != len(want.Hits) {
				t.Fatalf("%d rows, want %d", len(rows), len(want.Hits))
			}
			for i, h := range want.Hits {
				if rows[i]["word"] != h.Row["word"] || float32(rows[i]["_distance"].(float64)) != h.Distance {
					t.Fatalf("row %d: %v, want %v %v", i, rows[i], h.Row["word"], h.Distance)
				}
			}
			if rows[0]["word"] != tc.word {
				t.Fatalf("nearest to %s's own vector is %v", tc.word, rows[0]["word"])
			}
		})
	}
	t.Run("wrong dimension", func(t *testing.T) {
		rec := vectorBatch(t, []arrow.Field{{Name: "q", Type: arrow.ListOf(arrow.PrimitiveTypes.Float32)}, {Name: "k", Type: arrow.PrimitiveTypes.Int64}}, func(b *array.RecordBuilder) {
			lb := b.Field(0).(*array.ListBuilder)
			lb.Append(true)
			lb.ValueBuilder().(*array.Float32Builder).AppendValues([]float32{1, 2}, nil)
			b.Field(1).(*array.Int64Builder).Append(3)
		})
		defer rec.Release()
		if err := st.Bind(ctx, rec); err != nil {
			t.Fatal(err)
		}
		_, _, err := st.ExecuteQuery(ctx)
		if !isADBC(err, adbc.StatusInvalidArgument) || !strings.Contains(err.Error(), "wrong_dimension") {
			t.Fatalf("2-value vector: %v, want InvalidArgument wrong_dimension", err)
		}
	})
	t.Run("two rows", func(t *testing.T) {
		rec := vectorBatch(t, []arrow.Field{{Name: "q", Type: arrow.BinaryTypes.String}, {Name: "k", Type: arrow.PrimitiveTypes.Int64}}, func(b *array.RecordBuilder) {
			b.Field(0).(*array.StringBuilder).AppendValues([]string{"[1]", "[2]"}, nil)
			b.Field(1).(*array.Int64Builder).AppendValues([]int64{1, 2}, nil)
		})
		defer rec.Release()
		if err := st.Bind(ctx, rec); err != nil {
			t.Fatal(err)
		}
		if _, _, err := st.ExecuteQuery(ctx); !isADBC(err, adbc.StatusInvalidArgument) || !strings.Contains(err.Error(), "one row") {
			t.Fatalf("two parameter rows: %v, want InvalidArgument naming one row", err)
		}
	})
	t.Run("no parameters: schema before execution", func(t *testing.T) {
		st2, _ := cn.NewStatement()
		defer st2.Close()
		_ = st2.SetSqlQuery("SELECT word, _distance FROM ivf_search_key('words', 'king', 4)")
		if err := st2.Prepare(ctx); err != nil {
			t.Fatal(err)
		}
		sc, err := st2.(adbc.StatementExecuteSchema).ExecuteSchema(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprintf("%s %s %s %s", sc.Field(0).Name, sc.Field(0).Type, sc.Field(1).Name, sc.Field(1).Type) != "word utf8 _distance float32" {
			t.Fatalf("dataset schema %v", sc)
		}
	})
}

// TestADBCStream300k: a 300,000-row result streams to the client whole
// (search rows crossed with a range).
func TestADBCStream300k(t *testing.T) {
	cn, _ := adbcServer(t)
	st, _ := cn.NewStatement()
	defer st.Close()
	_ = st.SetSqlQuery("SELECT r.i, s.word, s._distance FROM ivf_search_key('words', 'king', 100) s, range(3000) r(i)")
	rr, _, err := st.ExecuteQuery(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	rows, batches := 0, 0
	var sum int64
	words := map[string]bool{}
	for rr.Next() {
		rec := rr.RecordBatch()
		batches++
		rows += int(rec.NumRows())
		is := rec.Column(0).(*array.Int64)
		ws := rec.Column(1)
		for i := 0; i < int(rec.NumRows()); i++ {
			sum += is.Value(i)
			words[ws.ValueStr(i)] = true
		}
	}
	if err := rr.Err(); err != nil {
		t.Fatal(err)
	}
	if rows != 300_000 || sum != 100*(2999*3000/2) || len(words) != 100 || batches < 2 {
		t.Fatalf("%d rows in %d batches, sum(i) %d, %d words; want 300000 rows, sum %d, 100 words", rows, batches, sum, len(words), 100*(2999*3000/2))
	}
}

func TestADBCAuth(t *testing.T) {
	addr, _ := serve(t, serveOptions{})
	for _, tc := range []struct {
		name  string
		token string
		ok    bool
	}{{"right token", "Bearer " + secret, true}, {"wrong token", "Bearer nope", false}, {"no token", "", false}} {
		t.Run(tc.name, func(t *testing.T) {
			cn, err := connect(t, "grpc://"+addr, map[string]string{adbcflight.OptionAuthorizationHeader: tc.token})
			if err == nil {
				_, _, err = func() (*arrow.Schema, []map[string]any, error) {
					st, _ := cn.NewStatement()
					defer st.Close()
					_ = st.SetSqlQuery("SELECT 1 AS one")
					rr, _, err := st.ExecuteQuery(context.Background())
					if err != nil {
						return nil, nil, err
					}
					return rr.Schema(), jsonRows(t, rr), nil
				}()
			}
			if tc.ok && err != nil {
				t.Fatal(err)
			}
			if !tc.ok && !isADBC(err, adbc.StatusUnauthenticated) {
				t.Fatalf("%v, want Unauthenticated", err)
			}
		})
	}
}

func TestADBCTLS(t *testing.T) {
	c := testcert.New(t)
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Certificates = []tls.Certificate{cert}
	tlsAddr, _ := serve(t, serveOptions{tls: cfg})
	plainAddr, _ := serve(t, serveOptions{})
	other := testcert.New(t)
	for _, tc := range []struct {
		name string
		uri  string
		opts map[string]string
		ok   bool
	}{
		{"grpc+tls with the CA", "grpc+tls://" + tlsAddr, map[string]string{adbcflight.OptionSSLRootCerts: string(c.CAPEM)}, true},
		{"grpc+tls by localhost", "grpc+tls://" + strings.Replace(tlsAddr, "127.0.0.1", "localhost", 1), map[string]string{adbcflight.OptionSSLRootCerts: string(c.CAPEM)}, true},
		{"grpc+tls with another CA", "grpc+tls://" + tlsAddr, map[string]string{adbcflight.OptionSSLRootCerts: string(other.CAPEM)}, false},
		{"grpc+tls without the CA", "grpc+tls://" + tlsAddr, nil, false},
		{"plain client, TLS server", "grpc://" + tlsAddr, nil, false},
		{"TLS client, plain server", "grpc+tls://" + plainAddr, map[string]string{adbcflight.OptionSSLRootCerts: string(c.CAPEM)}, false},
		{"plain", "grpc://" + plainAddr, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			opts := map[string]string{adbcflight.OptionTimeoutQuery: "20", adbcflight.OptionTimeoutFetch: "20"}
			for k, v := range tc.opts {
				opts[k] = v
			}
			cn, err := connect(t, tc.uri, opts)
			var rows []map[string]any
			if err == nil {
				var st adbc.Statement
				st, err = cn.NewStatement()
				if err == nil {
					defer st.Close()
					_ = st.SetSqlQuery("SELECT word FROM ivf_search_key('words', 'king', 2)")
					var rr array.RecordReader
					if rr, _, err = st.ExecuteQuery(ctx); err == nil {
						rows = jsonRows(t, rr)
					}
				}
			}
			if tc.ok && (err != nil || len(rows) != 2 || rows[0]["word"] != "king") {
				t.Fatalf("%v %v", err, rows)
			}
			if !tc.ok && err == nil {
				t.Fatalf("connected and queried: %v", rows)
			}
		})
	}
}

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestFlightSQLCancel: a client that gives up on a statement while it
// runs stops it on the server (it used to run on to the server's time
// limit), and CancelFlightInfo drops a result that waits for its DoGet.
func TestFlightSQLCancel(t *testing.T) {
	var log syncBuffer
	addr, _ := serve(t, serveOptions{log: &log})
	cl, err := flightsql.NewClient(addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := bearer(context.Background())

	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = cl.Execute(short, "SELECT count(*) FROM range(1000000000000)")
	if status.Code(err) != codes.DeadlineExceeded && status.Code(err) != codes.Canceled {
		t.Fatalf("slow statement: %v, want the client's deadline", err)
	}
	for !strings.Contains(log.String(), "code=canceled") {
		if time.Since(start) > 20*time.Second {
			t.Fatalf("the server did not stop the statement the client gave up on; log:\n%s", log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}

	info, err := cl.Execute(ctx, "SELECT * FROM ivf_search_key('words', 'king', 3)")
	if err != nil {
		t.Fatal(err)
	}
	res, err := cl.CancelFlightInfo(ctx, &flight.CancelFlightInfoRequest{Info: info})
	if err != nil || res.GetStatus() != flight.CancelStatusCancelled {
		t.Fatalf("CancelFlightInfo: %v %v, want cancelled", res.GetStatus(), err)
	}
	rdr, err := cl.DoGet(ctx, info.Endpoint[0].Ticket)
	if err == nil {
		for rdr.Next() {
		}
		err = rdr.Err()
		rdr.Release()
	}
	if status.Code(err) != codes.NotFound {
		t.Fatalf("DoGet of a canceled result: %v, want NotFound", err)
	}
}

// TestFlightSQLXdbcTypeInfo: GetXdbcTypeInfo lists the result types by
// JDBC code, all of them or those of one code.
func TestFlightSQLXdbcTypeInfo(t *testing.T) {
	cl, _ := start(t)
	ctx := bearer(context.Background())
	for _, tc := range []struct {
		code *int32
		want string
	}{
		{nil, "TINYINT:-6 BIGINT:-5 BLOB:-3 INTEGER:4 SMALLINT:5 FLOAT:7 DOUBLE:8 VARCHAR:12 BOOLEAN:16 DATE:91 TIMESTAMP:93 LIST:2003"},
		{ptr(int32(12)), "VARCHAR:12"},
		{ptr(int32(1)), ""},
	} {
		info, err := cl.GetXdbcTypeInfo(ctx, tc.code)
		if err != nil {
			t.Fatal(err)
		}
		rdr, err := cl.DoGet(ctx, info.Endpoint[0].Ticket)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for rdr.Next() {
			rec := rdr.RecordBatch()
			for i := 0; i < int(rec.NumRows()); i++ {
				got = append(got, rec.Column(0).ValueStr(i)+":"+rec.Column(1).ValueStr(i))
			}
		}
		rdr.Release()
		if strings.Join(got, " ") != tc.want {
			t.Errorf("GetXdbcTypeInfo(%v): %v, want %s", tc.code, got, tc.want)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// TestADBCErrors: the driver sees the gRPC status codes as ADBC status
// codes, for statements and for prepared statements.
func TestADBCErrors(t *testing.T) {
	cn, _ := adbcServer(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		sql     string
		prepare bool
		code    adbc.Status
		text    string
	}{
		{"bad SQL", "SELEC 1", false, adbc.StatusInvalidArgument, "sql_error"},
		{"bad SQL prepared", "SELEC 1", true, adbc.StatusInvalidArgument, "sql_error"},
		{"unknown index", "SELECT * FROM ivf_search_key('nope', 'king', 3)", false, adbc.StatusNotFound, "index_not_found"},
		{"unknown index prepared", "SELECT * FROM ivf_search_key('nope', 'king', 3)", true, adbc.StatusNotFound, "index_not_found"},
		{"unknown key", "SELECT * FROM ivf_search_key('words', 'no-such-word', 3)", false, adbc.StatusNotFound, "key_not_found"},
		{"k out of range", "SELECT * FROM ivf_search_key('words', 'king', 0)", false, adbc.StatusInvalidArgument, "out_of_range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := cn.NewStatement()
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if err := st.SetSqlQuery(tc.sql); err != nil {
				t.Fatal(err)
			}
			if tc.prepare {
				err = st.Prepare(ctx)
			} else {
				var rr array.RecordReader
				if rr, _, err = st.ExecuteQuery(ctx); err == nil {
					rr.Release()
				}
			}
			if !isADBC(err, tc.code) || !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("%v, want ADBC status %v with %s", err, tc.code, tc.text)
			}
		})
	}
}

// TestFlightSQLPreparedLifecycle: a prepared statement runs until it is
// closed (then NotFound), and one left unused longer than the idle limit
// is closed by the server when another is created.
func TestFlightSQLPreparedLifecycle(t *testing.T) {
	cl, _ := start(t)
	ctx := bearer(context.Background())
	const sql = "SELECT word FROM ivf_search_key('words', 'king', 2)"
	run := func(p *flightsql.PreparedStatement) error {
		info, err := p.Execute(ctx)
		if err != nil {
			return err
		}
		rdr, err := cl.DoGet(ctx, info.Endpoint[0].Ticket)
		if err != nil {
			return err
		}
		defer rdr.Release()
		for rdr.Next() {
		}
		return rdr.Err()
	}
	p, err := cl.Prepare(ctx, sql)
	if err != nil {
		t.Fatal(err)
	}
	if p.DatasetSchema() == nil || p.DatasetSchema().Field(0).Name != "word" {
		t.Fatalf("dataset schema before execution: %v", p.DatasetSchema())
	}
	if err := run(p); err != nil {
		t.Fatal(err)
	}
	again := flightsql.NewPreparedStatement(cl, p.Handle()) // the same server handle
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := run(again); status.Code(err) != codes.NotFound {
		t.Fatalf("closed statement: %v, want NotFound", err)
	}

	restore := pqflight.SetPreparedIdle(50 * time.Millisecond)
	defer restore()
	idle, err := cl.Prepare(ctx, sql)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	fresh, err := cl.Prepare(ctx, sql) // sweeps the idle one
	if err != nil {
		t.Fatal(err)
	}
	if err := run(fresh); err != nil {
		t.Fatal(err)
	}
	if err := run(idle); status.Code(err) != codes.NotFound || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("idle statement: %v, want NotFound naming expiry", err)
	}
}

// TestADBCBadBinds: odd parameter values (NULL, NaN, a NULL element,
// nested lists, structs, a string that is not a vector) are refused with
// InvalidArgument naming the parameter or the vector, and the server
// keeps answering.
func TestADBCBadBinds(t *testing.T) {
	cn, _ := adbcServer(t)
	ctx := context.Background()
	st, err := cn.NewStatement()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.SetSqlQuery("SELECT word FROM ivf_search('words', ?, 3)"); err != nil {
		t.Fatal(err)
	}
	if err := st.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	f32 := arrow.PrimitiveTypes.Float32
	for _, tc := range []struct {
		name  string
		field arrow.Field
		fill  func(b array.Builder)
		want  string
	}{
		{"NULL", arrow.Field{Name: "q", Type: arrow.ListOf(f32), Nullable: true}, func(b array.Builder) { b.AppendNull() }, "NULL"},
		{"NaN", arrow.Field{Name: "q", Type: arrow.ListOf(f32)}, func(b array.Builder) {
			lb := b.(*array.ListBuilder)
			lb.Append(true)
			vals := make([]float32, 50)
			vals[3] = float32(math.NaN())
			lb.ValueBuilder().(*array.Float32Builder).AppendValues(vals, nil)
		}, "invalid_vector"},
		{"NULL element", arrow.Field{Name: "q", Type: arrow.ListOf(f32)}, func(b array.Builder) {
			lb := b.(*array.ListBuilder)
			lb.Append(true)
			lb.ValueBuilder().(*array.Float32Builder).AppendValues([]float32{1, 2}, []bool{true, false})
		}, "element 1 is NULL"},
		{"nested list", arrow.Field{Name: "q", Type: arrow.ListOf(arrow.ListOf(f32))}, func(b array.Builder) {
			lb := b.(*array.ListBuilder)
			lb.Append(true)
			inner := lb.ValueBuilder().(*array.ListBuilder)
			inner.Append(true)
			inner.ValueBuilder().(*array.Float32Builder).Append(1)
		}, "cannot be bound"},
		{"struct", arrow.Field{Name: "q", Type: arrow.StructOf(arrow.Field{Name: "x", Type: f32})}, func(b array.Builder) {
			sb := b.(*array.StructBuilder)
			sb.Append(true)
			sb.FieldBuilder(0).(*array.Float32Builder).Append(1)
		}, "cannot be bound"},
		{"not a vector", arrow.Field{Name: "q", Type: arrow.BinaryTypes.String}, func(b array.Builder) {
			b.(*array.StringBuilder).Append("king")
		}, "JSON array"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := vectorBatch(t, []arrow.Field{tc.field}, func(b *array.RecordBuilder) { tc.fill(b.Field(0)) })
			defer rec.Release()
			err := st.Bind(ctx, rec)
			if err == nil {
				var rr array.RecordReader
				if rr, _, err = st.ExecuteQuery(ctx); err == nil {
					rr.Release()
				}
			}
			if !isADBC(err, adbc.StatusInvalidArgument) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v, want InvalidArgument with %q", err, tc.want)
			}
		})
	}
	if _, rows := queryADBC(t, cn, "SELECT word FROM ivf_search_key('words', 'king', 1)"); len(rows) != 1 {
		t.Fatalf("server after bad binds: %v", rows)
	}
}
