package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/parqdb/parqdb/internal/testenv"
	"github.com/parqdb/parqdb/server/sqlengine"
)

// The tests in this file run every example a user is shown — the README's
// shell blocks, each command's --help Example, the command lines of
// docs/serve.md and docs/search.md, and `make demo` — with a parqdb binary
// (see cliBinary) first on PATH, in a scratch folder, and require exit
// status 0. Examples of
// `parqdb sql` (and --flight) need the DuckDB build; they run in the test
// binary built with -tags duckdb,duckdb_arrow (make test's second run), the
// others in the plain one.
//
// Conventions of the examples that the runner relies on:
//   - they run from the root of a clone: examples/glove/… is the sample;
//   - a JSON vector written with "…" ('[0.1, 0.2, …]') stands for a vector
//     of the index's dimension; the runner fills it to 50 numbers;
//   - `parqdb serve` runs in the background until the next serve or the
//     end of the example group; its ports 7878 and 7879 are replaced by free
//     ones, in the curl lines too, and curl gets --fail-with-body so that an
//     HTTP error fails the example;
//   - token.txt (a file whose first line is a bearer token) exists.
//
// Not run here, by design: `make …` and `go …` lines (the build and the test
// suite itself; the recipe of `make demo` runs in the subtest "make demo"),
// the README's DuckDB CLI and numpy recipes for query files (```console and
// ```python blocks: tools the test machine lacks), and the measurement
// recipes of docs/benchmarks*.md, which need generated data sets of
// gigabytes and minutes of CPU.

// asCLI is the environment variable that makes this test binary the parqdb
// CLI, so that the examples run it as "parqdb" without a separate build:
// the same main package, with the same build tags.
const asCLI = "PARQDB_TEST_AS_CLI"

func init() {
	if os.Getenv(asCLI) == "1" {
		os.Exit(run(os.Args[1:]))
	}
}

