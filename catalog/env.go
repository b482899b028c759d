package catalog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/parqdb/parqdb/storage"
)

// DefaultWarehouse is the warehouse SpecFromEnviron names when
// PARQDB_WAREHOUSE is not set (the CLI's default).
const DefaultWarehouse = "./warehouse"

// EnvSpec names a warehouse and its catalog, as the CLI's --warehouse and
// --catalog do.
type EnvSpec struct {
	// Warehouse is a local folder (a path or a file: URL) or
	// s3://bucket/prefix (storage.Open).
	Warehouse string
	// Catalog is a catalog spec as Open takes it: "" for SQLite in the
	// local warehouse folder, sqlite:PATH, postgres://…, or "warehouse".
	Catalog string
	// Create lets OpenEnv make what is missing: the local warehouse folder
	// and the SQLite catalog file. Without it OpenEnv creates nothing and
	// fails with a *NoWarehouseError when they do not exist.
	Create bool
	// Wrap, when set, wraps the opened warehouse before the catalog is
	// opened on it (e.g. storage.WithStats, to count the catalog's reads).
	Wrap func(storage.Bucket) storage.Bucket
}

// SpecFromEnviron returns the spec the environment names:
// PARQDB_WAREHOUSE (DefaultWarehouse when unset) and PARQDB_CATALOG.
func SpecFromEnviron() EnvSpec {
	wh := os.Getenv("PARQDB_WAREHOUSE")
	if wh == "" {
		wh = DefaultWarehouse
	}
	return EnvSpec{Warehouse: wh, Catalog: os.Getenv("PARQDB_CATALOG")}
}

// Env is an opened warehouse and its catalog.
type Env struct {
	Warehouse storage.Bucket
	Catalog   Catalog
}

// Close closes the catalog (a warehouse holds nothing open).
func (e *Env) Close() error { return e.Catalog.Close() }

// NoWarehouseError is OpenEnv's error, without EnvSpec.Create, for a
// location that holds no warehouse; errors.Is(err, ErrNoWarehouse)
// matches it.
type NoWarehouseError struct {
	// At is the warehouse location, or for a missing SQLite catalog named
	// by its own spec, the catalog file.
	At string
	// Reason says what is missing.
	Reason string
	// Catalog: the warehouse may exist but the catalog its spec names
	// does not.
	Catalog bool
}

func (e *NoWarehouseError) Error() string {
	if e.Catalog {
		return fmt.Sprintf("%v: the catalog %s %s", ErrNoWarehouse, e.At, e.Reason)
	}
	return fmt.Sprintf("%v at %s: %s", ErrNoWarehouse, e.At, e.Reason)
}

func (e *NoWarehouseError) Unwrap() error { return ErrNoWarehouse }

// OpenEnv opens the warehouse and the catalog s names. Without s.Create it
// opens only an existing warehouse: a local folder that does not exist, a
// SQLite catalog file that does not exist, and a warehouse catalog that
// never recorded an index are a *NoWarehouseError, and nothing is created,
// so that a typo never leaves an empty warehouse behind; and an empty
// SQLite file (which SQLite would open as an empty catalog, making every
// index look gone) is refused. The caller closes the Env.
func OpenEnv(ctx context.Context, s EnvSpec) (*Env, error) {
	if !s.Create {
		if err := s.checkLocal(); err != nil {
			return nil, err
		}
	}
	wh, err := storage.Open(ctx, s.Warehouse)
	if err != nil {
		return nil, err // it names the warehouse
	}
	if s.Wrap != nil {
		wh = s.Wrap(wh)
	}
	if !s.Create && s.Catalog == "warehouse" {
		if err := checkWarehouseCatalog(ctx, wh); err != nil {
			return nil, err
		}
	}
	cat, err := Open(ctx, s.Catalog, wh)
	if err != nil {
		return nil, err
	}
	return &Env{Warehouse: wh, Catalog: cat}, nil
}

