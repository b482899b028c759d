package knnjoin_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/internal/testenv"
	"github.com/parqdb/parqdb/internal/testfix"
	"github.com/parqdb/parqdb/knnjoin"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/storage"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const glove = "../examples/glove/glove-10k.parquet"

// gloveRow is a row of the GloVe sample.
type gloveRow struct {
	Word      string    `parquet:"word"`
	Rank      int32     `parquet:"rank"`
	Embedding []float32 `parquet:"embedding,list"`
}

// outRow is a row of a join of the GloVe sample with itself.
type outRow struct {
	QueryWord string  `parquet:"query_word"`
	Word      string  `parquet:"word"`
	Distance  float32 `parquet:"_distance"`
	Rank      int32   `parquet:"_rank"`
}

// fixture is index "words" (cosine, LVQ8, nlist 64) over the GloVe sample
// in a local warehouse, and the sample's rows.
type fixture struct {
	env  query.Env
	rows []gloveRow
}

func newFixture(t *testing.T) *fixture { return newFixtureTB(t) }

func newFixtureTB(t testing.TB) *fixture {
	t.Helper()
	ctx := context.Background()
	w := testfix.NewWarehouse(t, filepath.Join(t.TempDir(), "wh"))
	if _, err := indexer.Create(ctx, indexer.Env{Warehouse: w.Bucket, Catalog: w.Catalog}, indexer.Options{
		Name: "words", Source: glove, VectorField: "embedding", KeyFields: []string{"word"},
		Metric: metadata.MetricCosine, NList: 64, Seed: 1,
	}); err != nil {
		t.Fatal(err)
	}
	rows, err := parquet.ReadFile[gloveRow](glove)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{env: query.Env{Warehouse: w.Bucket, Catalog: w.Catalog}, rows: rows}
}

// expected returns, per query word, the rows search gives for the sample's
// own vectors with opts (SearchBatch on workers, as search --queries runs
// it), with self dropping each word's own row from k+1 (or the last of
// them).
func (f *fixture) expected(t *testing.T, opts query.Options, self bool, workers int) map[string][]outRow {
	t.Helper()
	ix, err := query.Open(context.Background(), f.env, "words", query.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	qs := make([][]float32, len(f.rows))
	for i, r := range f.rows {
		qs[i] = r.Embedding
	}
	k := opts.K
	if self {
		opts.K++
	}
	opts.Columns = []string{"word"}
	res, err := ix.SearchBatch(context.Background(), qs, opts, workers)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]outRow{}
	for i, r := range res {
		q := f.rows[i].Word
		var got []outRow
		for _, h := range r.Hits {
			got = append(got, outRow{QueryWord: q, Word: h.Row["word"].(string), Distance: h.Distance})
		}
		if self {
			if j := slices.IndexFunc(got, func(o outRow) bool { return o.Word == q }); j >= 0 {
				got = slices.Delete(got, j, j+1)
			} else if len(got) > k {
				got = got[:k]
			}
		}
		for j := range got {
			got[j].Rank = int32(j + 1)
		}
		out[q] = got
	}
	return out
}

// readOutput reads a committed output with parquet-go (a reader other than
// ParqDB's own source reader): its _SUCCESS and every part it names, by
// query word. It fails the test if a visible file is not in _SUCCESS.
func readOutput(t *testing.T, b storage.Bucket) (*knnjoin.Success, map[string][]outRow) {
	t.Helper()
	ctx := context.Background()
	data, err := storage.ReadAll(ctx, b, knnjoin.SuccessKey)
	if err != nil {
		t.Fatalf("read _SUCCESS: %v", err)
	}
	s, err := knnjoin.ParseSuccess("_SUCCESS", data)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, p := range s.Parts {
		want = append(want, p.Key)
	}
	if got := visible(t, b); !slices.Equal(got, want) {
		t.Fatalf("visible files %q, _SUCCESS names %q", got, want)
	}
	out := map[string][]outRow{}
	var total int64
	for _, p := range s.Parts {
		raw, err := storage.ReadAll(ctx, b, p.Key)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := parquet.Read[outRow](bytes.NewReader(raw), int64(len(raw)))
		if err != nil {
			t.Fatalf("%s: %v", p.Key, err)
		}
		if int64(len(rows)) != p.Rows || int64(len(raw)) != p.Size {
			t.Fatalf("%s: %d rows, %d bytes; _SUCCESS says %d, %d", p.Key, len(rows), len(raw), p.Rows, p.Size)
		}
		total += p.Rows
		for _, r := range rows {
			out[r.QueryWord] = append(out[r.QueryWord], r)
		}
	}
	if total != s.Rows {
		t.Fatalf("parts hold %d rows, _SUCCESS says %d", total, s.Rows)
	}
	if left, _ := b.List(ctx, knnjoin.WorkPrefix); len(left) > 0 {
		t.Fatalf("the work prefix is left after the commit: %v", left)
	}
	return s, out
}

