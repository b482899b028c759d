package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/lifecycle"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/server/serving"
	"github.com/parqdb/parqdb/storage"
	"github.com/parqdb/parqdb/verify"
)

// db is a warehouse and its catalog (method connect). It opens them on
// first use and, like the CLI, creates a missing warehouse only for a
// build (create_index), so that a mistyped location never leaves an empty
// warehouse behind.
type db struct {
	spec catalog.EnvSpec
	mu   sync.Mutex
	env  *catalog.Env
}

// open returns the opened warehouse and catalog; create lets it make them.
func (d *db) open(ctx context.Context, create bool) (*catalog.Env, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.env != nil {
		return d.env, nil
	}
	spec := d.spec
	spec.Create = create
	e, err := catalog.OpenEnv(ctx, spec)
	if err != nil {
		return nil, err
	}
	d.env = e
	return e, nil
}

func (d *db) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.env == nil {
		return nil
	}
	err := d.env.Catalog.Close()
	d.env = nil
	return err
}

// index is an opened index (method open_index).
type index struct {
	ix *query.Index
}

func (x *index) Close() error { return x.ix.Close() }

// exact answers the queries by brute force (ground truth for recall).
func (x *index) exact(ctx context.Context, qs [][]float32, p *parsedOptions) ([]*query.Result, error) {
	k := p.opts.K
	var hits [][]query.Hit
	var err error
	if p.opts.Filter != nil {
		hits, err = x.ix.ExactFilteredBatch(ctx, qs, k, p.workers, p.opts.Filter)
	} else {
		hits, err = x.ix.ExactBatch(ctx, qs, k, p.workers)
	}
	if err != nil {
		return nil, err
	}
	rs := make([]*query.Result, len(hits))
	for i, h := range hits {
		rs[i] = &query.Result{Columns: []string{metadata.ReservedField}, Hits: h}
	}
	return rs, nil
}

// call runs one management method; t is the call's task (nil: none).
func call(ctx context.Context, t *task, method string, args []byte) (any, error) {
	op, ok := ops[method]
	if !ok {
		return nil, fmt.Errorf("%w: no method %q", query.ErrBadQuery, method)
	}
	return op(ctx, t, args)
}

type op func(ctx context.Context, t *task, args []byte) (any, error)

// decode reads a method's JSON arguments into v, refusing unknown fields
// (a misspelt argument is an error, not a silent default).
func decode(method string, args []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %s arguments: %v", query.ErrBadQuery, method, err)
	}
	return nil
}

// dbArgs names the db handle of a method; nameArgs also an index.
type dbArgs struct {
	DB int64 `json:"db"`
}

type nameArgs struct {
	DB   int64  `json:"db"`
	Name string `json:"name"`
}

func openDB(ctx context.Context, h int64, create bool) (*catalog.Env, error) {
	d, err := lookup[*db](h, "warehouse")
	if err != nil {
		return nil, err
	}
	return d.open(ctx, create)
}

// progressOf is t as an indexer.Progress (nil without a task).
func progressOf(t *task) indexer.Progress {
	if t == nil {
		return nil
	}
	return t
}

