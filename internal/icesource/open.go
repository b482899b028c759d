package icesource

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/parqdb/parqdb/storage"
)

// Snapshot is one resolved snapshot of an Iceberg table: the Parquet data
// files its scan reads, as objects of a bucket opened at the table's
// location.
type Snapshot struct {
	Ref        Ref
	TableUUID  string // the table's UUID (table-uuid in its metadata)
	SnapshotID int64
	// Location is the table's location as its metadata records it
	// (file:///…, /… or s3://bucket/…), without a trailing '/'.
	Location string
	// Bucket is opened at Location; the caller owns it.
	Bucket storage.Bucket
	// Files are the snapshot's data files, keys relative to Location,
	// in ascending byte order of key. Size and Rows are the manifest's
	// file_size_in_bytes and record_count; ETag is empty and ModTime the
	// Unix epoch, so that their version in source-files.json is "mtime:0"
	// (Iceberg data files are immutable: a path never changes content).
	Files []storage.Info
	Rows  []int64 // record_count of Files[i]
	// Deleted holds, by key, the positions of the deleted rows of the data
	// files that row-level deletes apply to (position deletes, equality
	// deletes, deletion vectors). Such a file's ETag is deleteVersion of
	// its positions, so its version in source-files.json changes when its
	// deletes do.
	Deleted map[string]*roaring.Bitmap
	// Schema is the snapshot's schema.
	Schema *iceberg.Schema
	// FieldIDs maps the name of each top-level field of Schema, and each
	// former name of a top-level field (in the table's other schemas,
	// newest first) that no field of Schema has, to its Iceberg field id:
	// data files are read by field id (docs/iceberg.md §3.4).
	FieldIDs map[string]int
}

// Resolve loads the table ref names from its catalog and plans the scan of
// snapshot snapshotID, or of the current snapshot when snapshotID is 0
// (Iceberg time travel keeps an older snapshot readable until it expires).
//
// It fails with ErrCatalog (catalog not configured or not reachable),
// ErrNotFound (namespace, table or snapshot missing; a table without any
// snapshot), ErrUnsupported (a data or delete file that is not Parquet or
// lies outside the table location, a deletion vector that cannot be read).
// It resolves the row-level deletes of the snapshot into Deleted
// (deletes.go). Every error names ref and the file.
func Resolve(ctx context.Context, ref Ref, snapshotID int64) (*Snapshot, error) {
	return resolve(ctx, ref, snapshotID, "", nil)
}

// resolve is Resolve that, when wantUUID is not empty, first refuses a
// table with another UUID with ErrMoved, and reads the data and delete
// files through wrap(bucket) when wrap is not nil.
func resolve(ctx context.Context, ref Ref, snapshotID int64, wantUUID string, wrap func(storage.Bucket) storage.Bucket) (*Snapshot, error) {
	tbl, closeCat, err := loadTable(ctx, ref)
	if err != nil {
		return nil, err
	}
	defer closeCat()
	if got := tbl.Metadata().TableUUID().String(); wantUUID != "" && got != wantUUID {
		return nil, fmt.Errorf("source %s: %w: the catalog's table has UUID %s, the index was built from table %s (dropped and recreated?); `parqdb index refresh` rebuilds the index on the new table",
			ref, ErrMoved, got, wantUUID)
	}
	return resolveTable(ctx, ref, tbl, snapshotID, wrap)
}

// loadTable loads the table ref names from its catalog; closeCat releases
// the catalog.
func loadTable(ctx context.Context, ref Ref) (tbl *table.Table, closeCat func(), err error) {
	cat, err := LoadCatalog(ctx, ref.Catalog)
	if err != nil {
		return nil, nil, fmt.Errorf("source %s: %w", ref, err)
	}
	release := func() {}
	if c, ok := cat.(io.Closer); ok {
		release = func() { _ = c.Close() }
	}
	defer func() {
		// On error the named results are nil: release through the local.
		if err != nil {
			release()
		}
	}()
	ident := append(append(table.Identifier{}, ref.Namespace...), ref.Table)
	tbl, err = cat.LoadTable(ctx, ident)
	if err != nil {
		switch {
		case errors.Is(err, catalog.ErrNoSuchNamespace):
			return nil, nil, fmt.Errorf("source %s: %w: catalog %q has no namespace %q%s", ref, ErrNotFound, ref.Catalog, strings.Join(ref.Namespace, "."), namespaceHint(ctx, cat, ref))
		case errors.Is(err, catalog.ErrNoSuchTable):
			if ok, _ := cat.CheckNamespaceExists(ctx, table.Identifier(ref.Namespace)); !ok {
				return nil, nil, fmt.Errorf("source %s: %w: catalog %q has no namespace %q%s", ref, ErrNotFound, ref.Catalog, strings.Join(ref.Namespace, "."), namespaceHint(ctx, cat, ref))
			}
			return nil, nil, fmt.Errorf("source %s: %w: namespace %q of catalog %q has no table %q", ref, ErrNotFound, strings.Join(ref.Namespace, "."), ref.Catalog, ref.Table)
		}
		return nil, nil, fmt.Errorf("source %s: load table: %w", ref, err)
	}
	return tbl, release, nil
}

