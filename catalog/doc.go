// Package catalog maps index names to their current metadata file and
// source-table binding, and moves that pointer by compare-and-swap
// (index-metadata-spec "Overview").
//
// Three implementations pass one conformance suite (catalogtest): SQLite and
// PostgreSQL share one SQL code path (NewSQL, OpenSQLite, OpenPostgres), and
// the warehouse catalog (NewWarehouse) keeps numbered pointer objects in the
// warehouse itself for users without a database. Open picks one from a
// --catalog specification.
//
// Every writer follows one protocol (commit.go): write the new metadata file
// under a name never used before (WriteMetadata), then move the catalog
// pointer from the location it was built on to the new one (Commit). A lost
// race is ErrConflict; Update re-reads, rebuilds and retries. A crash between
// the two steps leaves the catalog on the old, valid file and an orphan file
// that garbage collection may delete. The design is documented in
// docs/catalog.md.
package catalog