// visible lists the output's files that readers see (no '_' or '.' path
// segment).
func visible(t *testing.T, b storage.Bucket) []string {
	t.Helper()
	infos, err := b.List(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, in := range infos {
		hidden := false
		for _, seg := range strings.Split(in.Key, "/") {
			hidden = hidden || strings.HasPrefix(seg, "_") || strings.HasPrefix(seg, ".")
		}
		if !hidden {
			out = append(out, in.Key)
		}
	}
	return out
}

// compare checks got against want query by query: keys and distances
// equal bit for bit, ranks from 1.
func compare(t *testing.T, got, want map[string][]outRow) {
	t.Helper()
	if len(got) > len(want) {
		t.Fatalf("%d queries in the output, %d expected", len(got), len(want))
	}
	for q, w := range want {
		if !slices.Equal(got[q], w) {
			t.Fatalf("query %q:\n got %v\nwant %v", q, got[q], w)
		}
	}
}

func bucket(t *testing.T, loc string) storage.Bucket {
	t.Helper()
	b, err := storage.Open(context.Background(), loc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gloveOptions(out string) knnjoin.Options {
	return knnjoin.Options{Index: "words", Queries: glove, QueryKey: []string{"word"}, QueryVector: "embedding", K: 10, NProbe: 8, Output: out}
}

// TestJoinEqualsSearch: the join's rows are search's results for the same
// query vectors and options, keys and distances bit for bit, with --self
// dropping exactly each query's own row, refine and a neighbour filter
// included; the list-major scan (a batch of many queries) and small
// batches give the same output.
func TestJoinEqualsSearch(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	cases := []struct {
		name string
		edit func(*knnjoin.Options)
		ro   knnjoin.RunOptions
	}{
		{"k10", func(*knnjoin.Options) {}, knnjoin.RunOptions{}},
		{"self", func(o *knnjoin.Options) { o.Self = true }, knnjoin.RunOptions{}},
		{"self/small batches", func(o *knnjoin.Options) { o.Self = true }, knnjoin.RunOptions{BatchQueries: 333, Workers: 2}},
		{"refine", func(o *knnjoin.Options) { o.K, o.NProbe, o.Refine = 5, 16, 4 }, knnjoin.RunOptions{Workers: 1}},
		// One worker: a filtered SearchBatch on more than one goroutine can
		// differ from run to run on a fresh index (the GloVe query "has",
		// hit 9, at nprobe 8), whatever calls it.
		{"where", func(o *knnjoin.Options) { o.Where = "rank > 5000" }, knnjoin.RunOptions{Workers: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			o := gloveOptions(out)
			c.edit(&o)
			cr, sr, err := knnjoin.Join(ctx, f.env, o, c.ro)
			if err != nil {
				t.Fatal(err)
			}
			opts := query.Options{K: o.K, NProbe: o.NProbe, Refine: o.Refine}
			if o.Where != "" {
				opts.Filter = mustParse(t, o.Where)
			}
			want := f.expected(t, opts, o.Self, c.ro.Workers)
			s, got := readOutput(t, bucket(t, out))
			compare(t, got, want)
			if len(got) != len(f.rows) || s.QueryRows != int64(len(f.rows)) || sr.Queries != int64(len(f.rows)) || cr.Success.Rows != s.Rows {
				t.Fatalf("%d queries in the output, %d query rows in _SUCCESS, %d in the shard; want %d", len(got), s.QueryRows, sr.Queries, len(f.rows))
			}
			if o.Self {
				for q, rows := range got {
					if len(rows) != o.K || slices.ContainsFunc(rows, func(r outRow) bool { return r.Word == q }) {
						t.Fatalf("--self: query %q has %d rows or its own row: %v", q, len(rows), rows)
					}
				}
			}
		})
	}
}

// TestJoinNeighbourBounds: --min-similarity and --max-distance keep
// exactly the neighbours within the bound, nearest first.
func TestJoinNeighbourBounds(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	want := f.expected(t, query.Options{K: 10, NProbe: 8}, true, 0)
	sim, dist := 0.85, 0.15
	for name, edit := range map[string]func(*knnjoin.Options){
		"min-similarity": func(o *knnjoin.Options) { o.MinSimilarity = &sim },
		"max-distance":   func(o *knnjoin.Options) { o.MaxDistance = &dist },
	} {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			o := gloveOptions(out)
			o.Self = true
			edit(&o)
			if _, _, err := knnjoin.Join(ctx, f.env, o, knnjoin.RunOptions{}); err != nil {
				t.Fatal(err)
			}
			_, got := readOutput(t, bucket(t, out))
			bounded := map[string][]outRow{}
			n := 0
			for q, rows := range want {
				for _, r := range rows {
					if float64(r.Distance) <= 1-sim {
						bounded[q] = append(bounded[q], r)
						n++
					}
				}
			}
			if n == 0 || n == len(want)*10 {
				t.Fatalf("the bound keeps %d of %d rows: the test shows nothing", n, len(want)*10)
			}
			compare(t, got, bounded)
		})
	}
}

// TestShardedJoinS3 runs a join of two shards with the query table and
// the output on the S3 test server: a commit before every shard finished
// publishes nothing and names the missing shard, a shard runs twice
// (the rerun replaces the first), the commit publishes the single-process
// join's rows, and rerunning the commit or a shard afterwards is
// reported, not redone.
func TestShardedJoinS3(t *testing.T) {
	srv := testenv.S3(t)
	f := newFixture(t)
	ctx := context.Background()
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
	t.Setenv("AWS_REGION", srv.Region)
	t.Setenv("AWS_ENDPOINT_URL_S3", srv.Endpoint)
	bkt := srv.NewBucket(t)
	src := bucket(t, "s3://"+bkt+"/queries")
	for i, part := range [][]gloveRow{f.rows[:4000], f.rows[4000:]} {
		var buf bytes.Buffer
		if err := parquet.Write(&buf, part, parquet.MaxRowsPerRowGroup(1500)); err != nil {
			t.Fatal(err)
		}
		if err := storage.WriteAll(ctx, src, fmt.Sprintf("part-%d.parquet", i), buf.Bytes()); err != nil {
			t.Fatal(err)
		}
	}
	out := "s3://" + bkt + "/knn"
	o := gloveOptions(out)
	o.Queries, o.Self = "s3://"+bkt+"/queries/", true
	pr, err := knnjoin.MakePlan(ctx, f.env, o, 2)
	if err != nil {
		t.Fatal(err)
	}
	if pr.Location != out+"/"+knnjoin.PlanKey || len(pr.Plan.Shards) != 2 || pr.Plan.Shards[0].Rows+pr.Plan.Shards[1].Rows != int64(len(f.rows)) ||
		pr.Plan.Shards[0].Rows == 0 || pr.Plan.Shards[1].Rows == 0 {
		t.Fatalf("plan at %s with shards %+v", pr.Location, pr.Plan.Shards)
	}
	if _, err := knnjoin.MakePlan(ctx, f.env, o, 2); !errors.Is(err, knnjoin.ErrOutputExists) {
		t.Fatalf("a second plan at the same output: %v, want ErrOutputExists", err)
	}
	ob := bucket(t, out)
	for _, shard := range []int{1, 1} {
		if _, err := knnjoin.RunShard(ctx, f.env, pr.Location, shard, knnjoin.RunOptions{}); err != nil {
			t.Fatal(err)
		}
		_, err := knnjoin.Commit(ctx, pr.Location, nil)
		if !errors.Is(err, knnjoin.ErrIncomplete) || !strings.Contains(err.Error(), "shard(s) [0]") {
			t.Fatalf("commit with shard 0 missing: %v", err)
		}
		if v := visible(t, ob); len(v) > 0 {
			t.Fatalf("visible before the commit: %v", v)
		}
	}
	if _, err := knnjoin.RunShard(ctx, f.env, out, 0, knnjoin.RunOptions{BatchQueries: 1000}); err != nil {
		t.Fatal(err)
	}
	cr, err := knnjoin.Commit(ctx, pr.Location, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, got := readOutput(t, ob)
	if len(s.Parts) != 2 || s.QueryRows != int64(len(f.rows)) {
		t.Fatalf("_SUCCESS %+v: want 2 parts of %d query rows", s, len(f.rows))
	}
	compare(t, got, f.expected(t, query.Options{K: 10, NProbe: 8}, true, 0))
	again, err := knnjoin.Commit(ctx, pr.Location, nil)
	if err != nil || again.Success.PlanID != cr.Success.PlanID {
		t.Fatalf("commit again: %v", err)
	}
	if _, err := knnjoin.RunShard(ctx, f.env, pr.Location, 0, knnjoin.RunOptions{}); !errors.Is(err, knnjoin.ErrStalePlan) {
		t.Fatalf("a shard after the commit: %v, want ErrStalePlan", err)
	}
	if _, _, err := knnjoin.Join(ctx, f.env, o, knnjoin.RunOptions{}); !errors.Is(err, knnjoin.ErrOutputExists) {
		t.Fatalf("a join into a committed output: %v, want ErrOutputExists", err)
	}
}

// cancelAt cancels the join's context at its first progress report of
// the join stage (after the first batch was written to an open part).
type cancelAt struct {
	cancel context.CancelFunc
	adds   int
}

func (c *cancelAt) Start(string, int64)       {}
func (c *cancelAt) End(string, time.Duration) {}
func (c *cancelAt) Warn(string)               {}
func (c *cancelAt) Add(int64) {
	c.adds++
	c.cancel()
}

// TestJoinCancelledLeavesNothing: a join cancelled mid-way returns the
// cancellation and removes the output folder it made (so a shard of it
// finds no plan, and makes no folder either), and a rerun completes.
func TestJoinCancelledLeavesNothing(t *testing.T) {
	f := newFixture(t)
	out := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithCancel(context.Background())
	p := &cancelAt{cancel: cancel}
	_, _, err := knnjoin.Join(ctx, f.env, gloveOptions(out), knnjoin.RunOptions{BatchQueries: 500, Progress: p})
	if !errors.Is(err, context.Canceled) || p.adds == 0 {
		t.Fatalf("cancelled join: %v after %d progress reports", err, p.adds)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the output folder the join made is left: %v", err)
	}
	if _, err := knnjoin.RunShard(context.Background(), f.env, out, 0, knnjoin.RunOptions{}); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a shard of a plan that does not exist: %v", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a shard of a missing plan made the folder: %v", err)
	}
	if _, _, err := knnjoin.Join(context.Background(), f.env, gloveOptions(out), knnjoin.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, got := readOutput(t, bucket(t, out)); len(got) != len(f.rows) {
		t.Fatalf("rerun: %d queries", len(got))
	}
}

// TestJoinRefusesBadOptions: each bad option or output is refused with an
// error naming it, and writes nothing.
func TestJoinRefusesBadOptions(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	dir := t.TempDir()
	taken := filepath.Join(dir, "taken")
	if err := os.MkdirAll(taken, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(taken, "mine.csv"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	one := 1.0
	cases := []struct {
		name string
		edit func(*knnjoin.Options)
		is   error
		text string
	}{
		{"no key", func(o *knnjoin.Options) { o.QueryKey = nil }, knnjoin.ErrOptions, "--query-key"},
		{"unknown key", func(o *knnjoin.Options) { o.QueryKey = []string{"nope"} }, nil, "nope"},
		{"unknown vector", func(o *knnjoin.Options) { o.QueryVector = "nope" }, nil, "nope"},
		{"self over other key types", func(o *knnjoin.Options) { o.QueryKey, o.Self = []string{"rank"}, true }, knnjoin.ErrOptions, "rank int"},
		{"both bounds", func(o *knnjoin.Options) { o.MaxDistance, o.MinSimilarity = &one, &one }, knnjoin.ErrOptions, "not both"},
		{"recall and nprobe", func(o *knnjoin.Options) { o.Recall = 0.9 }, knnjoin.ErrOptions, "recall"},
		{"k", func(o *knnjoin.Options) { o.K = query.MaxK; o.Self = true }, knnjoin.ErrOptions, "k+1"},
		{"where syntax", func(o *knnjoin.Options) { o.Where = "rank >" }, nil, "rank"},
		{"taken output", func(o *knnjoin.Options) { o.Output = taken }, knnjoin.ErrOutputExists, "mine.csv"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := gloveOptions(filepath.Join(dir, "out-"+strings.ReplaceAll(c.name, " ", "-")))
			c.edit(&o)
			_, _, err := knnjoin.Join(ctx, f.env, o, knnjoin.RunOptions{})
			if err == nil || (c.is != nil && !errors.Is(err, c.is)) || !strings.Contains(err.Error(), c.text) {
				t.Fatalf("error %v, want %v naming %q", err, c.is, c.text)
			}
			if o.Output != taken {
				if infos, _ := os.ReadDir(o.Output); len(infos) > 0 {
					t.Fatalf("%d files written into %s", len(infos), o.Output)
				}
			}
		})
	}
	if names, _ := os.ReadDir(taken); len(names) != 1 {
		t.Fatalf("the taken output changed: %v", names)
	}
}