// cliBinary returns the parqdb binary for the examples: this test binary
// (see asCLI), or, in the DuckDB build, a binary built once per test
// process (duckCLI). DuckDB calls back into Go from its own threads, and
// the Go runtime holds such callbacks until package initialization is
// done, so the CLI cannot run from an init function there.
func cliBinary(t *testing.T) string {
	t.Helper()
	testenv.SkipShort(t, "tests that run the CLI as a child process (the documented examples, the services script)")
	if sqlengine.Available {
		duckCLI.once.Do(func() {
			dir, err := processDir("parqdb-sql-")
			if err != nil {
				duckCLI.err = err
				return
			}
			duckCLI.path = filepath.Join(dir, "parqdb")
			if out, err := exec.Command("go", "build", "-tags", "duckdb,duckdb_arrow", "-o", duckCLI.path, ".").CombinedOutput(); err != nil {
				duckCLI.err = fmt.Errorf("go build: %v\n%s", err, out)
			}
		})
		if duckCLI.err != nil {
			t.Fatal(duckCLI.err)
		}
		return duckCLI.path
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// duckCLI is the CLI of the DuckDB build, built once per test process.
var duckCLI struct {
	once sync.Once
	path string
	err  error
}

// example is one command line shown to users.
type example struct {
	source string // where it is shown
	line   string // the command, continuation lines joined
}

// needsSQL reports whether the example needs the DuckDB build (the docs
// run it as parqdb-sql, the name make build-sql gives it).
func (e example) needsSQL() bool {
	return strings.Contains(e.line, "parqdb-sql") || strings.Contains(e.line, "parqdb sql") || strings.Contains(e.line, "--flight")
}

// notRun reports why an example is not run here, or "".
func (e example) notRun() string {
	switch {
	case strings.HasPrefix(e.line, "make "):
		return "make target"
	case strings.HasPrefix(e.line, "go "):
		return "go tool command"
	}
	return ""
}

// shellLines splits shell text into commands: continuation lines joined,
// blank and comment-only lines dropped.
func shellLines(source, text string) []example {
	var out []example
	var cur strings.Builder
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if cur.Len() == 0 && (l == "" || strings.HasPrefix(l, "#")) {
			continue
		}
		if strings.HasSuffix(l, `\`) {
			cur.WriteString(strings.TrimSuffix(l, `\`))
			continue
		}
		cur.WriteString(l)
		out = append(out, example{source, cur.String()})
		cur.Reset()
	}
	return out
}

// fencedBlocks returns the bodies of the ``` blocks of a Markdown file
// whose info string is lang ("" for untagged blocks).
func fencedBlocks(t *testing.T, file, lang string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	var cur []string
	in, keep := false, false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "```") {
			if in {
				if keep {
					blocks = append(blocks, strings.Join(cur, "\n"))
				}
				in, cur = false, nil
				continue
			}
			in, keep = true, strings.TrimSpace(strings.TrimPrefix(l, "```")) == lang
			continue
		}
		if in {
			cur = append(cur, l)
		}
	}
	return blocks
}

// readmeExamples are the commands of the README's sh blocks.
func readmeExamples(t *testing.T) []example {
	var out []example
	for _, b := range fencedBlocks(t, "../../README.md", "sh") {
		out = append(out, shellLines("README.md", b)...)
	}
	return out
}

// helpExamples are the lines of every command's Example text, index create
// first because the others use its index.
func helpExamples() []example {
	root, _ := newRootCmd()
	var first, rest []example
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, ex := range shellLines(c.CommandPath()+" --help", c.Example) {
			if c.CommandPath() == "parqdb index create" {
				first = append(first, ex)
			} else {
				rest = append(rest, ex)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return append(first, rest...)
}

// synopsis matches the usage summaries of docs ("parqdb search NAME (--vector …"), which are
// not commands.
var synopsis = regexp.MustCompile(` NAME\b| \[-|\(--`)

// docsExamples are the command lines in the untagged blocks of the docs
// that describe using parqdb.
func docsExamples(t *testing.T) []example {
	var out []example
	for _, f := range []string{"serve.md", "search.md"} {
		for _, b := range fencedBlocks(t, filepath.Join("../../docs", f), "") {
			for _, ex := range shellLines("docs/"+f, b) {
				if (strings.HasPrefix(ex.line, "parqdb ") || strings.HasPrefix(ex.line, "parqdb-sql ") || strings.HasPrefix(ex.line, "curl ")) && !synopsis.MatchString(ex.line) {
					out = append(out, ex)
				}
			}
		}
	}
	return out
}

// exampleRunner runs examples in one scratch folder.
type exampleRunner struct {
	t          *testing.T
	dir        string
	env        []string
	port, fl   string
	server     *exec.Cmd
	exited     chan error
	serverOut  *bytes.Buffer
	serverLine string
}

func newExampleRunner(t *testing.T, bin string) *exampleRunner {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"parqdb", "parqdb-sql"} { // make build, make build-sql
		if err := os.Symlink(bin, filepath.Join(dir, "bin", name)); err != nil {
			t.Fatal(err)
		}
	}
	examples, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(examples, filepath.Join(dir, "examples")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "token.txt"), []byte("an-example-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PARQDB_") && !strings.HasPrefix(kv, "AWS_") && !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	env = append(env, asCLI+"=1", "PATH="+filepath.Join(dir, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	r := &exampleRunner{t: t, dir: dir, env: env, port: freePort(t), fl: freePort(t)}
	t.Cleanup(r.stopServer)
	return r
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// elided matches a JSON vector written with an ellipsis.
var elided = regexp.MustCompile(`\[[-0-9., ]*…\]`)

// fullVector is a 50-dimensional vector for the GloVe sample.
func fullVector() string {
	parts := make([]string, 50)
	for i := range parts {
		parts[i] = strconv.FormatFloat(0.1*float64(i%7-3), 'f', 1, 64)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// expand applies the conventions above to an example line.
func (r *exampleRunner) expand(line string) string {
	line = elided.ReplaceAllString(line, fullVector())
	line = strings.NewReplacer("7878", r.port, "7879", r.fl).Replace(line)
	if strings.HasPrefix(line, "curl ") {
		line = "curl --fail-with-body " + strings.TrimPrefix(line, "curl ")
	}
	return line
}

func (r *exampleRunner) run(ex example) {
	t := r.t
	t.Helper()
	line := r.expand(ex.line)
	if strings.HasPrefix(ex.line, "parqdb serve") {
		r.startServer(ex, foreground(line))
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", line)
	cmd.Dir, cmd.Env = r.dir, r.env
	cmd.WaitDelay = 5 * time.Second // a process left running must not hold the test
	began := time.Now()
	out, err := cmd.CombinedOutput()
	if d := time.Since(began); d > 2*time.Second {
		t.Logf("%s: %s took %v", ex.source, ex.line, d.Round(time.Millisecond))
	}
	if err != nil {
		t.Errorf("%s: %s\n  ran: %s\n  %v\n%s", ex.source, ex.line, line, err, out)
	}
}

// foreground drops a trailing comment and "&" from a command line, so that
// the runner itself keeps the server in the background.
func foreground(line string) string {
	if i := strings.Index(line, " #"); i >= 0 {
		line = line[:i]
	}
	return strings.TrimSuffix(strings.TrimSpace(line), "&")
}

// startServer starts a serve example in the background and waits until it
// answers /healthz.
func (r *exampleRunner) startServer(ex example, line string) {
	t := r.t
	t.Helper()
	r.stopServer()
	if !strings.Contains(line, "--listen") { // the default, 127.0.0.1:7878
		line += " --listen 127.0.0.1:" + r.port
	}
	if sqlengine.Available && !strings.Contains(line, "--flight") {
		line += " --flight 127.0.0.1:" + r.fl
	}
	cmd := exec.Command("bash", "-c", "exec "+line)
	cmd.Dir, cmd.Env = r.dir, r.env
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %s: %v", ex.source, ex.line, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get("http://127.0.0.1:" + r.port + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("%s: %s: the server exited: %v\n%s", ex.source, ex.line, err, out.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-exited
			t.Fatalf("%s: %s: no answer on /healthz after 20 s\n%s", ex.source, ex.line, out.String())
		}
	}
	r.server, r.exited, r.serverOut, r.serverLine = cmd, exited, &out, ex.source+": "+ex.line
}

// stopServer ends a running server with SIGTERM, which must shut it down
// cleanly (exit 0).
func (r *exampleRunner) stopServer() {
	if r.server == nil {
		return
	}
	cmd, exited := r.server, r.exited
	r.server = nil
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		if err != nil {
			r.t.Errorf("%s: after SIGTERM: %v\n%s", r.serverLine, err, r.serverOut.String())
		}
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		<-exited
		r.t.Errorf("%s: still running 15 s after SIGTERM", r.serverLine)
	}
}

// runGroup runs examples in order in one scratch folder, those that need
// the DuckDB build only in it and the others only without it. setup runs
// first when given (for examples that use the index "words").
func runGroup(r *exampleRunner, exs []example, setup []example) int {
	for _, ex := range setup {
		r.run(ex)
	}
	ran := 0
	for _, ex := range exs {
		if ex.notRun() != "" || ex.needsSQL() != sqlengine.Available {
			continue
		}
		r.run(ex)
		ran++
	}
	r.stopServer()
	return ran
}

// createWords is the README's first command: the index the others use.
var createWords = example{"setup", "parqdb index create words --source examples/glove/glove-10k.parquet " +
	"--vector-field embedding --key-fields word --metric cosine"}

// TestExamples runs every example of the README, of the commands' --help and
// of the docs (see the top of this file) and requires exit status 0.
func TestExamples(t *testing.T) {
	start := time.Now()
	bin := cliBinary(t)
	readme, help, docs := readmeExamples(t), helpExamples(), docsExamples(t)
	for _, g := range []struct {
		name  string
		exs   []example
		setup []example
	}{
		{"README", readme, nil},
		{"help", help, nil},
		{"docs", docs, []example{createWords, {"setup", "parqdb serve"}}},
	} {
		t.Run(g.name, func(t *testing.T) {
			setup := g.setup
			if sqlengine.Available && setup == nil {
				setup = []example{createWords} // the create examples do not need the DuckDB build
			}
			r := newExampleRunner(t, bin)
			if n := runGroup(r, g.exs, setup); n == 0 {
				t.Errorf("no example of %s ran", g.name)
			}
			if g.name == "README" && !sqlengine.Available {
				// The README's Go program, in the warehouse its commands built.
				prog := filepath.Join(t.TempDir(), "search")
				if out, err := exec.Command("go", "build", "-o", prog, "../../examples/search").CombinedOutput(); err != nil {
					t.Fatalf("go build ./examples/search: %v\n%s", err, out)
				}
				cmd := exec.Command(prog)
				cmd.Dir = r.dir
				out, err := cmd.CombinedOutput()
				if err != nil || !strings.HasPrefix(string(out), "king 0\n") || !strings.Contains(string(out), "queen") {
					t.Errorf("examples/search: %v\n%s", err, out)
				}
			}
		})
	}
	if !sqlengine.Available {
		t.Run("make demo", func(t *testing.T) { testMakeDemo(t, bin) })
	}
	t.Logf("examples ran in %v", time.Since(start))
}

// testMakeDemo runs the recipe of `make demo` (as `make -n` prints it) twice
// in a folder whose ./warehouse, the CLI's default, holds a user's index:
// the demo must work and leave that warehouse exactly as it was. It also
// checks the recipe's text: it removes nothing but its own warehouse, and
// every parqdb command names that warehouse and its own catalog.
func testMakeDemo(t *testing.T, bin string) {
	cmd := exec.Command("make", "-n", "-s", "demo")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "MAKEFLAGS=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n demo: %v\n%s", err, out)
	}
	recipe := shellLines("Makefile demo", string(out))
	const demoWarehouse = "demo-warehouse"
	var steps []example
	for _, ex := range recipe {
		f := strings.Fields(ex.line)
		switch {
		case f[0] == "go" && f[1] == "build", f[0] == "echo": // the build prerequisite and what it says first
		case f[0] == "rm":
			if ex.line != "rm -rf "+demoWarehouse {
				t.Errorf("demo recipe deletes something else than ./%s: %s", demoWarehouse, ex.line)
			}
			steps = append(steps, ex)
		case f[0] == "./bin/parqdb":
			if !strings.Contains(ex.line, " --warehouse "+demoWarehouse+" ") || !strings.Contains(ex.line, " --catalog= ") {
				t.Errorf("demo command does not keep to --warehouse %s --catalog=: %s", demoWarehouse, ex.line)
			}
			ex.line = "parqdb" + strings.TrimPrefix(ex.line, "./bin/parqdb")
			steps = append(steps, ex)
		default:
			t.Errorf("unexpected demo command: %s", ex.line)
		}
	}
	r := newExampleRunner(t, bin)
	r.run(createWords) // the user's own index in ./warehouse
	userWarehouse := filepath.Join(r.dir, "warehouse")
	before := treeStat(t, userWarehouse)
	for range 2 { // the second run replaces the demo's own index
		for _, ex := range steps {
			r.run(ex)
		}
	}
	if after := treeStat(t, userWarehouse); !slices.Equal(before, after) {
		t.Errorf("make demo changed the user's warehouse:\nbefore %v\nafter  %v", before, after)
	}
	if _, err := os.Stat(filepath.Join(r.dir, demoWarehouse, "catalog.db")); err != nil {
		t.Errorf("the demo built no warehouse of its own: %v", err)
	}
}

// treeStat lists every file below dir with its size and modification time.
func treeStat(t *testing.T, dir string) []string {
	t.Helper()
	var all []string
	for _, p := range tree(t, dir) {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, fmt.Sprintf("%s %d %d", p, fi.Size(), fi.ModTime().UnixNano()))
	}
	if len(all) < 3 {
		t.Fatalf("%s holds no index: %v", dir, all)
	}
	return all
}

// TestExamplesFound guards the extraction: the examples that users see most
// must be among those TestExamples runs.
func TestExamplesFound(t *testing.T) {
	all := append(append(readmeExamples(t), helpExamples()...), docsExamples(t)...)
	for _, want := range []string{
		"parqdb index create words --source examples/glove/glove-10k.parquet",
		"parqdb search words --near-key king",
		"parqdb serve",
		"curl -s localhost:7878/v1/indexes/words/search",
		"parqdb-sql sql ",
		"parqdb metadata validate warehouse/metadata/*/*.json",
		"parqdb bench words",
	} {
		found := false
		for _, ex := range all {
			if strings.HasPrefix(ex.line, want) && ex.notRun() == "" {
				found = true
			}
		}
		if !found {
			t.Errorf("no example starts with %q", want)
		}
	}
}

// TestReadmeGoProgram: the README shows examples/search/main.go verbatim
// (TestExamples builds and runs that program).
func TestReadmeGoProgram(t *testing.T) {
	blocks := fencedBlocks(t, "../../README.md", "go")
	prog, err := os.ReadFile("../../examples/search/main.go")
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 1 || blocks[0]+"\n" != string(prog) {
		t.Errorf("the README's Go block differs from examples/search/main.go (%d go blocks); copy the file into the README", len(blocks))
	}
}

var updateQueries = flag.Bool("update-queries", false, "rewrite examples/glove/queries-100.fvecs")

// TestGloveQueriesFile: the query file the examples use holds the first 100
// embeddings of the GloVe sample, in .fvecs (go test -run
// TestGloveQueriesFile -update-queries rewrites it).
func TestGloveQueriesFile(t *testing.T) {
	const file = "../../examples/glove/queries-100.fvecs"
	qs, err := readQueries(gloveSample, "embedding")
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) < 100 {
		t.Fatalf("the sample has %d rows", len(qs))
	}
	var want []byte
	for _, q := range qs[:100] {
		want = binary.LittleEndian.AppendUint32(want, uint32(len(q)))
		for _, x := range q {
			want = binary.LittleEndian.AppendUint32(want, math.Float32bits(x))
		}
	}
	if *updateQueries {
		if err := os.WriteFile(file, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not the first 100 embeddings of %s; rerun with -update-queries", file, gloveSample)
	}
}
