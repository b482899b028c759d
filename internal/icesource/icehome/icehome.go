// Package icehome keeps iceberg-go from reading the user's
// .iceberg-go.yaml when the process starts.
//
// iceberg-go's config package reads $GOICEBERG_HOME/.iceberg-go.yaml (else
// $HOME/.iceberg-go.yaml) in a package variable's initializer, so every
// program that links it opens the file at start-up, whatever it does.
// This package's init points GOICEBERG_HOME at /dev/null, where the file
// cannot exist (the open fails with ENOTDIR and reads nothing), before
// that initializer runs; package icesource's init puts the variable back
// (Restore) and reads the file itself when a catalog is first looked up
// by name (icesource.CatalogProps).
//
// The order is Go's package initialization order (the language
// specification, "Package initialization"): packages are initialized in
// the order of their import paths, each once everything it imports is.
// This package imports only os, so it is ready before gopkg.in/yaml.v3,
// which iceberg-go's config imports and whose path sorts after
// github.com/parqdb/…: it is initialized first. TestIcebergConfigRead in
// package reliability traces the built binary's opens and fails if that
// ever changes.
package icehome

import "os"

// Var is the environment variable iceberg-go's config package reads.
const Var = "GOICEBERG_HOME"

// origDir and origSet are GOICEBERG_HOME as the process started.
var origDir, origSet = os.LookupEnv(Var)

func init() {
	_ = os.Setenv(Var, os.DevNull)
}

// Dir returns GOICEBERG_HOME as the process started with it ("" if unset).
func Dir() string { return origDir }

// Restore sets GOICEBERG_HOME back to its value at start (or unsets it).
// Package icesource calls it from its init, which runs after iceberg-go's
// config package has read its (empty) configuration.
func Restore() {
	if origSet {
		_ = os.Setenv(Var, origDir)
	} else {
		_ = os.Unsetenv(Var)
	}
}
