// Command iceberg writes a Parquet file as an Apache Iceberg table, in an
// iceberg-go SQL catalog on SQLite with the data in a local folder, so that
// `parqdb index create --source iceberg://…` can be tried without a lake
// (docs/iceberg.md, "Try it on this machine"). It prints the setting that
// makes the catalog known to parqdb.
//
//	go run ./examples/iceberg -parquet examples/glove/glove-10k.parquet -dir lake
//
// makes lake/iceberg.db (catalog "lake", namespace "docs", table "words")
// and lake/warehouse/, and refuses to touch a catalog file that exists.
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"
	_ "modernc.org/sqlite" // database/sql driver "sqlite"
)

func main() {
	src := flag.String("parquet", "", "the Parquet file to write as the table's first snapshot (required)")
	dir := flag.String("dir", "lake", "folder for the catalog database (iceberg.db) and the table data (warehouse/); must not hold iceberg.db yet")
	name := flag.String("catalog", "lake", "catalog name, stored in the catalog database: the NAME of iceberg://NAME/…")
	ns := flag.String("namespace", "docs", "namespace")
	tbl := flag.String("table", "words", "table name")
	flag.Parse()
	if *src == "" || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	ref, err := write(context.Background(), *src, *dir, *name, *ns, *tbl)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(ref)
}

// write makes the catalog and the table and returns what to tell the user.
func write(ctx context.Context, src, dir, name, ns, tblName string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	db := filepath.Join(abs, "iceberg.db")
	if _, err := os.Stat(db); !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%s exists (or cannot be checked: %v); choose another -dir", db, err)
	}
	if err := os.MkdirAll(filepath.Join(abs, "warehouse"), 0o755); err != nil {
		return "", err
	}
	pf, err := file.OpenParquetFile(src, false)
	if err != nil {
		return "", fmt.Errorf("open %s: %w", src, err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 4096}, memory.DefaultAllocator)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", src, err)
	}
	at, err := fr.ReadTable(ctx)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", src, err)
	}
	defer at.Release()
	schema, err := table.ArrowSchemaToIcebergWithFreshIDs(at.Schema(), false)
	if err != nil {
		return "", fmt.Errorf("%s: schema: %w", src, err)
	}
	conn, err := sql.Open("sqlite", db)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	cat, err := sqlcat.NewCatalog(name, conn, sqlcat.SQLite, iceberg.Properties{"warehouse": "file://" + filepath.Join(abs, "warehouse")})
	if err != nil {
		return "", fmt.Errorf("catalog %s: %w", db, err)
	}
	if err := cat.CreateNamespace(ctx, table.Identifier{ns}, nil); err != nil {
		return "", fmt.Errorf("namespace %s: %w", ns, err)
	}
	t, err := cat.CreateTable(ctx, table.Identifier{ns, tblName}, schema)
	if err != nil {
		return "", fmt.Errorf("table %s.%s: %w", ns, tblName, err)
	}
	if t, err = t.AppendTable(ctx, at, 65536, nil); err != nil {
		return "", fmt.Errorf("append %s: %w", src, err)
	}
	return fmt.Sprintf("wrote %d rows of %s as iceberg://%s/%s/%s (snapshot %d)\nexport PARQDB_ICEBERG_%s_URI=sqlite:%s\n",
		at.NumRows(), src, name, ns, tblName, t.CurrentSnapshot().SnapshotID, envName(name), db), nil
}

// envName is the catalog name as parqdb's environment variables spell it
// (docs/iceberg.md §2): upper case, "-" written "_".
func envName(name string) string {
	b := []byte(name)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z':
			b[i] = c - 'a' + 'A'
		case c == '-':
			b[i] = '_'
		}
	}
	return string(b)
}