func resolveTable(ctx context.Context, ref Ref, tbl *table.Table, snapshotID int64, wrap func(storage.Bucket) storage.Bucket) (*Snapshot, error) {
	md := tbl.Metadata()
	var snap *table.Snapshot
	if snapshotID == 0 {
		snap = tbl.CurrentSnapshot()
		if snap == nil {
			return nil, fmt.Errorf("source %s: %w: the table has no snapshot yet (append data first)", ref, ErrNotFound)
		}
	} else if snap = tbl.SnapshotByID(snapshotID); snap == nil {
		return nil, fmt.Errorf("source %s: %w: snapshot %d no longer exists (expired); `parqdb index refresh` rebuilds on the current snapshot", ref, ErrNotFound, snapshotID)
	}
	schema := md.CurrentSchema()
	if snap.SchemaID != nil {
		for _, s := range md.Schemas() {
			if s.ID == *snap.SchemaID {
				schema = s
			}
		}
	}
	loc := strings.TrimSuffix(md.Location(), "/")
	s := &Snapshot{Ref: ref, TableUUID: md.TableUUID().String(), SnapshotID: snap.SnapshotID, Location: loc, Schema: schema,
		FieldIDs: fieldIDs(schema, md.Schemas())}
	tasks, err := tbl.Scan(table.WithSnapshotID(snap.SnapshotID)).PlanFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("source %s snapshot %d: plan files: %w", ref, snap.SnapshotID, err)
	}
	type file struct {
		info storage.Info
		rows int64
	}
	files := make([]file, 0, len(tasks))
	seen := map[string]bool{}
	for _, t := range tasks {
		df := t.File
		if df.FileFormat() != iceberg.ParquetFile {
			return nil, fmt.Errorf("source %s snapshot %d: %w: data file %s is %s; only Parquet data files are read",
				ref, snap.SnapshotID, ErrUnsupported, df.FilePath(), df.FileFormat())
		}
		key, ok := relKey(loc, df.FilePath())
		if !ok {
			return nil, fmt.Errorf("source %s snapshot %d: %w: data file %s is outside the table location %s",
				ref, snap.SnapshotID, ErrUnsupported, df.FilePath(), loc)
		}
		if seen[key] {
			// A file split into several tasks is one file.
			continue
		}
		seen[key] = true
		files = append(files, file{storage.Info{Key: key, Size: df.FileSizeBytes(), ModTime: time.Unix(0, 0)}, df.Count()})
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("source %s snapshot %d: %w: the snapshot has no data files", ref, snap.SnapshotID, ErrNotFound)
	}
	b, err := openBucket(ctx, loc)
	if err != nil {
		return nil, fmt.Errorf("source %s: table location %s: %w", ref, loc, err)
	}
	if wrap != nil {
		b = wrap(b)
	}
	if s.Deleted, err = resolveDeletes(ctx, ref, tbl, snap.SnapshotID, loc, b, tasks); err != nil {
		return nil, err
	}
	sort.Slice(files, func(i, j int) bool { return files[i].info.Key < files[j].info.Key })
	for _, f := range files {
		if bm := s.Deleted[f.info.Key]; bm != nil {
			f.info.ETag = deleteVersion(bm)
		}
		s.Files = append(s.Files, f.info)
		s.Rows = append(s.Rows, f.rows)
	}
	s.Bucket = b
	return s, nil
}

