package icesource_test

import (
	"context"
	"database/sql"
	"math/rand/v2"
	"net/url"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"

	"github.com/parqdb/parqdb/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// dim is the vector dimension of the test tables (BenchmarkScan raises it).
var dim = 8

// lake is a real Iceberg table in a real iceberg-go SQL catalog, configured
// for the provider through the environment exactly as a user would.
type lake struct {
	t      testing.TB
	name   string // catalog name
	ns     string
	ident  table.Identifier
	cat    *sqlcat.Catalog
	tbl    *table.Table
	schema *iceberg.Schema
	// Where the data lives, for messages.
	warehouse string
}

// newLake makes catalog name on db ("sqlite" or "postgres") with its
// warehouse on store ("local" or "s3"), and configures the environment:
// PARQDB_ICEBERG_<NAME>_URI without a password (PostgreSQL's comes from
// PGPASSWORD) and, for S3, the AWS variables.
func newLake(t testing.TB, name, db, store string) *lake {
	t.Helper()
	ctx := context.Background()
	l := &lake{t: t, name: name, ns: "docs"}
	var conn *sql.DB
	var err error
	var dialect sqlcat.SupportedDialect
	switch db {
	case "sqlite":
		path := filepath.Join(t.TempDir(), "iceberg.db")
		conn, err = sql.Open("sqlite", path)
		dialect = sqlcat.SQLite
		t.Setenv(envVar(name, "URI"), "sqlite:"+path)
	case "postgres":
		dsn := testenv.Postgres(t)
		conn, err = sql.Open("pgx", dsn)
		dialect = sqlcat.Postgres
		u, perr := url.Parse(dsn)
		if perr != nil {
			t.Fatal(perr)
		}
		pw, _ := u.User.Password()
		u.User = url.User(u.User.Username())
		t.Setenv("PGPASSWORD", pw)
		t.Setenv(envVar(name, "URI"), u.String())
	default:
		t.Fatalf("db %q", db)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	switch store {
	case "local":
		l.warehouse = "file://" + t.TempDir()
	case "s3":
		srv := testenv.S3(t)
		t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
		t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
		t.Setenv("AWS_REGION", srv.Region)
		t.Setenv("AWS_ENDPOINT_URL_S3", srv.Endpoint)
		l.warehouse = "s3://" + srv.NewBucket(t) + "/lake"
	default:
		t.Fatalf("store %q", store)
	}
	l.cat, err = sqlcat.NewCatalog(name, conn, dialect, iceberg.Properties{"warehouse": l.warehouse})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.cat.CreateNamespace(ctx, table.Identifier{l.ns}, nil); err != nil {
		t.Fatal(err)
	}
	return l
}

func envVar(catalogName, setting string) string {
	return "PARQDB_ICEBERG_" + strings.ToUpper(strings.ReplaceAll(catalogName, "-", "_")) + "_" + setting
}

// ref is the table's iceberg:// reference.
func (l *lake) ref() string {
	return "iceberg://" + l.name + "/" + l.ns + "/" + l.ident[len(l.ident)-1]
}

// docsSchema is id (long, required), title (string) and embedding
// (list<float>).
func docsSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "title", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "embedding", Required: true,
			Type: &iceberg.ListType{ElementID: 4, Element: iceberg.PrimitiveTypes.Float32, ElementRequired: true}},
	)
}

// create makes table tableName with schema and properties.
func (l *lake) create(tableName string, schema *iceberg.Schema, props iceberg.Properties) {
	l.t.Helper()
	l.ident = table.Identifier{l.ns, tableName}
	l.schema = schema
	var err error
	l.tbl, err = l.cat.CreateTable(context.Background(), l.ident, schema, catalog.WithProperties(props))
	if err != nil {
		l.t.Fatal(err)
	}
}

// vec is the seeded vector of row id: one of 6 clusters plus noise.
func vec(id int64) []float32 {
	r := rand.New(rand.NewPCG(uint64(id), 7))
	c := rand.New(rand.NewPCG(uint64(id%6), 9))
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(c.NormFloat64()*4 + r.NormFloat64())
	}
	return v
}