// LocalFiles returns the folder of a local warehouse (dirOK false for any
// other) and the SQLite catalog file s names, or the default one in the
// local warehouse folder (dbOK false when the catalog is not SQLite).
func (s EnvSpec) LocalFiles() (dir string, dirOK bool, db string, dbOK bool) {
	dir, dirOK = localWarehouseDir(s.Warehouse)
	db, dbOK = sqlitePath(s.Catalog)
	if s.Catalog == "" && dirOK {
		db, dbOK = filepath.Join(dir, DefaultSQLiteFile), true
	}
	return dir, dirOK, db, dbOK
}

// checkLocal fails with a *NoWarehouseError when the warehouse is a local
// folder that does not exist, or when its SQLite catalog does not. Other
// warehouses and catalogs are left to the opening code.
func (s EnvSpec) checkLocal() error {
	dir, local, dbPath, sqlite := s.LocalFiles()
	if local {
		fi, err := os.Stat(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return &NoWarehouseError{At: dir, Reason: "the folder does not exist"}
		case err != nil:
			return fmt.Errorf("warehouse %s: %w", dir, err)
		case !fi.IsDir():
			return &NoWarehouseError{At: dir, Reason: "it is a file, not a folder"}
		}
	}
	if !sqlite {
		return nil
	}
	fi, err := os.Stat(dbPath)
	if err == nil && fi.Size() == 0 {
		// SQLite opens an empty file as an empty database: every index
		// would look gone, and gc would take all their files for orphans.
		return fmt.Errorf("the catalog %s is empty (0 bytes), so it holds no index, not even the table: "+
			"restore it from a backup; this command refuses to treat it as an empty catalog", dbPath)
	}
	if errors.Is(err, fs.ErrNotExist) {
		if s.Catalog == "" {
			return &NoWarehouseError{At: dir, Reason: "it holds no catalog (" + DefaultSQLiteFile + ")"}
		}
		return &NoWarehouseError{At: dbPath, Reason: "does not exist", Catalog: true}
	}
	return nil
}

// checkWarehouseCatalog fails with a *NoWarehouseError when the warehouse
// catalog has never recorded an index: its catalog/ folder is empty.
// Dropping an index leaves a record, so an existing warehouse whose indexes
// were all dropped still passes.
func checkWarehouseCatalog(ctx context.Context, wh storage.Bucket) error {
	infos, err := wh.List(ctx, WarehousePrefix)
	if err != nil {
		return fmt.Errorf("warehouse %s: %w", wh, err)
	}
	if len(infos) == 0 {
		return &NoWarehouseError{At: wh.String(), Reason: "it holds no catalog entry under " + WarehousePrefix}
	}
	return nil
}

// localWarehouseDir returns the folder of a local warehouse location (a
// path or a file: URL), and false for a URL of any other scheme, which
// storage.Open opens (or refuses) without creating a local folder.
func localWarehouseDir(loc string) (string, bool) {
	if loc == "" {
		return "", false
	}
	if len(loc) > 5 && strings.EqualFold(loc[:5], "file:") {
		u, err := url.Parse(loc)
		if err != nil || u.Path == "" || (u.Host != "" && u.Host != "localhost") {
			return "", false // storage.Open explains what is wrong
		}
		return u.Path, true
	}
	if scheme, _, ok := strings.Cut(loc, "://"); ok && isScheme(scheme) {
		return "", false
	}
	return loc, true
}

// isScheme reports whether s is a URL scheme of two or more characters.
func isScheme(s string) bool {
	if len(s) < 2 {
		return false
	}
	for i, c := range s {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
}

// sqlitePath returns the file of a catalog spec naming a SQLite catalog
// (sqlite:PATH, sqlite:///abs/path, or a path ending in .db), as Open reads
// it; "sqlite:" alone names none.
func sqlitePath(spec string) (string, bool) {
	lower := strings.ToLower(spec)
	switch {
	case strings.HasPrefix(lower, "sqlite:"):
		path := spec[len("sqlite:"):]
		if rest, ok := strings.CutPrefix(path, "//"); ok {
			path = rest // sqlite:///abs/path → /abs/path
		}
		return path, path != ""
	case strings.HasSuffix(lower, ".db") && !strings.Contains(spec, "://"):
		return spec, true
	}
	return "", false
}
