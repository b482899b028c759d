package icesource

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	_ "github.com/apache/iceberg-go/catalog/rest" // registers the "rest" catalog type
	_ "github.com/apache/iceberg-go/catalog/sql"  // registers the "sql" catalog type
	"github.com/apache/iceberg-go/config"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx" for SQL catalogs on PostgreSQL
	"gopkg.in/yaml.v3"
	_ "modernc.org/sqlite" // database/sql driver "sqlite" for SQL catalogs on SQLite

	"github.com/parqdb/parqdb/internal/icesource/icehome"
)

// iceberg-go's config package has read no file (package icehome): put
// GOICEBERG_HOME back for the lazy read below and for child processes.
func init() { icehome.Restore() }

// fileConfig reads .iceberg-go.yaml ($GOICEBERG_HOME, else the home
// folder) once, when the first catalog is looked up by name, and makes it
// iceberg-go's configuration (config.EnvConfig: the fallbacks of
// catalog.Load and the scan's max-workers), as iceberg-go would have at
// start-up. A missing file is an empty configuration; one that does not
// parse is an error naming it.
var fileConfig = sync.OnceValues(func() (config.Config, error) {
	path := ""
	if dir := icehome.Dir(); dir != "" {
		path = filepath.Join(dir, ".iceberg-go.yaml")
	}
	cfg := config.Config{DefaultCatalog: "default", MaxWorkers: config.EnvConfig.MaxWorkers}
	data, err := config.LoadConfigFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return cfg, fmt.Errorf("%w: %v", ErrCatalog, err)
	}
	if len(data) == 0 {
		return cfg, nil
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		name := path
		if name == "" {
			name = "~/.iceberg-go.yaml"
		}
		return cfg, fmt.Errorf("%w: %s: %v", ErrCatalog, name, err)
	}
	if cfg.DefaultCatalog == "" {
		cfg.DefaultCatalog = "default"
	}
	if cfg.MaxWorkers <= 0 {
		cfg.MaxWorkers = config.EnvConfig.MaxWorkers
	}
	config.EnvConfig = cfg
	return cfg, nil
})

// EnvPrefix starts every environment variable that configures a catalog:
// PARQDB_ICEBERG_<NAME>_<SETTING>, where NAME is the catalog name in
// upper case with '-' as '_'.
const EnvPrefix = "PARQDB_ICEBERG_"

// envName returns the environment variable of a catalog setting.
func envName(catalogName, setting string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(catalogName, "-", "_")) + "_" + setting
}

// CatalogProps returns the iceberg-go catalog properties of catalog name,
// from the environment first and then from the catalog's entry in
// .iceberg-go.yaml (iceberg-go's own configuration file, found in
// $GOICEBERG_HOME or the home folder, read at the first call and not
// before):
//
//	PARQDB_ICEBERG_<NAME>_URI        catalog URI: sqlite:PATH or a *.db path (SQL catalog on SQLite),
//	                                 postgres://… (SQL catalog on PostgreSQL; the password
//	                                 from PGPASSWORD), http(s)://… (REST catalog)
//	PARQDB_ICEBERG_<NAME>_TYPE       sql or rest (default: from the URI)
//	PARQDB_ICEBERG_<NAME>_WAREHOUSE  the catalog's warehouse location
//	PARQDB_ICEBERG_<NAME>_PROPERTIES extra iceberg-go properties, "k=v,k=v" (e.g. s3.endpoint)
//	PARQDB_ICEBERG_<NAME>_CREDENTIAL REST client credential (environment only)
//	PARQDB_ICEBERG_<NAME>_TOKEN      REST bearer token (environment only)
//
// A catalog configured in neither place fails with ErrCatalog naming the
// variable to set. Credentials are read from the environment only (the
// yaml file's credential is ignored) and never leave this process: the
// source-table properties name the catalog, not its URI.
func CatalogProps(name string) (iceberg.Properties, error) {
	fc, err := fileConfig()
	if err != nil {
		return nil, err
	}
	conf := fc.Catalogs[name]
	get := func(setting, fallback string) string {
		if v, ok := os.LookupEnv(envName(name, setting)); ok {
			return v
		}
		return fallback
	}
	uri := get("URI", conf.URI)
	if uri == "" {
		return nil, fmt.Errorf("%w %q is not configured: set %s (sqlite:PATH, postgres://… or https://…) or add it to .iceberg-go.yaml",
			ErrCatalog, name, envName(name, "URI"))
	}
	p := iceberg.Properties{
		"uri":        uri,
		"warehouse":  get("WAREHOUSE", conf.Warehouse),
		"credential": os.Getenv(envName(name, "CREDENTIAL")),
	}
	if tok := os.Getenv(envName(name, "TOKEN")); tok != "" {
		p["token"] = tok
	}
	typ := strings.ToLower(get("TYPE", conf.CatalogType))
	lower := strings.ToLower(uri)
	switch {
	case typ == "rest" || typ == "" && (strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://")):
		p["type"] = "rest"
	case typ == "sql" || typ == "":
		p["type"] = "sql"
		// ParqDB only reads a catalog: it never creates its tables.
		p["init_catalog_tables"] = "false"
		switch {
		case strings.HasPrefix(lower, "postgres://") || strings.HasPrefix(lower, "postgresql://"):
			p["sql.driver"], p["sql.dialect"] = "pgx", "postgres"
		case strings.HasPrefix(lower, "sqlite:") || strings.HasSuffix(lower, ".db") || strings.HasSuffix(lower, ".sqlite"):
			path := strings.TrimPrefix(strings.TrimPrefix(uri, "sqlite://"), "sqlite:")
			// The SQLite driver would create a missing file: a typo must
			// not become a new, empty catalog.
			if _, err := os.Stat(strings.SplitN(path, "?", 2)[0]); err != nil {
				return nil, fmt.Errorf("%w %q: catalog database %s: %v", ErrCatalog, name, path, err)
			}
			p["uri"] = path
			p["sql.driver"], p["sql.dialect"] = "sqlite", "sqlite"
		default:
			if conf.SQLDriver == "" || conf.SQLDialect == "" {
				return nil, fmt.Errorf("%w %q: cannot tell the SQL catalog's database from URI %s: use sqlite:PATH or postgres://…",
					ErrCatalog, name, envName(name, "URI"))
			}
			p["sql.driver"], p["sql.dialect"] = conf.SQLDriver, conf.SQLDialect
		}
	default:
		return nil, fmt.Errorf("%w %q: type %q is not supported (use sql or rest in %s)", ErrCatalog, name, typ, envName(name, "TYPE"))
	}
	if extra := get("PROPERTIES", ""); extra != "" {
		for _, kv := range strings.Split(extra, ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || strings.TrimSpace(k) == "" {
				return nil, fmt.Errorf("%w %q: %s: %q is not k=v", ErrCatalog, name, envName(name, "PROPERTIES"), kv)
			}
			p[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return p, nil
}

// LoadCatalog opens catalog name as CatalogProps configures it. The caller
// closes it when it implements io.Closer (SQL catalogs do).
func LoadCatalog(ctx context.Context, name string) (catalog.Catalog, error) {
	p, err := CatalogProps(name)
	if err != nil {
		return nil, err
	}
	c, err := catalog.Load(ctx, name, p)
	if err != nil {
		return nil, fmt.Errorf("%w %q: open %s catalog: %v", ErrCatalog, name, p["type"], err)
	}
	return c, nil
}
