package indexer_test

import (
	"testing"

	"github.com/parqdb/parqdb/indexer"
)

func TestStageUnit(t *testing.T) {
	for _, tc := range []struct{ stage, unit string }{
		{indexer.StageScan, "rows"},
		{indexer.StageTrain, "iterations"},
		{indexer.StageAssign, "rows"},
		{indexer.StageWrite, "buckets"},
		{indexer.StageVectors, "rows"},
		{indexer.StageCommit, ""},
		{"nprobe 8", "searches"}, // by the first word
		{"join", "queries"},
		{"", ""},
	} {
		if got := indexer.StageUnit(tc.stage); got != tc.unit {
			t.Errorf("StageUnit(%q) = %q, want %q", tc.stage, got, tc.unit)
		}
	}
}