// ops are the methods of parqdb_call: name → arguments (JSON) → result.
var ops = map[string]op{
	// connect {warehouse, catalog, environ}: a db handle. A null
	// warehouse or catalog is taken from PARQDB_WAREHOUSE and
	// PARQDB_CATALOG, as the CLI does. Nothing is opened yet.
	//
	// environ is the caller's current value of every variable of the
	// prefixes in envPrefixes: the Go runtime copied the process
	// environment when the library was loaded, so a variable a notebook
	// sets afterwards (os.environ["AWS_ENDPOINT_URL_S3"] = …) would be
	// unseen without it.
	"connect": func(ctx context.Context, _ *task, args []byte) (any, error) {
		var a struct {
			Warehouse *string           `json:"warehouse"`
			Catalog   *string           `json:"catalog"`
			Environ   map[string]string `json:"environ"`
		}
		if err := decode("connect", args, &a); err != nil {
			return nil, err
		}
		if a.Environ != nil {
			syncEnviron(a.Environ)
		}
		spec := catalog.SpecFromEnviron()
		if a.Warehouse != nil {
			spec.Warehouse = *a.Warehouse
		}
		if a.Catalog != nil {
			spec.Catalog = *a.Catalog
		}
		return map[string]any{"db": newHandle(&db{spec: spec})}, nil
	},
	// indexes {db}: the index names, sorted.
	"indexes": func(ctx context.Context, _ *task, args []byte) (any, error) {
		var a dbArgs
		if err := decode("indexes", args, &a); err != nil {
			return nil, err
		}
		e, err := openDB(ctx, a.DB, false)
		if err != nil {
			return nil, err
		}
		names, err := e.Catalog.List(ctx)
		if names == nil {
			names = []string{}
		}
		return names, err
	},
	// create_index {db, name, source, vector_field, key_fields, metric,
	// encoding, nlist, vectors_file, seed, workers}: builds and commits
	// the first snapshot (indexer.Create), reporting progress to the task.
	"create_index": func(ctx context.Context, t *task, args []byte) (any, error) {
		var a struct {
			DB          int64    `json:"db"`
			Name        string   `json:"name"`
			Source      string   `json:"source"`
			VectorField string   `json:"vector_field"`
			KeyFields   []string `json:"key_fields"`
			Metric      string   `json:"metric"`
			Encoding    string   `json:"encoding"`
			NList       int      `json:"nlist"`
			VectorsFile bool     `json:"vectors_file"`
			Seed        uint64   `json:"seed"`
			Workers     int      `json:"workers"`
		}
		if err := decode("create_index", args, &a); err != nil {
			return nil, err
		}
		o := indexer.Options{
			Name: a.Name, Source: a.Source, VectorField: a.VectorField, KeyFields: a.KeyFields,
			Metric: a.Metric, Encoding: a.Encoding, NList: a.NList, VectorsFile: a.VectorsFile,
			Seed: a.Seed, Workers: a.Workers, Progress: progressOf(t),
		}
		if err := o.Validate(); err != nil {
			return nil, err
		}
		e, err := openDB(ctx, a.DB, true)
		if err != nil {
			return nil, err
		}
		r, err := indexer.Create(ctx, indexer.Env{Warehouse: e.Warehouse, Catalog: e.Catalog}, o)
		if errors.Is(err, storage.ErrNotExist) {
			// A build reads no index files: what is missing is the source.
			return nil, &serving.Error{Status: http.StatusNotFound, Code: serving.CodeNotFound, Message: err.Error(), Err: err}
		}
		if err != nil {
			return nil, err
		}
		return buildSummary(r), nil
	},
	// open_index {db, name, snapshot}: an index handle and what the
	// Python side needs to know of it.
	"open_index": func(ctx context.Context, _ *task, args []byte) (any, error) {
		var a struct {
			DB       int64  `json:"db"`
			Name     string `json:"name"`
			Snapshot int64  `json:"snapshot"`
		}
		if err := decode("open_index", args, &a); err != nil {
			return nil, err
		}
		e, err := openDB(ctx, a.DB, false)
		if err != nil {
			return nil, err
		}
		ix, err := query.Open(ctx, query.Env{Warehouse: e.Warehouse, Catalog: e.Catalog}, a.Name, query.OpenOptions{SnapshotID: a.Snapshot})
		if err != nil {
			return nil, err
		}
		s := ix.Snapshot()
		var stale string
		if st := ix.Stale(); st != nil {
			stale = st.String()
		}
		return map[string]any{
			"ix": newHandle(&index{ix}), "name": ix.Name(), "dim": ix.Dim(), "nlist": ix.NList(),
			"snapshot_id": s.SnapshotID, "key_fields": s.SourceKeyFields, "columns": ix.Columns(),
			"stale": stale, "metric": s.Metric,
		}, nil
	},
	// describe {db, name}: the current snapshot, its metadata location
	// and the source's columns.
	"describe": func(ctx context.Context, _ *task, args []byte) (any, error) {
		var a nameArgs
		if err := decode("describe", args, &a); err != nil {
			return nil, err
		}
		m, loc, e, err := loadMetadata(ctx, a)
		if err != nil {
			return nil, err
		}
		s := m.CurrentSnapshot()
		d := map[string]any{"name": a.Name, "metadata_location": loc, "index_uuid": m.IndexUUID, "snapshot": s}
		if cols, err := query.SourceColumns(ctx, e.Warehouse, s); err == nil {
			d["source_columns"] = cols
		} else {
			d["source_columns_error"] = err.Error()
		}
		return d, nil
	},
	// history {db, name}: every retained snapshot and the current id.
	"history": func(ctx context.Context, _ *task, args []byte) (any, error) {
		var a nameArgs
		if err := decode("history", args, &a); err != nil {
			return nil, err
		}
		m, _, _, err := loadMetadata(ctx, a)
		if err != nil {
			return nil, err
		}
		return map[string]any{"current_snapshot_id": m.CurrentSnapshot().SnapshotID, "snapshots": m.Snapshots, "log": m.SnapshotLog}, nil
	},
	// refresh {db, name, retrain, dry_run}: indexer.Refresh.
	"refresh": func(ctx context.Context, t *task, args []byte) (any, error) {
		var a struct {
			DB      int64  `json:"db"`
			Name    string `json:"name"`
			Retrain bool   `json:"retrain"`
			DryRun  bool   `json:"dry_run"`
		}
		if err := decode("refresh", args, &a); err != nil {
			return nil, err
		}
		e, err := openDB(ctx, a.DB, false)
		if err != nil {
			return nil, err
		}
		r, err := indexer.Refresh(ctx, indexer.Env{Warehouse: e.Warehouse, Catalog: e.Catalog}, a.Name,
			indexer.RefreshOptions{Retrain: a.Retrain, DryRun: a.DryRun, Progress: progressOf(t)})
		if err != nil {
			return nil, err
		}
		out := map[string]any{"action": r.Action, "reason": r.Reason, "added_files": r.AddedFiles,
			"removed_files": r.RemovedFiles, "rewritten_files": r.RewrittenFiles, "added_rows": r.AddedRows}
		if r.Build != nil {
			out["build"] = buildSummary(r.Build)
		}
		return out, nil
	},
	// expire {db, name, retain_last, older_than_seconds, dry_run}:
	// lifecycle.Expire.
	"expire": func(ctx context.Context, _ *task, args []byte) (any, error) {
		var a struct {
			DB         int64   `json:"db"`
			Name       string  `json:"name"`
			RetainLast int     `json:"retain_last"`
			OlderThan  float64 `json:"older_than_seconds"`
			DryRun     bool    `json:"dry_run"`
		}
		if err := decode("expire", args, &a); err != nil {
			return nil, err
		}
		e, err := openDB(ctx, a.DB, false)
		if err != nil {
			return nil, err
		}
		r, err := lifecycle.Expire(ctx, lifecycle.Env{Warehouse: e.Warehouse, Catalog: e.Catalog}, a.Name, lifecycle.ExpireOptions{
			RetainLast: a.RetainLast, OlderThan: time.Duration(a.OlderThan * float64(time.Second)), DryRun: a.DryRun})
		if err != nil {
			return nil, err
		}
		removed := r.Removed
		if removed == nil {
			removed = []int64{}
		}
		return map[string]any{"removed": removed, "metadata_location": r.MetadataLocation}, nil
	},
	// verify {db, name, snapshot, exhaustive}: verify.Run's report.
	"verify": func(ctx context.Context, t *task, args []byte) (any, error) {
		var a struct {
			DB         int64  `json:"db"`
			Name       string `json:"name"`
			Snapshot   int64  `json:"snapshot"`
			Exhaustive bool   `json:"exhaustive"`
		}
		if err := decode("verify", args, &a); err != nil {
			return nil, err
		}
		e, err := openDB(ctx, a.DB, false)
		if err != nil {
			return nil, err
		}
		o := verify.Options{SnapshotID: a.Snapshot, Exhaustive: a.Exhaustive}
		if t != nil {
			o.Progress = func(check string) { t.Start(check, 0) }
		}
		return verify.Run(ctx, verify.Env{Warehouse: e.Warehouse, Catalog: e.Catalog}, a.Name, o)
	},
	// gc {db, dry_run, grace_seconds}: lifecycle.GC's report.
	"gc": func(ctx context.Context, _ *task, args []byte) (any, error) {
		var a struct {
			DB    int64    `json:"db"`
			Dry   bool     `json:"dry_run"`
			Grace *float64 `json:"grace_seconds"`
		}
		if err := decode("gc", args, &a); err != nil {
			return nil, err
		}
		e, err := openDB(ctx, a.DB, false)
		if err != nil {
			return nil, err
		}
		o := lifecycle.GCOptions{DryRun: a.Dry}
		if a.Grace != nil {
			o.Grace, o.GraceSet = time.Duration(*a.Grace*float64(time.Second)), true
		}
		return lifecycle.GC(ctx, lifecycle.Env{Warehouse: e.Warehouse, Catalog: e.Catalog}, o)
	},
	// drop {db, name, purge}: lifecycle.Drop.
	"drop": func(ctx context.Context, _ *task, args []byte) (any, error) {
		var a struct {
			DB    int64  `json:"db"`
			Name  string `json:"name"`
			Purge bool   `json:"purge"`
		}
		if err := decode("drop", args, &a); err != nil {
			return nil, err
		}
		e, err := openDB(ctx, a.DB, false)
		if err != nil {
			return nil, err
		}
		return lifecycle.Drop(ctx, lifecycle.Env{Warehouse: e.Warehouse, Catalog: e.Catalog}, a.Name, a.Purge)
	},
}

