//go:build duckdb

package sqlengine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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

// createViews creates one view per index over its bound source, named
// like the index (SHOW TABLES and information_schema list them;
// DESCRIBE words gives the source's columns), and, without external
// access, allows exactly the sources' files and dirs to be read. A source
// on S3 gets no view (the engine has no S3 client of its own; DuckDB's
// httpfs is not linked). Indexes created later get a view when the
// engine is next opened.
func (e *Engine) createViews(ctx context.Context, dirs []string) error {
	names, err := e.pool.Catalog().List(ctx)
	if err != nil {
		return fmt.Errorf("list indexes: %w", err)
	}
	var files, views []string
	for _, name := range names {
		ent, err := e.pool.Catalog().Load(ctx, name)
		if err != nil {
			continue // dropped meanwhile
		}
		loc := ent.Source.Properties["location"]
		var scan string
		switch {
		case loc == "" || strings.Contains(loc, "://"):
			continue
		case strings.HasSuffix(loc, "/"):
			dirs = append(dirs, loc)
			scan = quoteString(loc + "**/*.parquet")
		default:
			files = append(files, loc)
			scan = quoteString(loc)
		}
		views = append(views, fmt.Sprintf("CREATE OR REPLACE VIEW %s AS SELECT * FROM read_parquet(%s)", quoteIdent(name), scan))
	}
	for _, v := range views {
		// A source that no longer reads leaves its index without a view;
		// ivf_search reports the problem when the index is searched.
		_, _ = e.reg.ExecContext(ctx, v)
	}
	if !e.opts.ExternalAccess {
		for setting, list := range map[string][]string{"allowed_directories": dirs, "allowed_paths": files} {
			if len(list) == 0 {
				continue
			}
			quoted := make([]string, len(list))
			for i, p := range list {
				quoted[i] = quoteString(p)
			}
			if _, err := e.reg.ExecContext(ctx, fmt.Sprintf("SET %s = [%s]", setting, strings.Join(quoted, ", "))); err != nil {
				return fmt.Errorf("%s: %w", setting, err)
			}
		}
		if _, err := e.reg.ExecContext(ctx, "SET enable_external_access = false"); err != nil {
			return err
		}
	}
	return nil
}
