package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// SQL is a catalog in one table of a SQL database, SQLite or PostgreSQL,
// through database/sql. Both dialects share every statement; a commit is
//
//	UPDATE parqdb_indexes SET ... WHERE name = ? AND metadata_location = ?
//
// and zero rows affected is ErrConflict (or ErrNotFound when the name has
// no row). SQL is safe for concurrent use; the database makes it safe
// across processes and hosts.
type SQL struct {
	db       *sql.DB
	postgres bool     // placeholders $n instead of ?
	desc     string   // String(), never with a password
	secrets  []string // removed from every error message
}

// Table is the name of the catalog table in SQLite and PostgreSQL.
const Table = "parqdb_indexes"

const schema = `CREATE TABLE IF NOT EXISTS ` + Table + ` (
	name              TEXT   NOT NULL PRIMARY KEY,
	metadata_location TEXT   NOT NULL,
	source_table      TEXT   NOT NULL,
	updated_at_ms     BIGINT NOT NULL
)`

// SQLiteBusyTimeout is how long a SQLite catalog waits for another
// connection or process to release the database lock.
const SQLiteBusyTimeout = 10 * time.Second

// OpenSQLite opens (creating if needed) a SQLite catalog in the file at
// path. Every connection runs with journal_mode=WAL, synchronous=FULL (a
// commit that returned is on disk, even after power loss) and a busy
// timeout of SQLiteBusyTimeout, so that many processes may share the file
// on one host. The folder must exist. SQLite over a network file system is
// not supported (WAL needs shared memory).
func OpenSQLite(ctx context.Context, path string) (*SQL, error) {
	if path == "" {
		return nil, errors.New("empty SQLite catalog path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("catalog sqlite:%s: %w", path, err)
	}
	if strings.ContainsAny(abs, "?#") {
		// The driver takes everything after '?' as parameters.
		return nil, fmt.Errorf("catalog sqlite:%s: path contains '?' or '#'", abs)
	}
	dsn := abs + "?_pragma=busy_timeout(" + strconv.FormatInt(SQLiteBusyTimeout.Milliseconds(), 10) + ")" +
		"&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("catalog sqlite:%s: %w", abs, err)
	}
	c := &SQL{db: db, desc: "sqlite:" + abs}
	if err := c.init(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return c, nil
}

// OpenPostgres opens a PostgreSQL catalog (pgx through database/sql) and
// creates its table if needed. dsn is a postgres:// or postgresql:// URL or
// a keyword/value string. The password never appears in errors or String.
func OpenPostgres(ctx context.Context, dsn string) (*SQL, error) {
	secrets := dsnSecrets(dsn)
	desc := describePostgres(dsn)
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		inner := errors.Unwrap(err)
		if inner == nil {
			inner = err
		}
		return nil, fmt.Errorf("invalid PostgreSQL DSN %s: %v", desc, scrub(inner, secrets))
	}
	if cfg.Password != "" {
		secrets = append(secrets, cfg.Password)
	}
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(16)
	db.SetMaxIdleConns(16)
	c := &SQL{db: db, postgres: true, desc: desc, secrets: secrets}
	if err := c.init(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return c, nil
}

// init creates the table. PostgreSQL's CREATE TABLE IF NOT EXISTS can fail
// when two sessions run it at once, so it runs under an advisory lock there.
func (c *SQL) init(ctx context.Context) error {
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return c.fail("create table", err)
	}
	defer tx.Rollback()
	if c.postgres {
		// 0x70617271 is "parq": any constant shared by all ParqDB processes.
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(1885434481)"); err != nil {
			return c.fail("create table", err)
		}
	}
	if _, err := tx.ExecContext(ctx, schema); err != nil {
		return c.fail("create table", err)
	}
	if err := tx.Commit(); err != nil {
		return c.fail("create table", err)
	}
	return nil
}

