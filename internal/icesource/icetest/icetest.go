// Package icetest makes real Apache Iceberg tables for tests: an iceberg-go
// SQL catalog on SQLite or on the PostgreSQL of internal/testenv, data in a
// local folder or on its S3 server, configured for the iceberg source
// provider through the environment exactly as a user would
// (docs/iceberg.md §2). Rows are seeded: row id's vector is Vec(id).
package icetest

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

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	_ "modernc.org/sqlite"             // database/sql driver "sqlite"

	"github.com/parqdb/parqdb/internal/testenv"
)

// Dim is the vector dimension of the test tables (BenchmarkScan raises it).
var Dim = 8

// Lake is a real Iceberg table in a real iceberg-go SQL catalog, configured
// for the provider through the environment exactly as a user would.
type Lake struct {
	t         testing.TB
	Name      string           // catalog name
	NS        string           // namespace ("docs")
	Ident     table.Identifier // the table Create made last
	Cat       *sqlcat.Catalog
	Tbl       *table.Table // the table after the last commit
	Schema    *iceberg.Schema
	Warehouse string // the catalog's warehouse location
	// Shift changes the rows written: row id's vector is Vec(id+Shift)
	// (0 by default; Upsert uses it to write new versions of rows).
	Shift int64
}

// NewLake makes catalog name on db ("sqlite" or "postgres") with its
// warehouse on store ("local" or "s3"), and configures the environment:
// PARQDB_ICEBERG_<NAME>_URI without a password (PostgreSQL's comes from
// PGPASSWORD) and, for S3, the AWS variables.
func NewLake(t testing.TB, name, db, store string) *Lake {
	t.Helper()
	ctx := context.Background()
	l := &Lake{t: t, Name: name, NS: "docs"}
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
		l.Warehouse = "file://" + t.TempDir()
	case "s3":
		srv := testenv.S3(t)
		t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
		t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
		t.Setenv("AWS_REGION", srv.Region)
		t.Setenv("AWS_ENDPOINT_URL_S3", srv.Endpoint)
		l.Warehouse = "s3://" + srv.NewBucket(t) + "/Lake"
	default:
		t.Fatalf("store %q", store)
	}
	l.Cat, err = sqlcat.NewCatalog(name, conn, dialect, iceberg.Properties{"warehouse": l.Warehouse})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Cat.CreateNamespace(ctx, table.Identifier{l.NS}, nil); err != nil {
		t.Fatal(err)
	}
	return l
}

func envVar(catalogName, setting string) string {
	return "PARQDB_ICEBERG_" + strings.ToUpper(strings.ReplaceAll(catalogName, "-", "_")) + "_" + setting
}

// Ref is the table's iceberg:// reference.
func (l *Lake) Ref() string {
	return "iceberg://" + l.Name + "/" + l.NS + "/" + l.Ident[len(l.Ident)-1]
}

// DocsSchema is id (long, required), title (string) and embedding
// (list<float>).
func DocsSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "title", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "embedding", Required: true,
			Type: &iceberg.ListType{ElementID: 4, Element: iceberg.PrimitiveTypes.Float32, ElementRequired: true}},
	)
}

// Create makes table tableName with schema and properties.
func (l *Lake) Create(tableName string, schema *iceberg.Schema, props iceberg.Properties) {
	l.t.Helper()
	l.Ident = table.Identifier{l.NS, tableName}
	l.Schema = schema
	var err error
	l.Tbl, err = l.Cat.CreateTable(context.Background(), l.Ident, schema, catalog.WithProperties(props))
	if err != nil {
		l.t.Fatal(err)
	}
}

// CreatePartitioned makes table tableName with DocsSchema, partitioned by
// identity(title): one data file per title value and append, in folders
// such as data/title=doc+a/.
func (l *Lake) CreatePartitioned(tableName string) {
	l.t.Helper()
	l.Ident = table.Identifier{l.NS, tableName}
	l.Schema = DocsSchema()
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "title", Transform: iceberg.IdentityTransform{}})
	var err error
	l.Tbl, err = l.Cat.CreateTable(context.Background(), l.Ident, l.Schema, catalog.WithPartitionSpec(&spec))
	if err != nil {
		l.t.Fatal(err)
	}
}

// Vec is the seeded vector of row id: one of 6 clusters plus noise.
func Vec(id int64) []float32 {
	r := rand.New(rand.NewPCG(uint64(id), 7))
	c := rand.New(rand.NewPCG(uint64(id%6), 9))
	v := make([]float32, Dim)
	for i := range v {
		v[i] = float32(c.NormFloat64()*4 + r.NormFloat64())
	}
	return v
}

