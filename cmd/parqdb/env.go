package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/storage"
)

// env is an opened warehouse and catalog.
type env struct {
	wh  storage.Bucket
	cat catalog.Catalog
}

func (e *env) Close() error { return e.cat.Close() }

// openEnv opens the existing warehouse and catalog named by the global
// settings. It creates nothing: when they do not exist it fails with
// catalog.ErrNoWarehouse and an error that names the location and the
// flags to check. Only index create makes a new warehouse, so that a typo
// in --warehouse never leaves an empty one behind.
func openEnv(ctx context.Context, g *globals) (*env, error) {
	return openEnvMode(ctx, g, false)
}

// openEnvMode opens the warehouse and catalog; create lets it make them
// (the local folder, the SQLite catalog file) when missing.
func openEnvMode(ctx context.Context, g *globals, create bool) (*env, error) {
	e, err := catalog.OpenEnv(ctx, g.envSpec(create))
	if err != nil {
		return nil, noWarehouseHint(err)
	}
	return &env{wh: e.Warehouse, cat: suggestingCatalog{e.Catalog}}, nil
}

// envSpec is the warehouse and catalog the global settings name.
func (g *globals) envSpec(create bool) catalog.EnvSpec {
	return catalog.EnvSpec{Warehouse: g.warehouse, Catalog: g.catalog, Create: create}
}

// noWarehouseHint adds to a catalog.NoWarehouseError the flags to check
// and the command that makes a new warehouse.
func noWarehouseHint(err error) error {
	var nw *catalog.NoWarehouseError
	switch {
	case !errors.As(err, &nw):
		return err
	case nw.Catalog:
		return fmt.Errorf("%w (check --catalog / PARQDB_CATALOG; parqdb index create makes a new catalog)", err)
	}
	return fmt.Errorf("%w (check --warehouse / PARQDB_WAREHOUSE and --catalog / PARQDB_CATALOG; "+
		"parqdb index create makes a new warehouse)", err)
}

// suggestingCatalog is the catalog every command uses: an index name it
// does not hold (a Load or Drop failing with catalog.NotFoundError) gets the
// nearest name it does hold as a suggestion, for every command that takes
// an index name.
type suggestingCatalog struct{ catalog.Catalog }

func (c suggestingCatalog) Load(ctx context.Context, name string) (catalog.Entry, error) {
	e, err := c.Catalog.Load(ctx, name)
	return e, c.suggest(ctx, err)
}

func (c suggestingCatalog) Drop(ctx context.Context, name string) error {
	return c.suggest(ctx, c.Catalog.Drop(ctx, name))
}

// suggest adds "did you mean …?" to a NotFoundError when the catalog holds
// a near name; any other error, and a failing List, leave err as it is.
func (c suggestingCatalog) suggest(ctx context.Context, err error) error {
	var nf *catalog.NotFoundError
	if !errors.As(err, &nf) {
		return err
	}
	names, lerr := c.Catalog.List(ctx)
	if lerr != nil {
		return err
	}
	if near := nearestName(nf.Name, names); near != "" {
		return fmt.Errorf("%w; did you mean %q?", err, near)
	}
	return err
}

// nearestName returns the name of names nearest to name (edit distance,
// ignoring case, at most a third of its letters, at least 1, and at least 2
// from four letters on, so that two swapped letters are found; the first in
// order on a tie), or "" when none is that near.
func nearestName(name string, names []string) string {
	limit := max(1, len(name)/3)
	if len(name) >= 4 {
		limit = max(2, limit)
	}
	best, bestD := "", limit+1
	for _, n := range names {
		if n == name {
			continue
		}
		if d := levenshtein(strings.ToLower(name), strings.ToLower(n)); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// withEnv opens the existing warehouse and catalog (see openEnv), runs fn
// with them and closes them.
func withEnv(ctx context.Context, g *globals, fn func(e *env) error) error {
	return withEnvMode(ctx, g, false, fn)
}

// withNewEnv is withEnv for the commands that may write the first index of
// a warehouse (index create): it creates the warehouse folder and the
// SQLite catalog when missing.
//
// When fn fails, what it created is removed again, so that a failed first
// create (a typo in a field name, a missing source) leaves no warehouse
// behind: a SQLite catalog file that did not exist before and holds no
// index, and the empty folders of a local warehouse folder (and of its
// parents) that did not exist before. A PostgreSQL catalog's table is left.
func withNewEnv(ctx context.Context, g *globals, fn func(e *env) error) error {
	u := newWarehouseUndo(g)
	err := withEnvMode(ctx, g, true, fn)
	if err != nil {
		u.undo()
	}
	return err
}

// warehouseUndo records which parts of a new local warehouse do not exist
// yet (newWarehouseUndo), so that undo can remove them.
type warehouseUndo struct {
	dir string // the outermost folder of the warehouse path that did not exist
	db  string // the SQLite catalog file, when it did not exist
}

func newWarehouseUndo(g *globals) warehouseUndo {
	var u warehouseUndo
	dir, local, db, ok := g.envSpec(true).LocalFiles()
	if local {
		// Opening the warehouse makes the missing parents too.
		for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
			if _, err := os.Lstat(d); !errors.Is(err, fs.ErrNotExist) {
				break
			}
			u.dir = d
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	if ok {
		if _, err := os.Lstat(db); errors.Is(err, fs.ErrNotExist) {
			u.db = db
		}
	}
	return u
}

// undo removes the SQLite catalog file (and its journal files) if it holds
// no index, then every empty folder of the warehouse folder, deepest first.
// It is best effort: what it cannot remove stays, and a folder that holds
// a file stays.
func (u warehouseUndo) undo() {
	if u.db != "" {
		if empty := func() bool {
			if _, err := os.Lstat(u.db); err != nil {
				return false
			}
			cat, err := catalog.OpenSQLite(context.Background(), u.db)
			if err != nil {
				return false
			}
			defer cat.Close()
			names, err := cat.List(context.Background())
			return err == nil && len(names) == 0
		}(); empty {
			for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
				os.Remove(u.db + suffix)
			}
		}
	}
	if u.dir == "" {
		return
	}
	var dirs []string
	filepath.WalkDir(u.dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, path)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		os.Remove(dirs[i]) // fails, and keeps it, unless it is empty
	}
}

func withEnvMode(ctx context.Context, g *globals, create bool, fn func(e *env) error) error {
	e, err := openEnvMode(ctx, g, create)
	if err != nil {
		return err
	}
	defer e.Close()
	return fn(e)
}

// withHint adds to an error the step that usually fixes it, where the
// library that made the error cannot know it because it names CLI commands
// or flags.
func withHint(err error) error {
	if errors.Is(err, catalog.ErrNotFound) {
		return fmt.Errorf("%w (parqdb index list shows the indexes; check --warehouse and --catalog)", err)
	}
	return err
}
