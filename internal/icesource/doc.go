// Package icesource resolves an Apache Iceberg table, named
// iceberg://<catalog>/<namespace…>/<table>, to the Parquet data files of
// one of its snapshots, so that ParqDB's own Parquet reader
// (internal/source) indexes and queries it like a folder of Parquet files.
//
// Catalogs (SQL on SQLite or PostgreSQL, REST) are loaded through
// github.com/apache/iceberg-go from the environment (see CatalogProps) and
// the user's .iceberg-go.yaml; nothing secret is ever returned in the
// source-table properties (see Properties). Snapshots whose scan carries
// delete files (position deletes, equality deletes, deletion vectors) are
// refused with ErrUnsupported: their live rows are not the rows of their
// data files. The rulings are in docs/iceberg.md.
package icesource
