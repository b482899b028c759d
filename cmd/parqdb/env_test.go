package main

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parqdb/parqdb/catalog"
)

// readOnlyCommands are the commands that never write the first index of a
// warehouse, so they must never create one.
var readOnlyCommands = [][]string{
	{"index", "list"},
	{"index", "describe", "words"},
	{"index", "history", "words"},
	{"index", "verify", "words"},
	{"index", "refresh", "words"},
	{"index", "optimize", "words"},
	{"index", "expire", "words", "--retain-last", "1"},
	{"index", "drop", "words"},
	{"search", "words", "--near-key", "king"},
	{"gc", "--dry-run"},
	{"gc"},
	{"serve", "--listen", "127.0.0.1:0"},
}

// tree lists every file and folder below dir.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var all []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		all = append(all, p)
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return all
}

// TestReadOnlyCommandsCreateNoWarehouse runs every read-only command
// against a --warehouse that holds no warehouse (a typo): each exits 1 with
// a message naming the location and creates no file or folder.
func TestReadOnlyCommandsCreateNoWarehouse(t *testing.T) {
	queries := filepath.Join(t.TempDir(), "q.fvecs")
	writeFvecs(t, queries, gloveQueries(2))
	commands := append(slices.Clone(readOnlyCommands), []string{"bench", "words", "--queries", queries})

	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, root string) (warehouse, catalogSpec, named string)
	}{
		{"missing folder", func(t *testing.T, root string) (string, string, string) {
			wh := filepath.Join(root, "wharehouse")
			return wh, "", wh
		}},
		{"missing folder, file URL", func(t *testing.T, root string) (string, string, string) {
			wh := filepath.Join(root, "wharehouse")
			return "file://" + wh, "", wh
		}},
		{"folder without catalog.db", func(t *testing.T, root string) (string, string, string) {
			return root, "", root
		}},
		{"missing sqlite catalog", func(t *testing.T, root string) (string, string, string) {
			db := filepath.Join(root, "typo.db")
			return root, "sqlite:" + db, db
		}},
		{"missing .db catalog", func(t *testing.T, root string) (string, string, string) {
			db := filepath.Join(root, "typo.db")
			return root, db, db
		}},
		{"empty warehouse catalog", func(t *testing.T, root string) (string, string, string) {
			return root, "warehouse", root
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, args := range commands {
				root := t.TempDir()
				wh, cat, named := tc.setup(t, root)
				before := tree(t, root)
				all := append([]string{"--warehouse", wh, "--catalog", cat}, args...)
				_, errs, code := runSplit(t, all...)
				if code != exitProblem {
					t.Errorf("%v: exit %d, want %d: %s", args, code, exitProblem, errs)
				}
				if !strings.Contains(errs, "no warehouse") || !strings.Contains(errs, named) {
					t.Errorf("%v: message does not say there is no warehouse at %s: %s", args, named, errs)
				}
				if after := tree(t, root); !slices.Equal(before, after) {
					t.Errorf("%v created files: before %v, after %v", args, before, after)
				}
			}
		})
	}
}

// TestIndexCreateMakesWarehouse: index create still makes a new warehouse
// (folder and SQLite catalog), and the read-only commands then work on it.
func TestIndexCreateMakesWarehouse(t *testing.T) {
	wh := gloveWarehouse(t) // a folder that did not exist
	if _, err := os.Stat(filepath.Join(wh, catalog.DefaultSQLiteFile)); err != nil {
		t.Fatal(err)
	}
	out, errs, code := runSplit(t, "--warehouse", wh, "index", "list")
	if code != exitOK || !strings.Contains(out, "words") {
		t.Errorf("index list: exit %d: %s%s", code, out, errs)
	}
	// An existing warehouse whose catalog has no index: list prints nothing.
	empty := emptyWarehouse(t)
	if out, errs, code := runSplit(t, "--warehouse", empty, "index", "list"); code != exitOK || strings.Contains(out, "words") {
		t.Errorf("empty warehouse: index list: exit %d: %q %s", code, out, errs)
	}
}

// emptyWarehouse returns a local warehouse folder whose SQLite catalog
// exists and holds no index.
func emptyWarehouse(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	c, err := catalog.OpenSQLite(context.Background(), filepath.Join(dir, catalog.DefaultSQLiteFile))
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	return dir
}
