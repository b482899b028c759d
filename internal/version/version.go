// Package version says which parqdb build is running: the CLI prints it
// (parqdb --version, parqdb version) and every Parquet file parqdb writes
// records it in its footer's created_by.
package version

import (
	"runtime/debug"
	"strings"
)

// Version, when set at link time, is the version of this build:
//
//	go build -ldflags "-X github.com/parqdb/parqdb/internal/version.Version=v0.4.0" ./cmd/parqdb
//
// `make build` sets it from `git describe`. Empty means "take it from the
// module build information".
var Version = ""

// String returns the version of this build: Version when set at link
// time; else the main module's version from the build information (a
// tagged release or pseudo-version, for `go install …@version`); else
// "devel", followed by "+<revision>" (12 hex digits) and "-dirty" when Go
// recorded the commit and uncommitted changes. It never returns an empty
// string or one with a space, so it fits Parquet's created_by field.
func String() string {
	if v := strings.TrimSpace(Version); v != "" {
		return strings.ReplaceAll(v, " ", "-")
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	return fromBuildInfo(bi)
}

// fromBuildInfo derives the version from build information.
func fromBuildInfo(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev string
	var dirty bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	v := "devel"
	if rev != "" {
		v += "+" + rev[:min(12, len(rev))]
		if dirty {
			v += "-dirty"
		}
	}
	return v
}

// CreatedBy is the created_by text of the Parquet files parqdb writes,
// "parqdb version <String()> (build <build>)"; build names the file
// profile (for index tables "profile-1").
func CreatedBy(build string) string {
	return "parqdb version " + String() + " (build " + build + ")"
}
