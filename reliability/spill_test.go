package reliability_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/parqdb/parqdb/indexer"
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
		if strings.HasPrefix(e.Name(), "parqdb-build-") || strings.HasPrefix(e.Name(), "parqdb-keys-") {
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
			if !kinds["parqdb-build"] || !kinds["parqdb-keys"] {
				t.Fatalf("the kill left %v in the temporary folder, want a parqdb-build-* and a parqdb-keys-* folder", left)
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