// relKey returns path relative to the table location loc, when it lies
// below it (comparing file:///x and /x as the same local path).
func relKey(loc, path string) (string, bool) {
	norm := func(s string) string {
		s = s3URL(s)
		if rest, ok := strings.CutPrefix(s, "file://"); ok {
			if u, err := url.Parse(s); err == nil && u.Host == "" {
				return u.Path
			}
			return rest
		}
		return s
	}
	rel, ok := strings.CutPrefix(norm(path), norm(loc)+"/")
	if !ok || rel == "" {
		return "", false
	}
	return rel, true
}

// openBucket opens the table location as a storage bucket: an s3:// URL,
// a file:// URL or an absolute path. A local location must exist (a table
// whose folder was deleted is not recreated empty).
func openBucket(ctx context.Context, loc string) (storage.Bucket, error) {
	if loc = s3URL(loc); strings.HasPrefix(loc, "s3://") {
		return storage.Open(ctx, loc)
	}
	path := loc
	if strings.HasPrefix(loc, "file://") {
		u, err := url.Parse(loc)
		if err != nil {
			return nil, err
		}
		path = u.Path
	}
	if !strings.HasPrefix(path, "/") {
		return nil, fmt.Errorf("%w: location %q is neither s3://, file:// nor an absolute path", ErrUnsupported, loc)
	}
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	return storage.Open(ctx, path)
}

// fieldIDs is Snapshot.FieldIDs: the top-level fields of schema by name,
// then the former names of the other schemas (highest schema id first)
// that schema does not use.
func fieldIDs(schema *iceberg.Schema, all []*iceberg.Schema) map[string]int {
	ids := map[string]int{}
	for _, f := range schema.Fields() {
		ids[f.Name] = f.ID
	}
	others := slices.Clone(all)
	sort.Slice(others, func(i, j int) bool { return others[i].ID > others[j].ID })
	for _, sc := range others {
		for _, f := range sc.Fields() {
			if _, taken := ids[f.Name]; !taken {
				ids[f.Name] = f.ID
			}
		}
	}
	return ids
}

// CurrentNames are the top-level field names of the snapshot's schema.
func (s *Snapshot) CurrentNames() []string {
	var out []string
	for _, f := range s.Schema.Fields() {
		out = append(out, f.Name)
	}
	return out
}

// namespaceHint says what the catalog of ref does hold when it has no
// namespace ref.Namespace: its namespaces, or, when it has none at all, the
// catalog names stored in its SQL catalog database. An iceberg-go SQL
// catalog keeps each row under the catalog name it was created with
// (column catalog_name), and ParqDB reads the rows of the name in
// iceberg://NAME/…, so another name finds an empty catalog. It returns ""
// when it learns nothing.
func namespaceHint(ctx context.Context, cat catalog.Catalog, ref Ref) string {
	nss, err := cat.ListNamespaces(ctx, nil)
	if err != nil {
		return ""
	}
	if len(nss) > 0 {
		names := make([]string, len(nss))
		for i, ns := range nss {
			names[i] = strings.Join(ns, ".")
		}
		return fmt.Sprintf(" (its namespaces: %s)", strings.Join(names, ", "))
	}
	stored := storedCatalogNames(ctx, ref.Catalog)
	if len(stored) == 0 || slices.Contains(stored, ref.Catalog) {
		return ""
	}
	quoted := make([]string, len(stored))
	for i, n := range stored {
		quoted[i] = strconv.Quote(n)
	}
	return fmt.Sprintf(" (its SQL catalog database holds no catalog named %q, only %s: the NAME of iceberg://NAME/… must be the catalog name stored there, e.g. iceberg://%s/%s/%s with %s set as %s is now)",
		ref.Catalog, strings.Join(quoted, ", "), stored[0], strings.Join(ref.Namespace, "."), ref.Table, envName(stored[0], "URI"), envName(ref.Catalog, "URI"))
}

// storedCatalogNames lists the catalog names stored in the database of the
// SQL catalog configured as name (nil for a REST catalog or on any error).
func storedCatalogNames(ctx context.Context, name string) []string {
	p, err := CatalogProps(name)
	if err != nil || p["type"] != "sql" {
		return nil
	}
	db, err := sql.Open(p["sql.driver"], p["uri"])
	if err != nil {
		return nil
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT catalog_name FROM iceberg_tables UNION SELECT catalog_name FROM iceberg_namespace_properties ORDER BY 1`)
	if err != nil {
		return nil
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if rows.Scan(&n) != nil {
			return nil
		}
		out = append(out, n)
	}
	if rows.Err() != nil {
		return nil
	}
	return out
}
