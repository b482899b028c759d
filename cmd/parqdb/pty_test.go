//go:build linux || darwin

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/parqdb/parqdb/internal/source/sourcetest"
	"github.com/parqdb/parqdb/internal/testenv"
	"github.com/parqdb/parqdb/server/sqlengine"
)

// The tests in this file run the parqdb binary as a user does: under a
// real pseudo-terminal (and, for comparison, with pipes), interrupting it
// with Ctrl-C or SIGTERM and feeding it broken input, and read the screen
// the user would see.

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// skipBuiltCLI is what -short skips in the tests that run the CLI that
// parqdbBinary builds; they call SkipShort first, before their fixtures.
const skipBuiltCLI = "tests that run the CLI built with go build (pseudo-terminal sessions, the server under attack)"

// parqdbBinary builds the CLI once per test run, with the parqdbtest tag
// (hook_parqdbtest.go: PARQDB_TEST_HOLD pauses a chosen stage) and
// without the DuckDB tags, so the tests that use it skip in the DuckDB
// build (make test's second run): the first run ran them on the same
// binary.
func parqdbBinary(t *testing.T) string {
	t.Helper()
	testenv.SkipShort(t, skipBuiltCLI)
	if sqlengine.Available {
		t.Skip("runs a CLI built without the DuckDB tags: make test's first run ran it")
	}
	binOnce.Do(func() {
		var binDir string
		binDir, binErr = processDir("parqdb-pty-")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "parqdb")
		out, err := exec.Command("go", "build", "-tags", "parqdbtest", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// ptyDim is the vector dimension of the test sources.
const ptyDim = 50

// writeSource50 writes n rows with keys first.. and 50-dim vectors; the
// row at position bad (if ≥ 0) has 49 values.
func writeSource50(t *testing.T, path string, first int64, n, bad int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(first)+1, 7))
	keys := make([]int64, n)
	vecs := make([][]float32, n)
	for i := range vecs {
		keys[i] = first + int64(i)
		d := ptyDim
		if i == bad {
			d = ptyDim - 1
		}
		v := make([]float32, d)
		c := float32(rng.IntN(10))
		for j := range v {
			v[j] = c + float32(rng.NormFloat64())
		}
		vecs[i] = v
	}
	var buf bytes.Buffer
	if err := sourcetest.WriteVectors(&buf, keys, vecs, sourcetest.Options{RowGroupRows: 1000}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ptyFixture is a scratch folder with a source folder src/ (one good
// file of 10,000 rows), an index "v" over it in warehouse wh/, and a query
// file q.fvecs.
type ptyFixture struct {
	dir, src, wh, queries string
}

func newPTYFixture(t *testing.T) ptyFixture {
	t.Helper()
	dir := t.TempDir()
	f := ptyFixture{dir: dir, src: filepath.Join(dir, "src"), wh: filepath.Join(dir, "wh"), queries: filepath.Join(dir, "q.fvecs")}
	if err := os.MkdirAll(f.src, 0o755); err != nil {
		t.Fatal(err)
	}
	writeSource50(t, filepath.Join(f.src, "p0.parquet"), 0, 10000, -1)
	if out, code := f.runPlain(t, "index", "create", "v", "--source", f.src, "--vector-field", "embedding",
		"--key-fields", "id", "--nlist", "40", "-q"); code != 0 {
		t.Fatalf("index create v: exit %d\n%s", code, out)
	}
	rng := rand.New(rand.NewPCG(3, 3))
	qs := make([][]float32, 200)
	for i := range qs {
		qs[i] = make([]float32, ptyDim)
		for j := range qs[i] {
			qs[i][j] = float32(rng.NormFloat64()) + float32(i%10)
		}
	}
	writeFvecs(t, f.queries, qs)
	return f
}

// runPlain runs parqdb on the fixture's warehouse without a terminal and
// returns its combined output and exit status.
func (f ptyFixture) runPlain(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(parqdbBinary(t), append([]string{"--warehouse", f.wh}, args...)...)
	cmd.Dir = f.dir
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(out), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

// state is what must not change when a command fails or is interrupted:
// every file in the warehouse (documented temporary names, which start
// with ".parqdb-tmp:", excepted) and what the catalog says.
func (f ptyFixture) state(t *testing.T) string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(f.wh, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && !strings.HasPrefix(d.Name(), ".parqdb-tmp:") {
			rel, _ := filepath.Rel(f.wh, p)
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	list, code := f.runPlain(t, "index", "list", "--format", "json")
	if code != 0 {
		t.Fatalf("index list: exit %d %s", code, list)
	}
	desc, code := f.runPlain(t, "index", "describe", "v", "--format", "json")
	if code != 0 {
		t.Fatalf("index describe: exit %d %s", code, desc)
	}
	return strings.Join(files, "\n") + "\n" + list + desc
}

// session is one run of the binary, on a terminal or on pipes.
type session struct {
	cmd   *exec.Cmd
	ptmx  *os.File // the terminal's master side; nil on pipes
	mu    sync.Mutex
	out   bytes.Buffer
	read  chan struct{} // closed when all output is read
	exit  chan struct{} // closed when the process has exited
	ended time.Time
	code  int
}

func (s *session) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.Write(p)
}

func (s *session) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

// start runs parqdb with args on a fresh terminal (tty) or pipes; env
// adds environment variables.
func (f ptyFixture) start(t *testing.T, tty bool, env []string, args ...string) *session {
	t.Helper()
	cmd := exec.Command(parqdbBinary(t), append([]string{"--warehouse", f.wh}, args...)...)
	cmd.Dir = f.dir
	cmd.Env = append(os.Environ(), env...)
	s := &session{cmd: cmd, read: make(chan struct{}), exit: make(chan struct{})}
	if tty {
		ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
		if err != nil {
			t.Fatal(err)
		}
		s.ptmx = ptmx
		go func() {
			defer close(s.read)
			io.Copy(s, ptmx) // ends with EIO once the process has exited
		}()
	} else {
		cmd.Stdout, cmd.Stderr = s, s
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		close(s.read)
	}
	go func() {
		cmd.Wait()
		s.ended = time.Now()
		s.code = cmd.ProcessState.ExitCode()
		close(s.exit)
	}()
	t.Cleanup(func() {
		select {
		case <-s.exit:
		default:
			cmd.Process.Kill()
			<-s.exit
		}
		if s.ptmx != nil {
			s.ptmx.Close()
		}
	})
	return s
}

// waitFor waits until the output contains text.
func (s *session) waitFor(t *testing.T, text string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(s.output(), text) {
		select {
		case <-s.exit:
			t.Fatalf("exited (status %d) before printing %q:\n%s", s.code, text, s.output())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q after 2 minutes:\n%s", text, s.output())
		}
	}
}

// interrupt sends SIGINT as a user does: Ctrl-C on the terminal (the
// terminal driver signals the foreground process group), or a kill on
// pipes.
func (s *session) interrupt(t *testing.T) {
	t.Helper()
	if s.ptmx != nil {
		if _, err := s.ptmx.Write([]byte{3}); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err := s.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
}

// interruptAgain is interrupt for a process that may have exited in the
// meantime: errors are ignored.
func (s *session) interruptAgain() {
	if s.ptmx != nil {
		_, _ = s.ptmx.Write([]byte{3})
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGINT)
}

// wait waits up to limit for the process to exit and for its output, and
// returns the exit status and the screen.
func (s *session) wait(t *testing.T, limit time.Duration) (int, []string) {
	t.Helper()
	select {
	case <-s.exit:
	case <-time.After(limit):
		t.Fatalf("still running after %s:\n%s", limit, s.output())
	}
	select {
	case <-s.read:
	case <-time.After(10 * time.Second):
		t.Fatal("output not closed 10 s after exit")
	}
	return s.code, screen(t, s.output())
}

// lastLine is the last non-empty line of the screen.
func lastLine(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return lines[len(lines)-1]
}

// TestPTYErrorIsLastAndExits runs every long command on a source or index
// that makes it fail in the middle of a stage: the command must exit 1
// within seconds (it hung forever on a terminal) with the error as the
// last line on the screen, and leave the warehouse and catalog as they
// were.
func TestPTYErrorIsLastAndExits(t *testing.T) {
	testenv.SkipShort(t, skipBuiltCLI)
	// A postings file of index v, damaged or removed by prepare.
	bucketFile := func(t *testing.T, f ptyFixture) string {
		m, _ := filepath.Glob(filepath.Join(f.wh, "indexes", "*", "*", "ivf_postings", "bucket-*.parquet"))
		if len(m) == 0 {
			t.Fatal("no postings file in the fixture")
		}
		slices.Sort(m)
		return m[0]
	}
	for _, tc := range []struct {
		name    string
		prepare func(t *testing.T, f ptyFixture)
		args    func(f ptyFixture) []string
		want    []string // in the last line
	}{
		{"create", func(t *testing.T, f ptyFixture) {
			writeSource50(t, filepath.Join(f.dir, "bad.parquet"), 0, 10000, 9990)
		}, func(f ptyFixture) []string {
			return []string{"index", "create", "bad", "--source", filepath.Join(f.dir, "bad.parquet"), "--vector-field", "embedding", "--key-fields", "id"}
		}, []string{"parqdb:", "row 9990", "49"}},
		{"refresh", func(t *testing.T, f ptyFixture) {
			writeSource50(t, filepath.Join(f.src, "p1.parquet"), 10000, 10000, 9990)
		}, func(f ptyFixture) []string {
			return []string{"index", "refresh", "v", "--retrain"}
		}, []string{"parqdb:", "row 9990", "49"}},
		{"optimize", func(t *testing.T, f ptyFixture) {
			if err := os.Truncate(bucketFile(t, f), 100); err != nil {
				t.Fatal(err)
			}
		}, func(f ptyFixture) []string {
			return []string{"index", "optimize", "v", "--force"}
		}, []string{"parqdb:"}},
		{"bench", func(t *testing.T, f ptyFixture) {
			if err := os.Remove(bucketFile(t, f)); err != nil {
				t.Fatal(err)
			}
		}, func(f ptyFixture) []string {
			return []string{"bench", "v", "--queries", f.queries, "--nprobe", "40", "--cold-queries", "5"}
		}, []string{"parqdb:"}},
	} {
		for _, tty := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/tty=%v", tc.name, tty), func(t *testing.T) {
				f := newPTYFixture(t)
				tc.prepare(t, f)
				before := f.state(t)
				s := f.start(t, tty, nil, tc.args(f)...)
				code, lines := s.wait(t, 30*time.Second)
				if code != exitProblem {
					t.Fatalf("exit %d, want %d; screen:\n%s", code, exitProblem, strings.Join(lines, "\n"))
				}
				last := lastLine(lines)
				for _, w := range tc.want {
					if !strings.Contains(last, w) {
						t.Fatalf("last line %q lacks %q; screen:\n%s", last, w, strings.Join(lines, "\n"))
					}
				}
				if n := strings.Count(s.output(), "parqdb:"); n != 1 {
					t.Fatalf("error printed %d times:\n%s", n, strings.Join(lines, "\n"))
				}
				if after := f.state(t); after != before {
					t.Fatalf("warehouse or catalog changed:\nbefore %s\nafter  %s", before, after)
				}
			})
		}
	}
}

// TestPTYInterrupt stops every long command in the middle of a stage
// (PARQDB_TEST_HOLD pauses the stage after its first progress report,
// when it has written part of its output) with Ctrl-C or SIGTERM: the
// process must exit 130 (143) by its own cleanup, within the stop grace
// (its last line is the "nothing was committed" error, not the grace's
// "stopping took longer" exit), the catalog must be unchanged and no new
// file may be left in the warehouse. A second Ctrl-C, or a stage that
// does not stop, must not keep the process alive: each ends it by its own
// path, named by the last line. Which path ended the process, not a clock
// reading, is the assertion (a busy machine slows every path alike); the
// time from the signal to the exit is logged, and the ceiling for it is
// the 30 s wait.
func TestPTYInterrupt(t *testing.T) {
	testenv.SkipShort(t, skipBuiltCLI)
	long := map[string]func(f ptyFixture) []string{
		"create": func(f ptyFixture) []string {
			return []string{"index", "create", "w", "--source", f.src, "--vector-field", "embedding", "--key-fields", "id", "--nlist", "40", "--reuse-centroids", "never"}
		},
		"refresh":  func(f ptyFixture) []string { return []string{"index", "refresh", "v", "--retrain"} },
		"optimize": func(f ptyFixture) []string { return []string{"index", "optimize", "v", "--force"} },
		"bench": func(f ptyFixture) []string {
			return []string{"bench", "v", "--queries", f.queries, "--nprobe", "1,4", "--refine", "0,4", "--cold-queries", "5", "--threads", "2"}
		},
	}
	for _, tc := range []struct {
		name, op, hold string
		sig            syscall.Signal
		twice          bool   // Ctrl-C again, every 200 ms after the first
		last           string // the start of the last line: which path ended the process
		want           int
	}{
		{"create/SIGINT in assign", "create", "assign", syscall.SIGINT, false, stoppedLine(syscall.SIGINT), 130},
		{"create/SIGINT in train", "create", "train", syscall.SIGINT, false, stoppedLine(syscall.SIGINT), 130},
		{"create/SIGTERM in train", "create", "train", syscall.SIGTERM, false, stoppedLine(syscall.SIGTERM), 143},
		{"refresh/SIGINT in write", "refresh", "write", syscall.SIGINT, false, stoppedLine(syscall.SIGINT), 130},
		{"refresh/SIGTERM in scan", "refresh", "scan", syscall.SIGTERM, false, stoppedLine(syscall.SIGTERM), 143},
		{"optimize/SIGINT in write", "optimize", "write", syscall.SIGINT, false, stoppedLine(syscall.SIGINT), 130},
		{"bench/SIGINT in a setting", "bench", "nprobe 4 refine 0", syscall.SIGINT, false, stoppedLine(syscall.SIGINT), 130},
		{"bench/SIGTERM in a setting", "bench", "nprobe 1 refine 4", syscall.SIGTERM, false, stoppedLine(syscall.SIGTERM), 143},
		// A stage that ignores the cancellation: the second Ctrl-C exits
		// at once, before the stop grace ends it.
		{"create/two SIGINTs, stuck stage", "create", "assign:stuck", syscall.SIGINT, true, "parqdb: interrupted again by " + signalName(syscall.SIGINT) + ": exiting without cleaning up", 130},
		// Without the second Ctrl-C the stop grace ends it.
		{"create/SIGINT, stuck stage", "create", "assign:stuck", syscall.SIGINT, false, "parqdb: interrupted by " + signalName(syscall.SIGINT) + ": stopping took longer than " + stopGrace.String(), 130},
	} {
		for _, tty := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/tty=%v", tc.name, tty), func(t *testing.T) {
				// Two at a time (-parallel is GOMAXPROCS): a case waits for
				// its hold, the signal's handling or the stop grace more
				// than it computes.
				t.Parallel()
				f := newPTYFixture(t)
				before := f.state(t)
				s := f.start(t, tty, []string{"PARQDB_TEST_HOLD=" + tc.hold}, long[tc.op](f)...)
				stage, _, _ := strings.Cut(tc.hold, ":")
				s.waitFor(t, "hold "+stage)
				sent := time.Now()
				if tc.sig == syscall.SIGINT {
					s.interrupt(t)
				} else if err := s.cmd.Process.Signal(tc.sig); err != nil {
					t.Fatal(err)
				}
				if tc.twice {
					// Ctrl-C again every 200 ms until the process exits: on a
					// busy machine the first signal can still be pending when
					// the second is sent, and the kernel merges the two.
					for pressing := true; pressing; {
						select {
						case <-s.exit:
							pressing = false
						case <-time.After(200 * time.Millisecond):
							s.interruptAgain()
						}
					}
				}
				code, lines := s.wait(t, 30*time.Second)
				took := s.ended.Sub(sent)
				t.Logf("exit %d %s after the signal", code, took.Round(time.Millisecond))
				if code != tc.want {
					t.Fatalf("exit %d, want %d; screen:\n%s", code, tc.want, strings.Join(lines, "\n"))
				}
				last := lastLine(lines)
				if !strings.HasPrefix(last, tc.last) {
					t.Fatalf("last line %q, want it to start %q; screen:\n%s", last, tc.last, strings.Join(lines, "\n"))
				}
				if strings.Contains(tc.hold, "stuck") {
					return // killed in the stage: cleanup is gc's job, as the message says
				}
				if after := f.state(t); after != before {
					t.Fatalf("warehouse or catalog changed:\nbefore %s\nafter  %s", before, after)
				}
			})
		}
	}
}

