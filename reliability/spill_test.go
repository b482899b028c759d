package reliability_test

import (
	"context"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/internal/testenv"
)

// spillFolders lists the spill folders in tmp.
func spillFolders(t *testing.T, tmp string) []string {
	t.Helper()
	ents, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "parqdb-spill-build-") || strings.HasPrefix(e.Name(), "parqdb-spill-keys-") {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestKilledBuildSpillRemoved SIGKILLs create (with and without the
// vectors file) at its first postings write, when the key map and the
// root buckets are spilled to the temporary folder, checks that the kill
// left the spill folders behind, and then that the next step removes them:
// the next build's start, or gc's sweep (indexer.SpillLeftovers, which
// `parqdb gc` runs). A folder a running build holds is kept
// (TestSpillLeftoversKeepsLive in package indexer).
func TestKilledBuildSpillRemoved(t *testing.T) {
	testenv.SkipShort(t, skipChildren)
	ctx := context.Background()
	for _, tc := range []struct {
		name, vectors, next string
	}{
		{"next build", "0", "build"},
		{"vectors file, next build", "1", "build"},
		{"gc", "0", "gc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			b := localBackend(t, "local", "")
			src := newSource(t)
			r := runChildProcess(t, "op", append(b.env(), childOp+"=create", childName+"=spill", childSource+"="+src,
				childKillKey+"=/ivf_postings/", childVectors+"="+tc.vectors, "TMPDIR="+tmp), 0)
			if !r.killed {
				t.Fatalf("create not killed at its first postings write (exit %d): %s", r.exitCode, r.stderr)
			}
			left := spillFolders(t, tmp)
			kinds := map[string]bool{}
			for _, n := range left {
				kinds[n[:strings.LastIndex(n, "-")]] = true
			}
			if !kinds["parqdb-spill-build"] || !kinds["parqdb-spill-keys"] {
				t.Fatalf("the kill left %v in the temporary folder, want a parqdb-spill-build-* and a parqdb-spill-keys-* folder", left)
			}
			env := b.open(t)
			switch tc.next {
			case "build":
				o := createOptions("next", src)
				o.TempDir = tmp
				if _, err := indexer.Create(ctx, buildEnv(env), o); err != nil {
					t.Fatal(err)
				}
			case "gc":
				found, err := indexer.SpillLeftovers(tmp, false)
				if err != nil {
					t.Fatal(err)
				}
				if len(found) != len(left) {
					t.Fatalf("dry run found %+v, want %v", found, left)
				}
				for _, f := range found {
					if f.Bytes == 0 || f.Removed {
						t.Fatalf("dry run found %+v, want its size and not removed", f)
					}
				}
				if got := spillFolders(t, tmp); !slices.Equal(got, left) {
					t.Fatalf("dry run changed the folder: %v, want %v", got, left)
				}
				removed, err := indexer.SpillLeftovers(tmp, true)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range removed {
					if !r.Removed {
						t.Fatalf("%s not removed: %v", r.Path, r.Err)
					}
				}
			}
			if got := spillFolders(t, tmp); len(got) > 0 {
				t.Fatalf("after the %s, the temporary folder still holds %v (the kill left %v)", tc.next, got, left)
			}
		})
	}
}

// TestSpillRandomKills SIGKILLs create --vectors-file at random times
// (PARQDB_SPILL_KILLS of them, default 4), each run in the temporary
// folder the previous one was killed in, and checks after each that at
// a run that made a spill folder left none of the folders before it (it
// removed them when it started spilling), and after a final complete
// build that none is left.
func TestSpillRandomKills(t *testing.T) {
	testenv.SkipShort(t, skipChildren)
	kills := 4
	if v, err := strconv.Atoi(os.Getenv("PARQDB_SPILL_KILLS")); err == nil && v > 0 {
		kills = v
	}
	rng := rand.New(rand.NewPCG(runSeed(t), 1))
	tmp := t.TempDir()
	b := localBackend(t, "local", "")
	src := newSource(t)
	env := func(name string) []string {
		return append(b.env(), childOp+"=create", childName+"="+name, childSource+"="+src, childVectors+"=1", "TMPDIR="+tmp)
	}
	full := runChildProcess(t, "op", env("full"), 0)
	if full.exitCode != 0 || full.killed {
		t.Fatalf("create: exit %d: %s", full.exitCode, full.stderr)
	}
	killed, leaked := 0, 0
	for i := 0; i < kills; i++ {
		before := map[string]bool{}
		for _, n := range spillFolders(t, tmp) {
			before[n] = true
		}
		r := runChildProcess(t, "op", env("k"+strconv.Itoa(i)), time.Duration(1+rng.Int64N(int64(full.took))))
		if !r.killed {
			if r.exitCode != 0 {
				t.Fatalf("create %d: exit %d: %s", i, r.exitCode, r.stderr)
			}
			continue
		}
		killed++
		// A run sweeps before it makes its first spill folder: once it
		// made one, none of the folders before it may remain.
		now := spillFolders(t, tmp)
		made := false
		for _, n := range now {
			made = made || !before[n]
		}
		if made {
			leaked++
		}
		for _, n := range now {
			if made && before[n] {
				t.Errorf("kill %d: %s, left by a kill before, is still there", i, n)
			}
		}
	}
	o := createOptions("last", src)
	o.TempDir = tmp
	if _, err := indexer.Create(context.Background(), buildEnv(b.open(t)), o); err != nil {
		t.Fatal(err)
	}
	if got := spillFolders(t, tmp); len(got) > 0 {
		t.Fatalf("after the last build: %v", got)
	}
	t.Logf("%d runs, %d killed, %d of them while spilling (leaving folders for the next start); 0 spill folders left after the last build", kills, killed, leaked)
}
