package reliability_test

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/parqdb/parqdb/metadata"
)

// straceOpen matches the path of an open, openat or openat2 call in
// `strace -y` output: open("p", …), openat(AT_FDCWD, "p", …) or
// openat(5</dir>, "p", …).
var straceOpen = regexp.MustCompile(`\b(?:open|openat|openat2)\((?:(AT_FDCWD|\d+)(?:<([^>]*)>)?, )?"((?:[^"\\]|\\.)*)"`)

// systemPaths are what the Go runtime, the dynamic loader and the C
// library of SQLite open in every run; nothing ParqDB decides.
var systemPaths = []string{"/proc/", "/sys/", "/dev/", "/etc/ld.so.cache", "/lib/", "/lib64/", "/usr/lib/",
	"/etc/localtime", "/usr/share/zoneinfo/"}

// outsideOpens returns every path in an strace log that is not under one
// of allowed (nor a system path), and every connect call.
func outsideOpens(log []byte, cwd string, allowed []string) (paths, connects []string) {
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, "connect(") {
			connects = append(connects, line)
			continue
		}
		m := straceOpen.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		p := m[3]
		if !filepath.IsAbs(p) {
			dir := m[2]
			if dir == "" {
				dir = cwd
			}
			p = filepath.Join(dir, p)
		}
		ok := false
		for _, a := range append(append([]string{}, systemPaths...), allowed...) {
			if p == strings.TrimSuffix(a, "/") || strings.HasPrefix(p, a) {
				ok = true
				break
			}
		}
		if !ok {
			paths = append(paths, p)
		}
	}
	return paths, connects
}

// recorder is a TCP listener that counts connections (and closes them).
type recorder struct {
	l net.Listener
	n atomic.Int64
}

func newRecorder(t *testing.T) *recorder {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{l: l}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			r.n.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { l.Close() })
	return r
}

func (r *recorder) url() string { return "http://" + r.l.Addr().String() }

