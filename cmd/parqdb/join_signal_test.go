//go:build linux || darwin

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parqdb/parqdb/internal/testenv"
)

// joinArgs is a self-join of the fixture's source by id, k 5, into out.
func (f ptyFixture) joinArgs(queries, out string, extra ...string) []string {
	return append([]string{"join", "v", "--queries-table", queries, "--query-key", "id", "--query-vector", "embedding",
		"-k", "5", "--self", "--batch-queries", "500", "--output", out}, extra...)
}

// TestJoinSIGINTLeavesNothing interrupts parqdb join with a real SIGINT
// in the middle of its join stage (after a batch was written to an open
// part): it exits 130, the output folder holds no file at all, and a
// rerun completes.
func TestJoinSIGINTLeavesNothing(t *testing.T) {
	testenv.SkipShort(t, skipBuiltCLI)
	f := newPTYFixture(t)
	out := filepath.Join(f.dir, "knn")
	for _, tty := range []bool{false, true} {
		s := f.start(t, tty, []string{"PARQDB_TEST_HOLD=join"}, f.joinArgs(f.src, out)...)
		s.waitFor(t, "hold join")
		s.interrupt(t)
		code, screen := s.wait(t, time.Minute)
		if code != 130 || !strings.Contains(strings.Join(screen, "\n"), "interrupted by SIGINT") {
			t.Fatalf("tty %v: exit %d, want 130:\n%s", tty, code, strings.Join(screen, "\n"))
		}
		var files []string
		filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files = append(files, p)
			}
			return nil
		})
		if len(files) > 0 {
			t.Fatalf("tty %v: files left after the interrupt: %v", tty, files)
		}
	}
	if o, code := f.runPlain(t, f.joinArgs(f.src, out, "-q")...); code != 0 || !strings.Contains(o, "queries  10000") {
		t.Fatalf("rerun: exit %d\n%s", code, o)
	}
	if v := visibleFiles(t, out); len(v) != 1 {
		t.Fatalf("rerun output: %v", v)
	}
}

// TestJoinKilledShard runs a join of two shards where one shard is killed
// (SIGKILL, no cleanup) in the middle: nothing is visible, the commit
// refuses naming the shard, and rerunning the shard completes the join.
func TestJoinKilledShard(t *testing.T) {
	testenv.SkipShort(t, skipBuiltCLI)
	f := newPTYFixture(t)
	qdir := filepath.Join(f.dir, "queries")
	if err := os.MkdirAll(qdir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeSource50(t, filepath.Join(qdir, "a.parquet"), 0, 3000, -1)
	writeSource50(t, filepath.Join(qdir, "b.parquet"), 3000, 3000, -1)
	out := filepath.Join(f.dir, "knn")
	o, code := f.runPlain(t, f.joinArgs(qdir, out, "--shards", "2")...)
	plan := filepath.Join(out, "_parqdb_join", "plan.json")
	if code != 0 || !strings.Contains(o, "join-shard "+plan+" --shard I") {
		t.Fatalf("plan: exit %d\n%s", code, o)
	}
	s := f.start(t, false, []string{"PARQDB_TEST_HOLD=join"}, "join-shard", plan, "--shard", "0")
	s.waitFor(t, "hold join")
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if code, _ := s.wait(t, time.Minute); code != -1 {
		t.Fatalf("killed shard: exit %d", code)
	}
	if v := visibleFiles(t, out); len(v) > 0 {
		t.Fatalf("visible after the kill: %v", v)
	}
	if o, code := f.runPlain(t, "join-shard", plan, "--shard", "1", "-q"); code != 0 {
		t.Fatalf("shard 1: exit %d\n%s", code, o)
	}
	if o, code := f.runPlain(t, "join-commit", plan, "-q"); code != 1 || !strings.Contains(o, "shard(s) [0]") {
		t.Fatalf("commit without shard 0: exit %d\n%s", code, o)
	}
	if v := visibleFiles(t, out); len(v) > 0 {
		t.Fatalf("visible after a refused commit: %v", v)
	}
	if o, code := f.runPlain(t, "join-shard", plan, "--shard", "0", "-q"); code != 0 || !strings.Contains(o, "queries   3000") {
		t.Fatalf("shard 0 rerun: exit %d\n%s", code, o)
	}
	if o, code := f.runPlain(t, "join-commit", plan, "-q"); code != 0 || !strings.Contains(o, "rows     30000 in 2 file(s)") {
		t.Fatalf("commit: exit %d\n%s", code, o)
	}
	if v := visibleFiles(t, out); len(v) != 2 {
		t.Fatalf("committed output: %v", v)
	}
	if _, err := os.Stat(filepath.Join(out, "_parqdb_join")); !os.IsNotExist(err) {
		t.Fatalf("work folder left after the commit: %v", err)
	}
}
