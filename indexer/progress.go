package indexer

import (
	"strings"
	"time"
)

// Stage names, in pipeline order.
const (
	StageScan   = "scan"   // read and validate the source, take the sample
	StageTrain  = "train"  // hierarchical k-means on the sample
	StageAssign = "assign" // assign + encode every row, spill by root bucket
	StageWrite  = "write"  // write centroid, root and postings tables
	// StageVectors writes the optional vectors file (Options.VectorsFile).
	StageVectors = "vectors"
	StageCommit  = "commit" // write metadata, commit to the catalog
)

// stageUnits names the unit of a stage's counts by the stage name's first
// word (the build's stages, bench's settings, join's stages).
var stageUnits = map[string]string{
	StageScan: "rows", StageAssign: "rows", StageTrain: "iterations", StageWrite: "buckets", StageVectors: "rows",
	"nprobe": "searches", // parqdb bench: a setting's stage
	"join":   "queries", "publish": "files",
}

// StageUnit returns the unit of the counts of stage (by its first word),
// or "" for stages without one (commit). Every progress display — the
// CLI's lines, the C library's task progress and Python's bars — takes
// it from here.
func StageUnit(stage string) string {
	first, _, _ := strings.Cut(stage, " ")
	return stageUnits[first]
}

// Progress receives a build's progress, in stage order: per stage Start,
// any number of Add, then End. A stage that fails or is cancelled gets no
// End: the build returns its error instead. Add may be called from several
// goroutines at once (the write stage writes buckets in parallel); the
// other methods come from one goroutine. A stage may be ended without
// having been started (train, when the centroids are reused).
type Progress interface {
	// Start begins a stage whose work is total units (0 if unknown): rows
	// for scan, assign and vectors, Lloyd iterations for train, root
	// buckets for write.
	Start(stage string, total int64)
	// Add reports n more units done in the current stage.
	Add(n int64)
	// End finishes the current stage, which took d.
	End(stage string, d time.Duration)
	// Warn reports a warning the user should see.
	Warn(msg string)
}

// ProgressTotaler is an optional extension of Progress: when the total of
// the current stage grows while it runs (training's empty-root recovery or
// flat fallback adds iterations), the build calls SetTotal with the new
// total on a Progress that implements it.
type ProgressTotaler interface {
	SetTotal(total int64)
}

type nopProgress struct{}

func (nopProgress) Start(string, int64)       {}
func (nopProgress) Add(int64)                 {}
func (nopProgress) End(string, time.Duration) {}
func (nopProgress) Warn(string)               {}
