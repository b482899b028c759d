package main

// The library links the Apache Iceberg source provider, as the CLI does,
// so that Iceberg sources work from Python as they do from the shell.
import _ "github.com/parqdb/parqdb/iceberg"
