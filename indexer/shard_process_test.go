//go:build linux || darwin

package indexer

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parqdb/parqdb/buildplan"
	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/internal/testenv"
	"github.com/parqdb/parqdb/storage"
)

// buildCLI builds the parqdb binary with the parqdbtest tag, whose
// PARQDB_TEST_HOLD=STAGE pauses a chosen stage (cmd/parqdb/hook_parqdbtest.go).
func buildCLI(t *testing.T) string {
	t.Helper()
	testenv.SkipShort(t, "tests that run the CLI built with go build")
	bin := filepath.Join(t.TempDir(), "parqdb")
	out, err := exec.Command("go", "build", "-tags", "parqdbtest", "-o", bin, "github.com/parqdb/parqdb/cmd/parqdb").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestShardProcessesS3Postgres runs a sharded build as a cluster would, as
// separate parqdb processes over the real S3 server (source and warehouse)
// and PostgreSQL (catalog): the coordinator plans 3 shards, the 3 shard
// processes run at once, one of them is killed with SIGKILL in the middle
// of writing its postings, the commit refuses the incomplete plan, the
// killed shard is rerun, the commit publishes the index, verify passes,
// and search results equal those of a single-process build that reuses
// the same centroids.
func TestShardProcessesS3Postgres(t *testing.T) {
	ctx := context.Background()
	bin := buildCLI(t)
	srv := testenv.S3(t)
	dsn := testenv.Postgres(t)
	srcBucket, whBucket := srv.NewBucket(t), srv.NewBucket(t)
	aws := map[string]string{"AWS_ACCESS_KEY_ID": srv.AccessKey, "AWS_SECRET_ACCESS_KEY": srv.SecretKey,
		"AWS_REGION": srv.Region, "AWS_ENDPOINT_URL_S3": srv.Endpoint}
	environ := append(os.Environ(), "PARQDB_WAREHOUSE=s3://"+whBucket+"/wh", "PARQDB_CATALOG="+dsn)
	for k, v := range aws {
		t.Setenv(k, v) // for this process's own reads
		environ = append(environ, k+"="+v)
	}
	src, err := storage.Open(ctx, "s3://"+srcBucket)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for i := range 6 {
		p := filepath.Join(dir, fmt.Sprintf("part-%d.parquet", i))
		writePart(t, p, int64(i*1000), 1000, 16, uint64(i+1))
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := storage.WriteAll(ctx, src, fmt.Sprintf("data/part-%d.parquet", i), data); err != nil {
			t.Fatal(err)
		}
	}
	source := "s3://" + srcBucket + "/data/"
	command := func(env []string, args ...string) *exec.Cmd {
		c := exec.Command(bin, args...)
		c.Env = env
		return c
	}
	run := func(wantExit int, args ...string) string {
		t.Helper()
		out, err := command(environ, args...).CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != wantExit {
			t.Fatalf("parqdb %s: exit %d, want %d\n%s", strings.Join(args, " "), code, wantExit, out)
		}
		return string(out)
	}

	out := run(0, "index", "create", "sharded", "--source", source, "--vector-field", "embedding", "--key-fields", "id",
		"--nlist", "40", "--shards", "3", "-q")
	m := regexp.MustCompile(`(?m)^plan\s+(\S+)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("create --shards printed no plan:\n%s", out)
	}
	plan := m[1]

	// Three shard processes at once; shard 1 stops in its write stage
	// (after its first bucket's files) and is killed there.
	var shards [3]*exec.Cmd
	var held *bufio.Scanner
	for i := range shards {
		env := environ
		if i == 1 {
			env = append(slices.Clone(environ), "PARQDB_TEST_HOLD=write:stuck")
		}
		c := command(env, "index", "build-shard", plan, "--shard", fmt.Sprint(i))
		if i == 1 {
			pipe, err := c.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			held = bufio.NewScanner(pipe)
		} else {
			c.Stdout, c.Stderr = &bytes.Buffer{}, &bytes.Buffer{}
		}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		shards[i] = c
	}
	holding := make(chan bool, 1)
	go func() {
		for held.Scan() {
			if strings.Contains(held.Text(), "hold write") {
				holding <- true
				break
			}
		}
		for held.Scan() { // drain
		}
		close(holding)
	}()
	select {
	case ok := <-holding:
		if !ok {
			t.Fatal("shard 1 ended without reaching its write stage")
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("shard 1 did not reach its write stage in 2 minutes")
	}
	if err := shards[1].Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := shards[1].Wait(); err == nil {
		t.Fatal("killed shard 1 exited 0")
	}
	for _, i := range []int{0, 2} {
		if err := shards[i].Wait(); err != nil {
			t.Fatalf("shard %d: %v\n%s", i, err, shards[i].Stderr)
		}
	}
	wh, err := storage.Open(ctx, "s3://"+whBucket+"/wh")
	if err != nil {
		t.Fatal(err)
	}
	p, err := ReadPlan(ctx, wh, plan)
	if err != nil {
		t.Fatal(err)
	}
	killed, err := wh.List(ctx, buildplan.PiecesPrefix(p.PostingsLocation, 1))
	if err != nil {
		t.Fatal(err)
	}
	if len(killed) == 0 {
		t.Fatal("the killed shard wrote nothing before the kill: the test did not kill it mid-way")
	}
	if _, err := wh.Stat(ctx, buildplan.ShardManifestLocation(p.PostingsLocation, 1)); err == nil {
		t.Fatal("the killed shard wrote its shard manifest")
	}
	out = run(1, "index", "commit", plan, "-q")
	if !strings.Contains(out, "shard(s) 1 of 3 have not finished") {
		t.Fatalf("commit with shard 1 missing:\n%s", out)
	}
	run(0, "index", "build-shard", plan, "--shard", "1", "-q")
	run(0, "index", "commit", plan, "-q")
	if out := run(0, "index", "verify", "sharded"); !strings.Contains(out, "verdict: ok") {
		t.Fatalf("verify:\n%s", out)
	}
	// gc takes what the killed run left and keeps the committed index.
	run(0, "gc", "--grace", "0s")
	for _, k := range killed {
		if _, err := wh.Stat(ctx, k.Key); err == nil {
			t.Fatalf("gc left the killed run's %s", k.Key)
		}
	}
	if out := run(0, "index", "verify", "sharded"); !strings.Contains(out, "verdict: ok") {
		t.Fatalf("verify after gc:\n%s", out)
	}
	out = run(0, "index", "create", "single", "--source", source, "--vector-field", "embedding", "--key-fields", "id", "--nlist", "40", "-q")
	if !strings.Contains(out, "reused "+p.CentroidsMetadata) {
		t.Fatalf("the single-process build did not reuse the plan's centroids:\n%s", out)
	}
	cat, err := catalog.Open(ctx, dsn, wh)
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	env := Env{Warehouse: wh, Catalog: cat}
	qs := randomQueries(30, 16)
	a, b := searchAll(t, env, "sharded", qs), searchAll(t, env, "single", qs)
	for i := range qs {
		if !slices.Equal(a[i], b[i]) || len(a[i]) != 10 {
			t.Fatalf("query %d: sharded %v\nsingle %v", i, a[i], b[i])
		}
	}
}