// records builds one Arrow batch of rows ids in the table's schema.
func (l *lake) records(ids []int64) arrow.RecordBatch {
	l.t.Helper()
	as, err := table.SchemaToArrowSchema(l.tbl.Schema(), nil, false, false)
	if err != nil {
		l.t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer b.Release()
	for i, f := range as.Fields() {
		for _, id := range ids {
			switch f.Name {
			case "id":
				b.Field(i).(*array.Int64Builder).Append(id)
			case "title":
				b.Field(i).(*array.StringBuilder).Append("doc " + string(rune('a'+id%26)))
			case "embedding":
				lb := b.Field(i).(*array.ListBuilder)
				lb.Append(true)
				for _, x := range vec(id) {
					lb.ValueBuilder().(*array.Float32Builder).Append(x)
				}
			default:
				b.Field(i).AppendNull()
			}
		}
	}
	return b.NewRecordBatch()
}

func (l *lake) reader(ids []int64) array.RecordReader {
	rec := l.records(ids)
	defer rec.Release()
	rr, err := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
	if err != nil {
		l.t.Fatal(err)
	}
	return rr
}

// appendRows commits one append snapshot of rows ids.
func (l *lake) appendRows(ids []int64) {
	l.t.Helper()
	rr := l.reader(ids)
	defer rr.Release()
	tbl, err := l.tbl.Append(context.Background(), rr, nil)
	if err != nil {
		l.t.Fatalf("append: %v", err)
	}
	l.tbl = tbl
}

// overwrite replaces every row of the table with rows ids (one overwrite
// snapshot: all data files removed, new ones added).
func (l *lake) overwrite(ids []int64) {
	l.t.Helper()
	rr := l.reader(ids)
	defer rr.Release()
	tbl, err := l.tbl.Overwrite(context.Background(), rr, nil)
	if err != nil {
		l.t.Fatalf("overwrite: %v", err)
	}
	l.tbl = tbl
}

// deleteWhere deletes the rows matching filter in the table's write mode
// (copy-on-write rewrites data files; merge-on-read writes delete files).
func (l *lake) deleteWhere(filter iceberg.BooleanExpression) {
	l.t.Helper()
	tbl, err := l.tbl.Delete(context.Background(), filter, nil)
	if err != nil {
		l.t.Fatalf("delete: %v", err)
	}
	l.tbl = tbl
}

// live reads the table's current rows back through iceberg-go (which
// applies every delete): id → vector.
func (l *lake) live() map[int64][]float32 {
	l.t.Helper()
	tbl, err := l.cat.LoadTable(context.Background(), l.ident)
	if err != nil {
		l.t.Fatal(err)
	}
	at, err := tbl.Scan(table.WithSelectedFields("id", "embedding")).ToArrowTable(context.Background())
	if err != nil {
		l.t.Fatal(err)
	}
	defer at.Release()
	out := map[int64][]float32{}
	tr := array.NewTableReader(at, 0)
	defer tr.Release()
	for tr.Next() {
		rec := tr.RecordBatch()
		ids := rec.Column(int(rec.Schema().FieldIndices("id")[0])).(*array.Int64)
		embs := rec.Column(int(rec.Schema().FieldIndices("embedding")[0])).(*array.List)
		vals := embs.ListValues().(*array.Float32)
		for i := 0; i < int(rec.NumRows()); i++ {
			s, e := embs.ValueOffsets(i)
			out[ids.Value(i)] = slices.Clone(vals.Float32Values()[s:e])
		}
	}
	return out
}

// bruteForce returns the ids of the k rows of live nearest to q (squared
// L2), nearest first.
func bruteForce(live map[int64][]float32, q []float32, k int) []int64 {
	type hit struct {
		id int64
		d  float64
	}
	hits := make([]hit, 0, len(live))
	for id, v := range live {
		var d float64
		for i := range v {
			x := float64(v[i] - q[i])
			d += x * x
		}
		hits = append(hits, hit{id, d})
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].d != hits[j].d {
			return hits[i].d < hits[j].d
		}
		return hits[i].id < hits[j].id
	})
	out := make([]int64, 0, k)
	for _, h := range hits[:min(k, len(hits))] {
		out = append(out, h.id)
	}
	return out
}

func ids(from, to int64) []int64 {
	var out []int64
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// equalityDelete commits one equality delete file (on field id 1, "id")
// deleting the rows with the given ids.
func (l *lake) equalityDelete(del []int64) {
	l.t.Helper()
	as := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues(del, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	tx := l.tbl.NewTransaction()
	records := func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) }
	if err := tx.CommitEqualityDeletes(context.Background(), []int{1}, records, nil); err != nil {
		l.t.Fatalf("equality delete: %v", err)
	}
	tbl, err := tx.Commit(context.Background())
	if err != nil {
		l.t.Fatalf("equality delete: %v", err)
	}
	l.tbl = tbl
}