// records builds one Arrow batch of rows ids in the table's schema.
func (l *Lake) records(ids []int64) arrow.RecordBatch {
	l.t.Helper()
	as, err := table.SchemaToArrowSchema(l.Tbl.Schema(), nil, false, false)
	if err != nil {
		l.t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer b.Release()
	// Columns by field id (1 id, 2 title, 3 embedding), whatever their
	// current names.
	fields := l.Tbl.Schema().Fields()
	for i := range as.Fields() {
		for _, id := range ids {
			switch fields[i].ID {
			case 1:
				b.Field(i).(*array.Int64Builder).Append(id)
			case 2:
				b.Field(i).(*array.StringBuilder).Append("doc " + string(rune('a'+id%26)))
			case 3:
				lb := b.Field(i).(*array.ListBuilder)
				lb.Append(true)
				for _, x := range Vec(id + l.Shift) {
					lb.ValueBuilder().(*array.Float32Builder).Append(x)
				}
			default:
				b.Field(i).AppendNull()
			}
		}
	}
	return b.NewRecordBatch()
}

func (l *Lake) reader(ids []int64) array.RecordReader {
	rec := l.records(ids)
	defer rec.Release()
	rr, err := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
	if err != nil {
		l.t.Fatal(err)
	}
	return rr
}

// AppendRows commits one append snapshot of rows ids.
func (l *Lake) AppendRows(ids []int64) {
	l.t.Helper()
	rr := l.reader(ids)
	defer rr.Release()
	tbl, err := l.Tbl.Append(context.Background(), rr, nil)
	if err != nil {
		l.t.Fatalf("append: %v", err)
	}
	l.Tbl = tbl
}

// Overwrite replaces every row of the table with rows ids (one overwrite
// snapshot: all data files removed, new ones added).
func (l *Lake) Overwrite(ids []int64) {
	l.t.Helper()
	rr := l.reader(ids)
	defer rr.Release()
	tbl, err := l.Tbl.Overwrite(context.Background(), rr, nil)
	if err != nil {
		l.t.Fatalf("overwrite: %v", err)
	}
	l.Tbl = tbl
}

// DeleteWhere deletes the rows matching filter in the table's write mode
// (copy-on-write rewrites data files; merge-on-read writes delete files).
func (l *Lake) DeleteWhere(filter iceberg.BooleanExpression) {
	l.t.Helper()
	tbl, err := l.Tbl.Delete(context.Background(), filter, nil)
	if err != nil {
		l.t.Fatalf("delete: %v", err)
	}
	l.Tbl = tbl
}

// Live reads the table's current rows back through iceberg-go (which
// applies every delete): id → vector.
func (l *Lake) Live() map[int64][]float32 {
	l.t.Helper()
	tbl, err := l.Cat.LoadTable(context.Background(), l.Ident)
	if err != nil {
		l.t.Fatal(err)
	}
	// Fields 1 (id) and 3 (embedding) under their current names.
	idName, embName := "id", "embedding"
	if f, ok := tbl.Schema().FindFieldByID(1); ok {
		idName = f.Name
	}
	if f, ok := tbl.Schema().FindFieldByID(3); ok {
		embName = f.Name
	}
	at, err := tbl.Scan(table.WithSelectedFields(idName, embName)).ToArrowTable(context.Background())
	if err != nil {
		l.t.Fatal(err)
	}
	defer at.Release()
	out := map[int64][]float32{}
	tr := array.NewTableReader(at, 0)
	defer tr.Release()
	for tr.Next() {
		rec := tr.RecordBatch()
		ids := rec.Column(int(rec.Schema().FieldIndices(idName)[0])).(*array.Int64)
		embs := rec.Column(int(rec.Schema().FieldIndices(embName)[0])).(*array.List)
		vals := embs.ListValues().(*array.Float32)
		for i := 0; i < int(rec.NumRows()); i++ {
			s, e := embs.ValueOffsets(i)
			out[ids.Value(i)] = slices.Clone(vals.Float32Values()[s:e])
		}
	}
	return out
}

// BruteForce returns the ids of the k rows of live nearest to q (squared
// L2), nearest first.
func BruteForce(live map[int64][]float32, q []float32, k int) []int64 {
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

func IDs(from, to int64) []int64 {
	var out []int64
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// EqualityDelete commits one equality delete file (on field id 1, "id")
// deleting the rows with the given ids.
func (l *Lake) EqualityDelete(del []int64) {
	l.t.Helper()
	as := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues(del, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	tx := l.Tbl.NewTransaction()
	records := func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) }
	if err := tx.CommitEqualityDeletes(context.Background(), []int{1}, records, nil); err != nil {
		l.t.Fatalf("equality delete: %v", err)
	}
	tbl, err := tx.Commit(context.Background())
	if err != nil {
		l.t.Fatalf("equality delete: %v", err)
	}
	l.Tbl = tbl
}

// Upsert commits, in ONE row-delta snapshot, new versions of rows ids
// (vectors Vec(id+shift)) and an equality delete (field id 1) of the same
// ids: the delete removes the older versions only, since an equality
// delete applies to data files with a strictly lower data sequence
// number (the CDC/upsert pattern of Flink and Spark merge-on-read).
func (l *Lake) Upsert(ids []int64, shift int64) {
	l.t.Helper()
	ctx := context.Background()
	l.Shift = shift
	rec := l.records(ids)
	l.Shift = 0
	var files []iceberg.DataFile
	for df, err := range table.WriteRecords(ctx, l.Tbl, rec.Schema(), func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) }) {
		if err != nil {
			l.t.Fatalf("upsert: write data: %v", err)
		}
		files = append(files, df)
	}
	as := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues(ids, nil)
	del := b.NewRecordBatch()
	defer del.Release()
	tx := l.Tbl.NewTransaction()
	dels, err := tx.WriteEqualityDeletes(ctx, []int{1}, func(yield func(arrow.RecordBatch, error) bool) { yield(del, nil) })
	if err != nil {
		l.t.Fatalf("upsert: write equality deletes: %v", err)
	}
	if err := tx.NewRowDelta(nil).AddRows(files...).AddDeletes(dels...).Commit(ctx); err != nil {
		l.t.Fatalf("upsert: row delta: %v", err)
	}
	tbl, err := tx.Commit(ctx)
	if err != nil {
		l.t.Fatalf("upsert: commit: %v", err)
	}
	l.Tbl = tbl
}
