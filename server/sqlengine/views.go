//go:build duckdb

package sqlengine

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// checkDirs returns dirs as absolute, cleaned paths, each an existing
// directory.
func checkDirs(dirs []string) ([]string, error) {
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, fmt.Errorf("allowed directory %q: %w", d, err)
		}
		fi, err := os.Stat(abs)
		if err != nil {
			return nil, fmt.Errorf("allowed directory %q: %w", d, err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("allowed directory %q is not a directory", d)
		}
		out = append(out, abs+string(filepath.Separator))
	}
	return out, nil
}

// quoteString quotes s as a SQL string literal.
func quoteString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// quoteIdent quotes s as a SQL identifier.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// sourceFiles returns the Parquet files of a local source: the file
// itself, or a folder's *.parquet files at any depth, skipping paths with
// a segment that starts with '_' or '.', as the indexer reads the folder
// (internal/source). Sorted.
func sourceFiles(loc string) ([]string, error) {
	if !strings.HasSuffix(loc, "/") {
		return []string{loc}, nil
	}
	var files []string
	err := filepath.WalkDir(loc, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != filepath.Clean(loc) && (strings.HasPrefix(d.Name(), "_") || strings.HasPrefix(d.Name(), ".")) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && strings.HasSuffix(d.Name(), ".parquet") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no *.parquet files", loc)
	}
	slices.Sort(files)
	return files, nil
}

// foldCase is DuckDB's identifier comparison: case-insensitive in ASCII.
func foldCase(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// caseSchema holds the source views of indexes whose names differ only in
// case from another's: DuckDB's identifiers are case-insensitive, so
// those cannot have a view under their name.
const caseSchema = "parqdb_case"

// createViews creates one view per index over its bound source's Parquet
// files, named like the index (SHOW TABLES and information_schema list
// them; DESCRIBE words gives the source's columns), and the source(name)
// macro that resolves the exact name; without external access it allows
// exactly those files to be read, and spills nothing (no temporary
// directory: DuckDB would allow reading it).
//
// A folder source's files are listed now: files added later are not in
// the view (nor readable) until the engine is next opened, as indexes
// created later get their view then. A source on S3 gets no view (the
// engine has no S3 client of its own; DuckDB's httpfs is not linked).
// Indexes whose names are equal but for case (f and F) share one
// identifier: the view under it fails, naming them and source('…'), and
// source resolves each exact name.
func (e *Engine) createViews(ctx context.Context, dirs []string, memory int64) error {
	names, err := e.pool.Catalog().List(ctx)
	if err != nil {
		return fmt.Errorf("list indexes: %w", err)
	}
	type view struct {
		name  string
		files []string
	}
	var views []view
	byFold := map[string][]string{}
	for _, name := range names {
		byFold[foldCase(name)] = append(byFold[foldCase(name)], name)
		ent, err := e.pool.Catalog().Load(ctx, name)
		if err != nil {
			continue // dropped meanwhile
		}
		loc := ent.Source.Properties["location"]
		if loc == "" || strings.Contains(loc, "://") {
			continue
		}
		files, err := sourceFiles(loc)
		if err != nil {
			// A source that no longer reads leaves its index without a
			// view; ivf_search reports the problem when it is searched.
			continue
		}
		views = append(views, view{name, files})
	}
	var stmts, cases, allowed []string
	caseViews := 0
	for _, v := range views {
		quoted := make([]string, len(v.files))
		for i, f := range v.files {
			quoted[i] = quoteString(f)
		}
		allowed = append(allowed, quoted...)
		target := quoteIdent(v.name)
		if len(byFold[foldCase(v.name)]) > 1 {
			if caseViews == 0 {
				stmts = append(stmts, "CREATE SCHEMA IF NOT EXISTS "+caseSchema)
			}
			target = caseSchema + "." + quoteIdent(strconv.Itoa(caseViews))
			caseViews++
		}
		stmts = append(stmts, fmt.Sprintf("CREATE OR REPLACE VIEW %s AS SELECT * FROM read_parquet([%s])", target, strings.Join(quoted, ", ")))
		cases = append(cases, fmt.Sprintf("WHEN %s THEN %s", quoteString(v.name), quoteString(target)))
	}
	for _, group := range byFold {
		if len(group) < 2 {
			continue
		}
		slices.Sort(group)
		srcs := make([]string, len(group))
		for i, n := range group {
			srcs[i] = "source(" + quoteString(n) + ")"
		}
		msg := fmt.Sprintf("indexes %s differ only in case, and SQL names are case-insensitive: read their sources with %s",
			strings.Join(group, ", "), strings.Join(srcs, ", "))
		stmts = append(stmts, fmt.Sprintf("CREATE OR REPLACE VIEW %s AS SELECT NULL AS ambiguous FROM range(1) WHERE error(%s) IS NULL",
			quoteIdent(group[0]), quoteString(msg)))
	}
	for _, st := range stmts {
		if _, err := e.reg.ExecContext(ctx, st); err != nil {
			return fmt.Errorf("source view: %w", err)
		}
	}
	// source('words') is the source view of index words, by exact name.
	noView := "error('index ' || index_name || ' has no source view (no such index, or its source is not a local Parquet file or folder that reads)')"
	target := noView
	if len(cases) > 0 {
		target = "CASE index_name " + strings.Join(cases, " ") + " ELSE " + noView + " END"
	}
	src := "CREATE OR REPLACE TEMP MACRO source(index_name) AS TABLE (SELECT * FROM query_table(" + target + "));\n"
	e.sourceMacro.Store(&src)

	settings := []string{fmt.Sprintf("SET memory_limit = '%dB'", memory), "SET temp_directory = ''"}
	if !e.opts.ExternalAccess {
		for setting, list := range map[string][]string{"allowed_directories": quoteAll(dirs), "allowed_paths": allowed} {
			if len(list) > 0 {
				settings = append(settings, fmt.Sprintf("SET %s = [%s]", setting, strings.Join(list, ", ")))
			}
		}
		settings = append(settings, "SET enable_external_access = false")
	}
	for _, st := range settings {
		if _, err := e.reg.ExecContext(ctx, st); err != nil {
			return fmt.Errorf("%s: %w", st, err)
		}
	}
	return nil
}

func quoteAll(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = quoteString(s)
	}
	return out
}
