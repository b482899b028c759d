package catalog_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/internal/testenv"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/storage"
)

// Child processes: the test binary re-executed with childEnv set runs
// runChild instead of the tests (see TestMain). Parameters travel in the
// environment, results on stdout, one "LOC <location>" line per commit or
// "WROTE <location>" before a deliberate hang.
const (
	childEnv       = "PARQDB_CATALOG_TEST_CHILD" // "update" or "crash"
	childSpec      = "PARQDB_CATALOG_TEST_SPEC"
	childWarehouse = "PARQDB_CATALOG_TEST_WAREHOUSE"
	childPrefix    = "PARQDB_CATALOG_TEST_PREFIX"
	childWriters   = "PARQDB_CATALOG_TEST_WRITERS"
	childSteps     = "PARQDB_CATALOG_TEST_STEPS"
)

func runChild(mode string) int {
	if err := child(mode); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	return 0
}

func child(mode string) error {
	ctx := context.Background()
	wh, err := storage.NewLocal(os.Getenv(childWarehouse))
	if err != nil {
		return err
	}
	cat, err := catalog.Open(ctx, os.Getenv(childSpec), wh)
	if err != nil {
		return err
	}
	defer cat.Close()
	switch mode {
	case "update":
		writers, _ := strconv.Atoi(os.Getenv(childWriters))
		steps, _ := strconv.Atoi(os.Getenv(childSteps))
		var writes atomic.Int64
		locs, err := commitMany(ctx, cat, wh, "docs", os.Getenv(childPrefix), writers, steps, &writes)
		for _, l := range locs {
			fmt.Println("LOC", l)
		}
		return err
	case "crash":
		_, _, err := catalog.Update(ctx, cat, wh, "docs",
			func(base *metadata.Metadata, e catalog.Entry) (*metadata.Metadata, *catalog.Entry, error) {
				m, err := successor(base, "crash", 0)
				return m, nil, err
			},
			catalog.AfterWrite(func(ctx context.Context, loc string) error {
				fmt.Println("WROTE", loc)
				time.Sleep(time.Hour) // the parent kills us here, before the commit
				return nil
			}))
		return fmt.Errorf("the crash child was not killed: %v", err)
	}
	return fmt.Errorf("unknown child mode %q", mode)
}

// startChild re-executes the test binary in child mode.
func startChild(t *testing.T, mode, spec, warehouse string, extra ...string) (*exec.Cmd, io.Reader) {
	t.Helper()
	testenv.SkipShort(t, "tests that commit from child processes")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode, childSpec+"="+spec, childWarehouse+"="+warehouse)
	cmd.Env = append(cmd.Env, extra...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return cmd, out
}

// lines reads r's lines that start with prefix+" ", without the prefix.
func lines(r io.Reader, prefix string) []string {
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), prefix+" "); ok {
			out = append(out, v)
		}
	}
	return out
}
