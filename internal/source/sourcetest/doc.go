// Package sourcetest writes small Parquet source tables for tests of
// ParqDB packages: any top-level fields (Table), the common vector shapes
// that real writers produce (VectorNode), and a one-call WriteVectors for
// the usual "id long, embedding list<float>, payload" source.
//
// It is test support: it favours clarity over speed and builds rows in
// memory.
package sourcetest
