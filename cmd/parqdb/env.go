package main

import (
	"context"
	"fmt"

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
	cat, err := catalog.Open(ctx, g.catalog, wh)
	if err != nil {
		return nil, err
	}
	return &env{wh: wh, cat: cat}, nil
}

// withEnv opens the warehouse and catalog, runs fn with them and closes
// them.
func withEnv(ctx context.Context, g *globals, fn func(e *env) error) error {
	e, err := openEnv(ctx, g)
	if err != nil {
		return err
	}
	defer e.Close()
	return fn(e)
}