// TestOutsideOpenGuard is issue 10 defect 4's harness: with the metadata's
// source location pointed (in place, as an attacker with write access to
// the warehouse would) at a file or folder outside the warehouse, at
// /etc/passwd or at another bucket, every command runs under strace, and
// none may open a file outside the warehouse, the bound source and its own
// inputs, nor connect anywhere: the S3 endpoint and the cloud metadata
// address are pointed at local listeners that must see no connection.
// Commands that open the index refuse ("catalog source binding does not
// match"). A second set tampers only the older snapshot of a refreshed
// index and opens that snapshot.
func TestOutsideOpenGuard(t *testing.T) {
	if _, err := exec.LookPath("strace"); err != nil {
		t.Fatalf("strace is required (apt-get install strace): %v", err)
	}
	parqdbBinary(t)
	dir := t.TempDir()
	src := newSource(t)
	inputs := filepath.Join(dir, "inputs")
	if err := os.MkdirAll(inputs, 0o755); err != nil {
		t.Fatal(err)
	}
	_, vecs := partVectors(0, 4, 1)
	queries := filepath.Join(inputs, "queries.fvecs")
	writeFvecs(t, queries, vecs)

	// Outside: a valid Parquet source nobody bound, so that reading it
	// would succeed.
	outside := filepath.Join(dir, "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writePart(filepath.Join(outside, "secret.parquet"), 0, 600, 1); err != nil {
		t.Fatal(err)
	}

	pristine := filepath.Join(dir, "pristine")
	for _, args := range [][]string{
		{"index", "create", "v", "--source", src + "/", "--vector-field", "embedding", "--key-fields", "id", "--nlist", "8", "-q"},
		{"index", "refresh", "v", "-q"},
	} {
		if args[1] == "refresh" {
			if err := writePart(filepath.Join(src, "p000001.parquet"), 600, 30, 2); err != nil {
				t.Fatal(err)
			}
		}
		if r := runParqdb(t, nil, nil, append([]string{"--warehouse", pristine}, args...)...); r.code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, r.code, r.output())
		}
	}
	var metaRel string
	filepath.WalkDir(filepath.Join(pristine, "metadata"), func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".metadata.json") && strings.Contains(filepath.Base(p), "00000000000000000002-") {
			metaRel, _ = filepath.Rel(pristine, p)
		}
		return err
	})
	if metaRel == "" {
		t.Fatal("no metadata file of sequence 2 after refresh")
	}
	pristineMeta, err := os.ReadFile(filepath.Join(pristine, metaRel))
	if err != nil {
		t.Fatal(err)
	}
	m, err := metadata.ParseFile(metaRel, pristineMeta)
	if err != nil {
		t.Fatal(err)
	}
	bound := m.CurrentSnapshot().SourceTable.Properties["location"]
	first := m.Snapshots[0].SnapshotID

	s3 := newRecorder(t)
	imds := newRecorder(t)
	// The commands' temporary folder: builds spill there and gc looks there
	// for the spill folders of killed builds (docs/build.md), so it is the
	// one folder outside the warehouse and the source they may open.
	tmp := t.TempDir()
	env := []string{"AWS_ENDPOINT_URL_S3=" + s3.url(), "AWS_ENDPOINT_URL=" + s3.url(),
		"AWS_EC2_METADATA_SERVICE_ENDPOINT=" + imds.url(), "AWS_ACCESS_KEY_ID=guard", "AWS_SECRET_ACCESS_KEY=guard", "AWS_REGION=us-east-1",
		"TMPDIR=" + tmp}

	type variant struct {
		name, target string
		olderOnly    bool
	}
	variants := []variant{
		{"outside file", filepath.Join(outside, "secret.parquet"), false},
		{"outside folder", outside + "/", false},
		{"/etc/passwd", "/etc/passwd", false},
		{"other bucket", "s3://other-bucket/prefix/", false},
		{"older snapshot, outside file", filepath.Join(outside, "secret.parquet"), true},
		{"older snapshot, other bucket", "s3://other-bucket/prefix/", true},
	}
	strace := func(t *testing.T, args []string) (cliResult, []byte) {
		trace := filepath.Join(t.TempDir(), "strace.log")
		r := runParqdb(t, env, []string{"strace", "-f", "-qq", "-y", "-s", "4096", "-o", trace,
			"-e", "trace=open,openat,openat2,connect"}, args...)
		log, err := os.ReadFile(trace)
		if err != nil {
			t.Fatal(err)
		}
		return r, log
	}
	cwd, _ := os.Getwd()
	allowed := []string{src + "/", inputs + "/", parqdbBinary(t), cliDir + "/", tmp + "/"}

	// The guard sees what it must: on the untampered warehouse, a search
	// opens the bound source, and with the source not allowed that open
	// is reported.
	r, log := strace(t, []string{"--warehouse", pristine, "search", "v", "--near-key", "7", "-k", "3"})
	if r.code != 0 {
		t.Fatalf("search on the untampered warehouse: exit %d\n%s", r.code, r.output())
	}
	if paths, _ := outsideOpens(log, cwd, []string{pristine + "/", inputs + "/", parqdbBinary(t)}); len(paths) == 0 ||
		!strings.HasPrefix(paths[0], src) {
		t.Fatalf("the guard does not see the search open its source %s: %v", src, paths)
	}

	runs, failures := 0, 0
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			wh := filepath.Join(t.TempDir(), "wh")
			copyTree(t, pristine, wh)
			n := -1
			if v.olderOnly {
				n = 1
			}
			tampered := bytes.Replace(pristineMeta, []byte(`"location": "`+bound+`"`), []byte(`"location": "`+v.target+`"`), n)
			tm, err := metadata.ParseFile(metaRel, tampered)
			if err != nil {
				t.Fatalf("tampered metadata does not parse: %v", err)
			}
			old, _ := tm.Snapshot(first)
			if got := old.SourceTable.Properties["location"]; got != v.target {
				t.Fatalf("snapshot %d source location %q after tampering, want %q", first, got, v.target)
			}
			if cur := tm.CurrentSnapshot().SourceTable.Properties["location"]; v.olderOnly != (cur == bound) {
				t.Fatalf("current snapshot's source location %q after tampering", cur)
			}
			if err := os.WriteFile(filepath.Join(wh, metaRel), tampered, 0o644); err != nil {
				t.Fatal(err)
			}
			cmds := matrixCommands
			if v.olderOnly {
				snap := fmt.Sprint(first)
				cmds = []matrixCommand{
					{name: "search --snapshot", args: indexArgs("search", "v", "--near-key", "7", "--snapshot", snap)},
					{name: "index verify --snapshot", args: indexArgs("index", "verify", "v", "-q", "--snapshot", snap)},
					{name: "bench --snapshot", args: func(wh, _, q string) []string {
						return []string{"--warehouse", wh, "bench", "v", "--queries", q, "-k", "3", "--nprobe", "1", "--cold-queries", "1", "--threads", "1", "--snapshot", snap}
					}},
				}
			}
			for _, c := range cmds {
				runs++
				r, log := strace(t, c.args(wh, filepath.Join(wh, metaRel), queries))
				paths, connects := outsideOpens(log, cwd, append([]string{wh + "/"}, allowed...))
				var problems []string
				if r.panicked() || (r.code != 0 && r.code != 1) {
					problems = append(problems, fmt.Sprintf("exit %d", r.code))
				}
				if len(paths) > 0 {
					problems = append(problems, fmt.Sprintf("opened outside the warehouse and the bound source: %v", paths))
				}
				if len(connects) > 0 {
					problems = append(problems, fmt.Sprintf("connected: %v", connects))
				}
				if strings.Contains(r.output(), "secret.parquet") && !strings.Contains(r.output(), "catalog") {
					problems = append(problems, "names the unbound file without the binding error")
				}
				if len(problems) > 0 {
					failures++
					t.Errorf("%s: %s\n%s", c.name, strings.Join(problems, "; "), tail(r.output(), 1500))
				}
			}
			if n := s3.n.Load() + imds.n.Load(); n > 0 {
				t.Errorf("%d connections to the S3 or cloud metadata endpoint", n)
			}
		})
	}
	t.Logf("outside-open guard: %d tampered warehouses, %d command runs under strace, %d failures", len(variants), runs, failures)
}
