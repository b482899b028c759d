// Package knnjoin is the batch k-nearest-neighbour join: for every row of
// a query table (a Parquet file or folder, local or S3, or an Iceberg
// table, opened as index create opens a source), its k nearest rows in an
// index, written as a Parquet folder with one row per (query, rank).
//
// A join runs in three steps, which Join chains in one process and which
// a sharded join runs as separate tasks:
//
//	MakePlan  checks the options, lists the query table's files, splits them
//	          into shards (buildplan.Assign) and writes the plan under the
//	          output's work prefix (DEST/_parqdb_join/plan.json)
//	RunShard  reads shard i's query rows, searches them in batches with
//	          query.Index.SearchBatch (list-major, every core) and writes its
//	          part files and its shard manifest under the work prefix
//	Commit    checks that every shard has finished, publishes the parts as
//	          DEST/part-SSSSSS-NNNNN.parquet, writes DEST/_SUCCESS last and
//	          removes the work prefix
//
// Nothing is visible in DEST (outside the '_'-prefixed work prefix, which
// Parquet folder readers skip and DEST/*.parquet does not match) before
// Commit, and DEST/_SUCCESS marks a complete
// output: a cancelled or failed shard deletes its parts, a killed one
// leaves only work-prefix files that the rerun or the commit removes. The
// output's shape and the protocol are specified in docs/join.md.
package knnjoin
