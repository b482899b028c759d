package icesource

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCatalogProps: the environment configures a catalog by name; the
// database and catalog type follow from the URI; secrets come only from
// the environment; bad settings name the variable.
func TestCatalogProps(t *testing.T) {
	db := filepath.Join(t.TempDir(), "cat.db")
	if err := os.WriteFile(db, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		env  map[string]string
		want map[string]string
		err  string
	}{
		{"sqlite", map[string]string{"URI": "sqlite:" + db},
			map[string]string{"type": "sql", "sql.driver": "sqlite", "sql.dialect": "sqlite", "uri": db, "init_catalog_tables": "false"}, ""},
		{"postgres", map[string]string{"URI": "postgres://ice@db:5432/lake", "WAREHOUSE": "s3://b/wh"},
			map[string]string{"type": "sql", "sql.driver": "pgx", "sql.dialect": "postgres", "warehouse": "s3://b/wh"}, ""},
		{"rest", map[string]string{"URI": "https://cat.example/api", "TOKEN": "t0k", "PROPERTIES": "s3.endpoint=http://x, rest.signing-region=eu"},
			map[string]string{"type": "rest", "token": "t0k", "s3.endpoint": "http://x", "rest.signing-region": "eu"}, ""},
		{"missing", nil, nil, "PARQDB_ICEBERG_T_URI"},
		{"bad type", map[string]string{"URI": "https://x", "TYPE": "glue"}, nil, "PARQDB_ICEBERG_T_TYPE"},
		{"bad properties", map[string]string{"URI": "https://x", "PROPERTIES": "novalue"}, nil, "PARQDB_ICEBERG_T_PROPERTIES"},
		{"unknown database", map[string]string{"URI": "mysql://x"}, nil, "sqlite:PATH or postgres://"},
		{"missing sqlite file", map[string]string{"URI": "sqlite:" + db + ".typo"}, nil, db + ".typo"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, s := range []string{"URI", "TYPE", "WAREHOUSE", "PROPERTIES", "CREDENTIAL", "TOKEN"} {
				t.Setenv("PARQDB_ICEBERG_T_"+s, "")
				os.Unsetenv("PARQDB_ICEBERG_T_" + s)
			}
			for k, v := range c.env {
				t.Setenv("PARQDB_ICEBERG_T_"+k, v)
			}
			p, err := CatalogProps("t")
			if c.err != "" {
				if !errors.Is(err, ErrCatalog) || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want ErrCatalog naming %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range c.want {
				if p[k] != v {
					t.Errorf("%s = %q, want %q (all: %v)", k, p[k], v, p)
				}
			}
		})
	}
}