// q rewrites ? placeholders as $1, $2, … for PostgreSQL. No statement here
// has a '?' inside a literal.
func (c *SQL) q(s string) string {
	if !c.postgres {
		return s
	}
	var b strings.Builder
	n := 0
	for _, r := range s {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// fail wraps a database error with the catalog and operation, without secrets.
func (c *SQL) fail(op string, err error) error {
	return fmt.Errorf("catalog %s: %s: %w", c.desc, op, scrub(err, c.secrets))
}

// String describes the catalog: "sqlite:/abs/path" or a postgres:// URL
// without password.
func (c *SQL) String() string { return c.desc }

// Close closes the database handle.
func (c *SQL) Close() error { return scrub(c.db.Close(), c.secrets) }

// Create implements Catalog.
func (c *SQL) Create(ctx context.Context, e Entry) error {
	if err := checkEntry(e); err != nil {
		return err
	}
	src, err := encodeSource(e.Source)
	if err != nil {
		return err
	}
	res, err := c.db.ExecContext(ctx, c.q(`INSERT INTO `+Table+
		` (name, metadata_location, source_table, updated_at_ms) VALUES (?, ?, ?, ?) ON CONFLICT (name) DO NOTHING`),
		e.Name, e.MetadataLocation, src, time.Now().UnixMilli())
	if err != nil {
		return c.fail("create "+e.Name, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return c.fail("create "+e.Name, err)
	}
	if n == 0 {
		return fmt.Errorf("catalog %s: create %s: %w", c.desc, e.Name, ErrExists)
	}
	return nil
}

// Load implements Catalog.
func (c *SQL) Load(ctx context.Context, name string) (Entry, error) {
	if err := CheckName(name); err != nil {
		return Entry{}, err
	}
	var loc, src string
	err := c.db.QueryRowContext(ctx, c.q(`SELECT metadata_location, source_table FROM `+Table+` WHERE name = ?`), name).
		Scan(&loc, &src)
	if errors.Is(err, sql.ErrNoRows) {
		return Entry{}, &NotFoundError{Catalog: "catalog " + c.desc, Name: name}
	}
	if err != nil {
		return Entry{}, c.fail("load "+name, err)
	}
	t, err := decodeSource(name, src)
	if err != nil {
		return Entry{}, fmt.Errorf("catalog %s: %w", c.desc, err)
	}
	return Entry{Name: name, MetadataLocation: loc, Source: t}, nil
}

// Commit implements Catalog with one conditional UPDATE.
func (c *SQL) Commit(ctx context.Context, expected string, next Entry) error {
	if err := checkEntry(next); err != nil {
		return err
	}
	src, err := encodeSource(next.Source)
	if err != nil {
		return err
	}
	op := "commit " + next.Name
	res, err := c.db.ExecContext(ctx, c.q(`UPDATE `+Table+
		` SET metadata_location = ?, source_table = ?, updated_at_ms = ? WHERE name = ? AND metadata_location = ?`),
		next.MetadataLocation, src, time.Now().UnixMilli(), next.Name, expected)
	if err != nil {
		return c.fail(op, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return c.fail(op, err)
	}
	if n == 1 {
		return nil
	}
	// Nothing changed; tell a lost race from a missing index.
	var one int
	err = c.db.QueryRowContext(ctx, c.q(`SELECT 1 FROM `+Table+` WHERE name = ?`), next.Name).Scan(&one)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("catalog %s: %s: %w", c.desc, op, ErrNotFound)
	case err != nil:
		return c.fail(op, err)
	}
	return fmt.Errorf("catalog %s: %s: expected metadata location %s is not current: %w", c.desc, op, expected, ErrConflict)
}

// List implements Catalog.
func (c *SQL) List(ctx context.Context) ([]string, error) {
	rows, err := c.db.QueryContext(ctx, `SELECT name FROM `+Table)
	if err != nil {
		return nil, c.fail("list", err)
	}
	defer rows.Close()
	names := []string{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, c.fail("list", err)
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		return nil, c.fail("list", err)
	}
	// Sorted here: PostgreSQL's ORDER BY follows the database collation.
	slices.Sort(names)
	return names, nil
}

// Drop implements Catalog.
func (c *SQL) Drop(ctx context.Context, name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	res, err := c.db.ExecContext(ctx, c.q(`DELETE FROM `+Table+` WHERE name = ?`), name)
	if err != nil {
		return c.fail("drop "+name, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return c.fail("drop "+name, err)
	}
	if n == 0 {
		return &NotFoundError{Catalog: "catalog " + c.desc, Name: name}
	}
	return nil
}
