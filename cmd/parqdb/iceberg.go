//go:build !noiceberg

package main

// The CLI links the Apache Iceberg source provider (iceberg:// sources,
// docs/iceberg.md) unless built with -tags noiceberg, which leaves out
// iceberg-go and what it links (docs/benchmarks.md, "Binary size").
import _ "github.com/parqdb/parqdb/iceberg"
