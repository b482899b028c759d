package indexer

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestSpillLeftoversKeepsLive checks that the sweep removes a spill
// folder nobody holds (a killed build's; TestKilledBuildSpillRemoved in
// package reliability kills real builds) and keeps the folders of a build
// still running, also in this process, and every other name, including
// the unlocked folders of older versions.
func TestSpillLeftoversKeepsLive(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no flock")
	}
	tmp := t.TempDir()
	live, err := newSpillDir(tmp, "build-")
	if err != nil {
		t.Fatal(err)
	}
	defer live.remove()
	if err := os.WriteFile(filepath.Join(live.path, "bucket-000000-1"), []byte("live"), 0o644); err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(tmp, "parqdb-spill-keys-123")
	other := filepath.Join(tmp, "parqdb-spill-other-1")
	bare := filepath.Join(tmp, "parqdb-spill-build-")
	legacy := filepath.Join(tmp, "parqdb-build-123") // an older version's: it held no lock
	for _, d := range []string{dead, other, bare, legacy} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dead, "keys-000-1"), make([]byte, 100), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := SpillLeftovers(tmp, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Path != dead || !got[0].Removed || got[0].Bytes != 100 {
		t.Fatalf("SpillLeftovers = %+v, want only %s (100 bytes) removed", got, dead)
	}
	for _, d := range []string{live.path, other, bare, legacy} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s: %v", d, err)
		}
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("%s still there: %v", dead, err)
	}
	// A second live folder's sweep keeps the first.
	second, err := newSpillDir(tmp, "keys-")
	if err != nil {
		t.Fatal(err)
	}
	second.remove()
	if _, err := os.Stat(live.path); err != nil {
		t.Fatalf("a new spill folder's sweep removed a live one: %v", err)
	}
}
