package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestServicesScript runs `make services`' script as a user does: it
// starts the S3 server and PostgreSQL, and the settings it prints (and
// writes to DIR/env) make the CLI build and search an index in an S3
// warehouse with a PostgreSQL catalog; stop ends both servers and removes
// their data.
func TestServicesScript(t *testing.T) {
	bin := cliBinary(t)
	script, err := filepath.Abs("../../scripts/services.sh")
	if err != nil {
		t.Fatal(err)
	}
	// As root the script runs PostgreSQL as user postgres, which must be
	// able to enter the folder (t.TempDir's folders are private).
	tmp := t.TempDir()
	for _, d := range []string{filepath.Dir(tmp), tmp} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(tmp, "services")
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(script, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("services.sh %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	out := run("start", dir)
	t.Cleanup(func() { exec.Command(script, "stop", dir).Run() })
	s3pid, _ := os.ReadFile(filepath.Join(dir, "s3.pid"))
	pgpid, _ := os.ReadFile(filepath.Join(dir, "pg", "data", "postmaster.pid"))
	// The printed export lines are the env file's.
	env := os.Environ()
	var exports int
	for _, line := range strings.Split(out, "\n") {
		rest, ok := strings.CutPrefix(line, "export ")
		if !ok {
			continue
		}
		exports++
		env = append(env, strings.Fields(rest)...)
	}
	file, err := os.ReadFile(filepath.Join(dir, "env"))
	if err != nil || exports != 3 || strings.Count(string(file), "\nexport ") != 3 {
		t.Fatalf("services.sh printed %d export lines (%v):\n%s\nenv file:\n%s", exports, err, out, file)
	}
	src, err := filepath.Abs(gloveSample)
	if err != nil {
		t.Fatal(err)
	}
	cli := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = append(env, asCLI+"=1")
		var o bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &o
		if err := cmd.Run(); err != nil {
			t.Fatalf("parqdb %v: %v\n%s", args, err, o.String())
		}
		return o.String()
	}
	cli("index", "create", "words", "--source", src, "--vector-field", "embedding", "--key-fields", "word", "--metric", "cosine", "--nlist", "20", "-q")
	if got := cli("search", "words", "--near-key", "king", "-k", "1", "--columns", "word"); !strings.Contains(got, "king") {
		t.Fatalf("search: %s", got)
	}
	list := cli("index", "list", "--format", "csv")
	if !strings.Contains(list, "words") {
		t.Fatalf("index list: %s", list)
	}
	if entries, err := os.ReadDir(filepath.Join(dir, "s3", "parqdb", "warehouse")); err != nil || len(entries) == 0 {
		t.Errorf("the warehouse is not in the S3 server's bucket parqdb: %v %v", entries, err)
	}
	run("stop", dir)
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("stop left %s: %v", dir, err)
	}
	for name, b := range map[string][]byte{"S3 server": s3pid, "PostgreSQL": pgpid} {
		first, _, _ := strings.Cut(string(b), "\n")
		pid, err := strconv.Atoi(strings.TrimSpace(first))
		if err != nil {
			t.Fatalf("%s pid %q", name, b)
		}
		if syscall.Kill(pid, 0) == nil {
			t.Errorf("the %s (pid %d) still runs after stop", name, pid)
		}
	}
}
