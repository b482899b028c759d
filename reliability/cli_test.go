package reliability_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parqdb/parqdb/internal/fvecs"
	"github.com/parqdb/parqdb/internal/testenv"
)

// The damaged-warehouse matrix and the outside-open guard run the real
// parqdb binary, so that a panic on any goroutine, an exit status and
// every system call are observed as a user would see them (the matrices
// the build without the Iceberg provider: matrixCLI).

// A cliBuild is one build of cmd/parqdb, made once per test process into
// cliDir.
type cliBuild struct {
	tags string // go build -tags; "" for the default build
	once sync.Once
	path string
	err  error
}

var (
	// defaultCLI is the build users get (make build).
	defaultCLI = &cliBuild{}
	// matrixCLI is the build the damaged-warehouse and mutated-JSON
	// matrices run, thousands of short processes over warehouses whose
	// sources are Parquet files: without the Iceberg source provider
	// (-tags noiceberg, docs/iceberg.md), whose package initialisation
	// (iceberg-go's Substrait function tables, about 0.15 s of CPU) was
	// most of each such process's time.
	matrixCLI = &cliBuild{tags: "noiceberg"}

	cliDirOnce sync.Once
	cliDir     string
	cliDirErr  error
)

// parqdbBinary builds cmd/parqdb (the default build) once per test
// process and returns its path.
func parqdbBinary(t *testing.T) string { return defaultCLI.binary(t) }

// binary builds b once per test process and returns its path.
func (b *cliBuild) binary(t *testing.T) string {
	t.Helper()
	testenv.SkipShort(t, "tests that run the CLI built with go build")
	cliDirOnce.Do(func() {
		if cliDir, cliDirErr = os.MkdirTemp("", "parqdb-reliability-bin-"); cliDirErr == nil {
			testenv.AtExit(func() { os.RemoveAll(cliDir) })
		}
	})
	if cliDirErr != nil {
		t.Fatal(cliDirErr)
	}
	b.once.Do(func() {
		b.path = filepath.Join(cliDir, "parqdb")
		if b.tags != "" {
			b.path += "-" + b.tags
		}
		cmd := exec.Command("go", "build", "-tags", b.tags, "-o", b.path, "github.com/parqdb/parqdb/cmd/parqdb")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			b.err = &buildError{err, out.String()}
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return "go build ./cmd/parqdb: " + e.err.Error() + "\n" + e.out }

// cliResult is one run of the binary.
type cliResult struct {
	code           int
	stdout, stderr string
}

func (r cliResult) output() string { return r.stdout + r.stderr }

// panicked reports whether the run shows a Go panic or a fatal runtime
// error: exit status 2 with a goroutine trace (a usage error also exits
// 2, but never prints one).
func (r cliResult) panicked() bool {
	return strings.Contains(r.stderr, "panic:") || strings.Contains(r.stderr, "goroutine ") ||
		strings.Contains(r.stderr, "fatal error:")
}

// runParqdb runs the binary (through wrap, e.g. strace, if given) with a
// fixed environment: no AWS settings but those in env, so that nothing
// reaches a real cloud endpoint.
func runParqdb(t *testing.T, env []string, wrap []string, args ...string) cliResult {
	t.Helper()
	return defaultCLI.run(t, env, wrap, args...)
}

// run is runParqdb with build b.
func (b *cliBuild) run(t *testing.T, env []string, wrap []string, args ...string) cliResult {
	t.Helper()
	argv := append(append(append([]string{}, wrap...), b.binary(t)), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "PARQDB_CATALOG=", "PARQDB_WAREHOUSE="}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan struct{})
	timer := time.AfterFunc(2*time.Minute, func() {
		if cmd.Process != nil {
			cmd.Process.Kill()
		}
		close(done)
	})
	err := cmd.Run()
	if !timer.Stop() {
		<-done
		t.Fatalf("parqdb %v: no answer within 2 minutes", args)
	}
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("parqdb %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return cliResult{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// writeFvecs writes vectors in the .fvecs format (bench --queries).
func writeFvecs(t *testing.T, path string, vecs [][]float32) {
	t.Helper()
	var b []byte
	for _, v := range vecs {
		b = fvecs.Append(b, v)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// copyTree copies a folder of regular files.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