// envPrefixes are the prefixes of the variables that configure
// warehouses, catalogs and sources: ParqDB's own (PARQDB_WAREHOUSE,
// PARQDB_CATALOG, PARQDB_ICEBERG_…), the AWS SDK's and PostgreSQL's.
var envPrefixes = []string{"PARQDB_", "AWS_", "PG"}

// syncEnviron makes the variables of envPrefixes what env says: set to
// its values, and unset when env lacks them.
func syncEnviron(env map[string]string) {
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if _, keep := env[k]; !keep && hasEnvPrefix(k) {
			os.Unsetenv(k)
		}
	}
	for k, v := range env {
		if hasEnvPrefix(k) {
			os.Setenv(k, v)
		}
	}
}

func hasEnvPrefix(k string) bool {
	for _, p := range envPrefixes {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// loadMetadata loads the current metadata of index a.Name.
func loadMetadata(ctx context.Context, a nameArgs) (*metadata.Metadata, string, *catalog.Env, error) {
	e, err := openDB(ctx, a.DB, false)
	if err != nil {
		return nil, "", nil, err
	}
	m, ent, err := catalog.LoadMetadata(ctx, e.Catalog, e.Warehouse, a.Name)
	if err != nil {
		return nil, "", nil, err
	}
	if m.CurrentSnapshot() == nil {
		return nil, "", nil, errors.New("index has no current snapshot")
	}
	return m, ent.MetadataLocation, e, nil
}

// buildSummary is the JSON of a committed build.
func buildSummary(r *indexer.Result) map[string]any {
	stages := map[string]float64{}
	for _, s := range r.Stages {
		stages[s.Stage] = s.Duration.Seconds()
	}
	warnings := r.Warnings
	if warnings == nil {
		warnings = []string{}
	}
	return map[string]any{
		"name": r.Name, "rows": r.Rows, "dim": r.Dim, "nlist": r.NList, "roots": r.Roots,
		"encoding": r.Encoding, "reused_centroids": r.ReusedCentroids, "sample_rows": r.SampleRows,
		"stage_seconds": stages, "bytes_written": r.BytesWritten, "files": r.Files,
		"metadata_location": r.MetadataLocation, "warnings": warnings,
	}
}
