// Package iceberg links the Apache Iceberg source provider
// (docs/iceberg.md) into a program: import it for its side effect,
//
//	import _ "github.com/parqdb/parqdb/iceberg"
//
// and query.Open, verify and the index builds open indexes whose source is
// an iceberg://catalog/namespace/table reference. A program that does not
// import it reads only Parquet sources and does not link iceberg-go and
// what it needs (Arrow compute, Substrait, gRPC, SQL dialects): opening an
// Iceberg-sourced index there fails with an error that names this
// package. The parqdb CLI imports it unless built with -tags noiceberg.
package iceberg

import _ "github.com/parqdb/parqdb/internal/icesource" // registers the provider
