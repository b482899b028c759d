package indexer

import "time"

// Stage names, in pipeline order.
const (
	StageScan   = "scan"   // read and validate the source, take the sample
	StageTrain  = "train"  // hierarchical k-means on the sample
	StageAssign = "assign" // assign + encode every row, spill by root bucket
	StageWrite  = "write"  // write centroid, root and postings tables
	StageCommit = "commit" // write metadata, commit to the catalog
)

// Progress receives a build's progress. Calls come from one goroutine at a
// time, in stage order: Start, any number of Add, then End.
type Progress interface {
	// Start begins a stage whose work is total units (rows, iterations or
	// bytes; 0 if unknown).
	Start(stage string, total int64)
	// Add reports n more units done in the current stage.
	Add(n int64)
	// End finishes the current stage, which took d.
	End(stage string, d time.Duration)
	// Warn reports a warning the user should see.
	Warn(msg string)
}

type nopProgress struct{}

func (nopProgress) Start(string, int64)       {}
func (nopProgress) Add(int64)                 {}
func (nopProgress) End(string, time.Duration) {}
func (nopProgress) Warn(string)               {}