// stoppedLine is the last line of a long command that stopped by its own
// cleanup after sig, before the stop grace ran out.
func stoppedLine(sig syscall.Signal) string {
	return "parqdb: " + interruptedError{sig: sig}.Error()
}

// TestPTYFinishedStages checks the screen after each long command
// succeeded on a terminal: every stage line ends with a check mark, its
// counts and its duration, no spinner glyph or ETA is left, training shows
// iterations and bench one line per setting.
func TestPTYFinishedStages(t *testing.T) {
	testenv.SkipShort(t, skipBuiltCLI)
	for _, tc := range []struct {
		name   string
		args   func(f ptyFixture) []string
		stages []string
		units  map[string]string // stage → unit its line shows
	}{
		{"create", func(f ptyFixture) []string {
			return []string{"index", "create", "w", "--source", f.src, "--vector-field", "embedding", "--key-fields", "id",
				"--nlist", "40", "--reuse-centroids", "never"}
		}, []string{"scan", "train", "assign", "write", "commit"}, map[string]string{"scan": "rows", "train": "iterations", "write": "buckets"}},
		{"refresh", func(f ptyFixture) []string { return []string{"index", "refresh", "v", "--retrain"} },
			[]string{"scan", "train", "assign", "write", "commit"}, map[string]string{"train": "iterations"}},
		{"optimize", func(f ptyFixture) []string { return []string{"index", "optimize", "v", "--force"} },
			[]string{"write", "commit"}, map[string]string{"write": "buckets"}},
		{"bench", func(f ptyFixture) []string {
			return []string{"bench", "v", "--queries", f.queries, "--nprobe", "1,4", "--refine", "0,4", "--cold-queries", "5", "--threads", "2"}
		}, []string{"truth", "nprobe 1 refine 0", "nprobe 4 refine 0", "nprobe 1 refine 4", "nprobe 4 refine 4"},
			// 200 queries × 4 passes (warm-up, one thread, the batch, two callers) + 5 cold
			map[string]string{"nprobe 1 refine 0": "805 / 805 searches", "nprobe 4 refine 4": "805 / 805 searches"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newPTYFixture(t)
			s := f.start(t, true, nil, tc.args(f)...)
			code, lines := s.wait(t, time.Minute)
			text := strings.Join(lines, "\n")
			if code != 0 {
				t.Fatalf("exit %d:\n%s", code, text)
			}
			var stages []string
			for _, l := range lines {
				for _, g := range spinner {
					if strings.Contains(l, g) {
						t.Fatalf("spinner glyph left on the screen: %q\n%s", l, text)
					}
				}
				if strings.Contains(l, "ETA") || strings.Contains(l, markStopped) {
					t.Fatalf("ETA or stop mark left on the screen: %q", l)
				}
				rest, ok := strings.CutPrefix(l, markDone+" ")
				if !ok {
					continue
				}
				name, _, _ := strings.Cut(rest, "  ")
				stages = append(stages, strings.TrimSpace(name))
				if !strings.HasSuffix(l, "s") {
					t.Fatalf("finished stage without a duration: %q", l)
				}
				if u := tc.units[strings.TrimSpace(name)]; !strings.Contains(l, u) {
					t.Fatalf("stage line %q lacks %q", l, u)
				}
			}
			if !slices.Equal(stages, tc.stages) {
				t.Fatalf("finished stages %q, want %q; screen:\n%s", stages, tc.stages, text)
			}
		})
	}
}
