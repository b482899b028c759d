package catalog

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/parqdb/parqdb/storage"
)

// DefaultSQLiteFile is the catalog file Open uses in a local warehouse
// when no catalog is given.
const DefaultSQLiteFile = "catalog.db"

// Open opens the catalog named by spec (the --catalog flag):
//
//   - "" — SQLite at <warehouse folder>/catalog.db when the warehouse is a
//     local folder (storage.IsLocal); an error asking for --catalog
//     otherwise, because a database file cannot live in an object store;
//   - "sqlite:PATH" (also "sqlite:///abs/path") or a path ending in ".db" —
//     SQLite at PATH;
//   - "postgres://…" or "postgresql://…" — PostgreSQL;
//   - "warehouse" — the warehouse catalog, stored in the warehouse bucket.
//
// Errors never contain a DSN's password.
func Open(ctx context.Context, spec string, warehouse storage.Bucket) (Catalog, error) {
	lower := strings.ToLower(spec)
	switch {
	case spec == "":
		if warehouse == nil {
			return nil, errors.New("no catalog and no warehouse given")
		}
		dir, ok := storage.IsLocal(warehouse)
		if !ok {
			return nil, fmt.Errorf("warehouse %s is not a local folder, so there is no default catalog: "+
				"choose one with --catalog (sqlite:PATH, postgres://…, or warehouse)", warehouse)
		}
		return OpenSQLite(ctx, filepath.Join(dir, DefaultSQLiteFile))
	case spec == "warehouse":
		if warehouse == nil {
			return nil, errors.New("the warehouse catalog needs a warehouse")
		}
		return NewWarehouse(warehouse), nil
	case strings.HasPrefix(lower, "sqlite:") || strings.HasSuffix(lower, ".db") && !strings.Contains(spec, "://"):
		path, ok := sqlitePath(spec)
		if !ok {
			return nil, errors.New(`catalog "sqlite:" needs a path (sqlite:PATH)`)
		}
		return OpenSQLite(ctx, path)
	case strings.HasPrefix(lower, "postgres://") || strings.HasPrefix(lower, "postgresql://"):
		return OpenPostgres(ctx, spec)
	}
	return nil, fmt.Errorf("%w %q: want sqlite:PATH, a .db path, postgres://…, or warehouse",
		ErrUnknownCatalog, redactDSNText(spec))
}
