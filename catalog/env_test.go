package catalog

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLocalWarehouseDir(t *testing.T) {
	for _, tc := range []struct {
		loc   string
		dir   string
		local bool
	}{
		{"./warehouse", "./warehouse", true},
		{"/abs/wh", "/abs/wh", true},
		{"file:///abs/wh", "/abs/wh", true},
		{"FILE://localhost/abs/wh", "/abs/wh", true},
		{"file:relative", "", false},
		{"file://host/x", "", false},
		{"s3://bucket/prefix", "", false},
		{"gs://bucket", "", false},
		{"dir:with:colons", "dir:with:colons", true},
		{"C:\\wh", "C:\\wh", true},
		{"", "", false},
	} {
		dir, local := localWarehouseDir(tc.loc)
		if dir != tc.dir || local != tc.local {
			t.Errorf("localWarehouseDir(%q) = %q, %v; want %q, %v", tc.loc, dir, local, tc.dir, tc.local)
		}
	}
}

// TestOpenEnvNoWarehouse: without Create, OpenEnv opens nothing where no
// warehouse is, says what is missing, and creates no file; with Create it
// makes the folder and the SQLite catalog.
func TestOpenEnvNoWarehouse(t *testing.T) {
	ctx := context.Background()
	root, other := t.TempDir(), t.TempDir()
	wh := filepath.Join(root, "wh")
	for _, tc := range []struct {
		name, wh, catalog, want string
		isCatalog               bool
	}{
		{"no folder", wh, "", "no warehouse at " + wh + ": the folder does not exist", false},
		{"no sqlite file", other, "sqlite:" + filepath.Join(root, "c.db"), "no warehouse: the catalog " + filepath.Join(root, "c.db") + " does not exist", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := OpenEnv(ctx, EnvSpec{Warehouse: tc.wh, Catalog: tc.catalog})
			var nw *NoWarehouseError
			if !errors.Is(err, ErrNoWarehouse) || !errors.As(err, &nw) || nw.Catalog != tc.isCatalog || err.Error() != tc.want {
				t.Fatalf("OpenEnv: %v, want %q", err, tc.want)
			}
			if ents, _ := os.ReadDir(root); len(ents) != 0 {
				t.Fatalf("OpenEnv created %v", ents)
			}
		})
	}
	if err := os.Mkdir(wh, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenEnv(ctx, EnvSpec{Warehouse: wh}); err == nil || !strings.Contains(err.Error(), "holds no catalog (catalog.db)") {
		t.Fatalf("OpenEnv of a folder without catalog.db: %v", err)
	}
	if _, err := OpenEnv(ctx, EnvSpec{Warehouse: wh, Catalog: "warehouse"}); !errors.Is(err, ErrNoWarehouse) {
		t.Fatalf("OpenEnv of a warehouse catalog with no entry: %v", err)
	}
	if err := os.WriteFile(filepath.Join(wh, DefaultSQLiteFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenEnv(ctx, EnvSpec{Warehouse: wh}); err == nil || !strings.Contains(err.Error(), "is empty (0 bytes)") {
		t.Fatalf("OpenEnv of an empty catalog.db: %v", err)
	}
	os.Remove(filepath.Join(wh, DefaultSQLiteFile))
	e, err := OpenEnv(ctx, EnvSpec{Warehouse: filepath.Join(root, "new"), Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := os.Stat(filepath.Join(root, "new", DefaultSQLiteFile)); err != nil {
		t.Fatalf("Create made no catalog: %v", err)
	}
}
