package main

import (
	"context"
	"fmt"
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

// openEnv opens the warehouse and catalog named by the global settings.
func openEnv(ctx context.Context, g *globals) (*env, error) {
	wh, err := storage.Open(ctx, g.warehouse)
	if err != nil {
		return nil, fmt.Errorf("warehouse: %w", err)
	}
	cat, err := openCatalog(ctx, g.catalog, wh)
	if err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	return &env{wh: wh, cat: cat}, nil
}

// openCatalog opens the catalog spec: "" for SQLite at
// <warehouse>/catalog.db (local warehouses), "sqlite:PATH" or a path ending
// in .db, "postgres://…", or "warehouse" for the object-store catalog.
func openCatalog(ctx context.Context, spec string, wh storage.Bucket) (catalog.Catalog, error) {
	switch {
	case spec == "":
		dir, ok := storage.IsLocal(wh)
		if !ok {
			return nil, fmt.Errorf("the warehouse %s is not a local folder: choose a catalog with --catalog (postgres://… or warehouse)", wh)
		}
		return catalog.OpenSQLite(ctx, filepath.Join(dir, "catalog.db"))
	case spec == "warehouse":
		return catalog.NewWarehouse(wh), nil
	case strings.HasPrefix(spec, "postgres://"), strings.HasPrefix(spec, "postgresql://"):
		return catalog.OpenPostgres(ctx, spec)
	case strings.HasPrefix(spec, "sqlite:"):
		return catalog.OpenSQLite(ctx, strings.TrimPrefix(spec, "sqlite:"))
	case strings.HasSuffix(spec, ".db"):
		return catalog.OpenSQLite(ctx, spec)
	}
	return nil, usagef("--catalog %q: want empty (SQLite in the warehouse), sqlite:PATH, postgres://… or warehouse", spec)
}
