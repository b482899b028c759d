package query_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/query"
)

// TestSearchBatchEqualsSearch checks that SearchBatch's list-major scan
// returns, for every query, exactly Search's result (keys, distances, row
// values and stats), on each encoding, metric and kernel layout (D 24:
// blocked LVQ8 codes; D 150: row-major), with and without refine, with
// duplicate vectors (ties broken by key) and for any number of workers.
func TestSearchBatchEqualsSearch(t *testing.T) {
	ctx := context.Background()
	query.SetListMajor(true) // these indexes are small: force it
	defer query.ResetListMajor()
	for _, d := range []int{24, 150} {
		rows := synthRows(5, 0, 1500, d)
		for i := range 60 { // exact duplicates: ties at every rank
			r := rows[i*7]
			r.ID, r.Label = int64(len(rows)), fmt.Sprintf("dup-%d", i)
			rows = append(rows, r)
		}
		src := filepath.Join(t.TempDir(), "synth.parquet")
		writeSynth(t, src, rows)
		qs := make([][]float32, 130)
		for i := range qs {
			q := append([]float32(nil), rows[i*11].Vec...)
			if i%3 != 0 { // every third query is a row itself
				for j := range q {
					q[j] += 0.4 * float32(math.Cos(float64(i+3*j)))
				}
			}
			qs[i] = q
		}
		for _, metric := range []string{metadata.MetricL2Squared, metadata.MetricCosine} {
			for _, enc := range []string{metadata.EncodingLVQ8, metadata.EncodingSource, metadata.EncodingLVQ4} {
				t.Run(fmt.Sprintf("d=%d/%s/%s", d, metric, enc), func(t *testing.T) {
					benv, env := localEnv(t)
					_, err := indexer.Create(ctx, benv, indexer.Options{
						Name: "vecs", Source: src, VectorField: "vec", KeyFields: []string{"id"},
						Encoding: enc, Metric: metric, NList: 40, Seed: 3,
					})
					if err != nil {
						t.Fatal(err)
					}
					ix, err := query.Open(ctx, env, "vecs", query.OpenOptions{})
					if err != nil {
						t.Fatal(err)
					}
					defer ix.Close()
					for _, o := range []query.Options{
						{K: 10, NProbe: 4},
						{K: 1, NProbe: 1, NoRows: true},
						{K: 10, NProbe: 6, Refine: 3, NoRows: true},
						{K: 25, NProbe: 40, Refine: 2, KeysOnly: true},
					} {
						want := make([]*query.Result, len(qs))
						for range 2 { // the second pass warm, as SearchBatch's are
							for i, q := range qs {
								if want[i], err = ix.Search(ctx, q, o); err != nil {
									t.Fatal(err)
								}
							}
						}
						for _, workers := range []int{1, 2, 3} {
							got, err := ix.SearchBatch(ctx, qs, o, workers)
							if err != nil {
								t.Fatal(err)
							}
							for i := range qs {
								if msg := sameResult(got[i], want[i]); msg != "" {
									t.Fatalf("%+v, %d workers, query %d: %s", o, workers, i, msg)
								}
							}
							// SearchBatchFunc hands each query's result to each once
							var mu sync.Mutex
							seen := make([]*query.Result, len(qs))
							calls := 0
							got, err = ix.SearchBatchFunc(ctx, qs, o, workers, func(i int, r *query.Result) {
								mu.Lock()
								defer mu.Unlock()
								calls++
								if seen[i] != nil {
									t.Errorf("query %d handed over twice", i)
								}
								seen[i] = r
							})
							if err != nil {
								t.Fatal(err)
							}
							if calls != len(qs) {
								t.Fatalf("%+v, %d workers: each called %d times for %d queries", o, workers, calls, len(qs))
							}
							for i := range qs {
								if seen[i] != got[i] {
									t.Fatalf("%+v, %d workers, query %d: each got another result than returned", o, workers, i)
								}
								if msg := sameResult(got[i], want[i]); msg != "" {
									t.Fatalf("SearchBatchFunc %+v, %d workers, query %d: %s", o, workers, i, msg)
								}
							}
						}
					}
				})
			}
		}
	}
}

// sameResult describes how a differs from b ("" when equal).
func sameResult(a, b *query.Result) string {
	if len(a.Hits) != len(b.Hits) {
		return fmt.Sprintf("%d hits, Search %d", len(a.Hits), len(b.Hits))
	}
	for i := range a.Hits {
		x, y := a.Hits[i], b.Hits[i]
		if !bytes.Equal(x.Key, y.Key) || x.Distance != y.Distance || fmt.Sprint(x.Row) != fmt.Sprint(y.Row) {
			return fmt.Sprintf("hit %d: %x %v %v, Search %x %v %v", i, x.Key, x.Distance, x.Row, y.Key, y.Distance, y.Row)
		}
	}
	// ExactScored depends on the order the lists are scanned in (the
	// admission bound when each row is reached), which list-major changes.
	sa, sb := a.Stats, b.Stats
	sa.ExactScored, sb.ExactScored = 0, 0
	if sa != sb {
		return fmt.Sprintf("stats %+v, Search %+v", a.Stats, b.Stats)
	}
	if a.Stats.ExactScored > a.Stats.Candidates {
		return fmt.Sprintf("stats %+v: more rows scored exactly than scanned", a.Stats)
	}
	return ""
}

// TestSearchBatchBadQuery checks that a bad query anywhere in a batch
// fails the batch with an error naming its position.
func TestSearchBatchBadQuery(t *testing.T) {
	ctx := context.Background()
	rows := synthRows(5, 0, 400, 16)
	src := filepath.Join(t.TempDir(), "synth.parquet")
	writeSynth(t, src, rows)
	benv, env := localEnv(t)
	buildIndex(t, benv, src, metadata.EncodingLVQ8, 10)
	ix, err := query.Open(ctx, env, "vecs", query.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	qs := make([][]float32, 50)
	for i := range qs {
		qs[i] = rows[i].Vec
	}
	qs[37] = append([]float32(nil), qs[37]...)
	qs[37][5] = float32(math.NaN())
	_, err = ix.SearchBatch(ctx, qs, query.Options{K: 5, NProbe: 2}, 2)
	if err == nil || !strings.Contains(err.Error(), "query 37:") || !strings.Contains(err.Error(), "query value 5 is NaN") {
		t.Fatalf("err = %v, want query 37's NaN", err)
	}
	qs[37] = qs[36][:15]
	if _, err = ix.SearchBatch(ctx, qs, query.Options{K: 5, NProbe: 2}, 1); err == nil || !strings.Contains(err.Error(), "query 37: ") {
		t.Fatalf("err = %v, want query 37's dimension", err)
	}
	if _, err = ix.SearchBatch(ctx, qs[:3], query.Options{K: 5, NProbe: -1}, 1); err == nil || !strings.Contains(err.Error(), "query 0: ") {
		t.Fatalf("err = %v, want query 0's options", err)
	}
}
