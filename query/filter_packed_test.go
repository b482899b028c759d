package query_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/parqdb/parqdb/filter"
	"github.com/parqdb/parqdb/internal/membudget"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/query"
)

// TestPackedLists checks the list plan's packed per-predicate lists on an
// LVQ8 index: with packing off (a bound of 0 bytes), on its first use
// (packing as it probes), warm (scoring the packed lists only) and under a
// bound that packs only some lists (the others scored from the postings),
// every search returns the same hits — keys and distances, in order — with
// the same lists probed and rows scored and rejected, for predicates of
// several selectivities, one correlated with the vectors. The queries run
// one at a time, in the same order, since the list plan learns which lists
// hold matches as it probes. With every list probed and refine, the
// answer is the exact filtered one, also with the queries run
// concurrently while the lists are packed. The packed bytes stay within
// the bound and are charged to the filter cache's account.
func TestPackedLists(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join(dir, "attr.parquet")
	rows := attrRows(6000, 16)
	writeAttr(t, src, rows)
	qs := filterQueries(rows, 60)
	const nlist, k = 60, 10
	benv, env := localEnv(t)
	buildIndex(t, benv, src, metadata.EncodingLVQ8, nlist)
	defer query.SetMaxPackedBytes(query.SetMaxPackedBytes(0))

	// open opens the index and checks p's matching rows against the Go
	// evaluation (matches).
	open := func(t *testing.T, p *filter.Predicate, b *membudget.Budget) *query.Index {
		t.Helper()
		ix, err := query.Open(ctx, env, "vecs", query.OpenOptions{Budget: b})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		info, err := ix.Filter(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		var want int64
		for _, r := range rows {
			if matches(p.Text(), r) {
				want++
			}
		}
		if info.Rows != want {
			t.Fatalf("%s: %d rows match, Go says %d", p.Text(), info.Rows, want)
		}
		return ix
	}
	search := func(t *testing.T, ix *query.Index, opts query.Options, workers int) []*query.Result {
		t.Helper()
		res, err := ix.SearchBatch(ctx, qs, opts, workers)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	same := func(t *testing.T, what string, got, want []*query.Result) {
		t.Helper()
		for qi := range want {
			g, w := got[qi], want[qi]
			if len(g.Hits) != len(w.Hits) {
				t.Fatalf("%s query %d: %d hits, want %d", what, qi, len(g.Hits), len(w.Hits))
			}
			for i := range w.Hits {
				if !bytes.Equal(g.Hits[i].Key, w.Hits[i].Key) || g.Hits[i].Distance != w.Hits[i].Distance {
					t.Fatalf("%s query %d hit %d: %x %v, want %x %v", what, qi, i, g.Hits[i].Key, g.Hits[i].Distance, w.Hits[i].Key, w.Hits[i].Distance)
				}
			}
			if g.Stats.Candidates != w.Stats.Candidates || g.Stats.FilterRejected != w.Stats.FilterRejected || g.Stats.Lists != w.Stats.Lists {
				t.Fatalf("%s query %d: %d candidates, %d rejected, %d lists; want %d, %d, %d", what, qi,
					g.Stats.Candidates, g.Stats.FilterRejected, g.Stats.Lists, w.Stats.Candidates, w.Stats.FilterRejected, w.Stats.Lists)
			}
		}
	}

	for _, where := range []string{"bucket < 500", "bucket < 100", "cat IN ('a', 'b') AND price < 50", "side = 1"} {
		t.Run(where, func(t *testing.T) {
			p, err := filter.Parse(where)
			if err != nil {
				t.Fatal(err)
			}
			for _, tc := range []struct {
				name  string
				opts  query.Options
				exact bool // compare with the exact filtered answer too
			}{
				{"nprobe 4", query.Options{K: k, NProbe: 4, NoRows: true, Filter: p}, false},
				{"nprobe 4, refine 3", query.Options{K: k, NProbe: 4, Refine: 3, KeysOnly: true, Filter: p}, false},
				{"every list, refine 20", query.Options{K: k, NProbe: nlist, Refine: 20, NoRows: true, Filter: p}, true},
			} {
				t.Run(tc.name, func(t *testing.T) {
					query.SetMaxPackedBytes(0)
					ix := open(t, p, nil)
					unpacked := search(t, ix, tc.opts, 1)
					unpacked2 := search(t, ix, tc.opts, 1)
					if n, _ := query.PackedLists(ix, p); n != 0 {
						t.Fatalf("%d lists packed under a bound of 0", n)
					}
					var lists int64
					for _, r := range unpacked2 {
						lists += r.Stats.Lists
						if r.Stats.FilterLists != 1 {
							t.Fatalf("the list plan did not run: %+v", r.Stats)
						}
					}
					if tc.exact {
						truth, err := ix.ExactFilteredBatch(ctx, qs, k, 0, p)
						if err != nil {
							t.Fatal(err)
						}
						for qi := range truth {
							if len(truth[qi]) != len(unpacked[qi].Hits) {
								t.Fatalf("query %d: %d hits, exact %d", qi, len(unpacked[qi].Hits), len(truth[qi]))
							}
							for i, h := range truth[qi] {
								if g := unpacked[qi].Hits[i]; !bytes.Equal(g.Key, h.Key) || g.Distance != h.Distance {
									t.Fatalf("query %d hit %d: %x %v, exact %x %v", qi, i, g.Key, g.Distance, h.Key, h.Distance)
								}
							}
						}
					}

					query.SetMaxPackedBytes(64 << 20)
					if tc.exact { // concurrent first use: still the exact answer
						ix := open(t, p, nil)
						for pass := range 2 {
							got := search(t, ix, tc.opts, 4)
							for qi := range got {
								for i, h := range got[qi].Hits {
									if w := unpacked[qi].Hits[i]; !bytes.Equal(h.Key, w.Key) || h.Distance != w.Distance {
										t.Fatalf("concurrent pass %d query %d hit %d: %x %v, want %x %v", pass, qi, i, h.Key, h.Distance, w.Key, w.Distance)
									}
								}
							}
						}
					}
					b := membudget.New(1 << 30)
					ix = open(t, p, b)
					same(t, "first use", search(t, ix, tc.opts, 1), unpacked)
					n, size := query.PackedLists(ix, p)
					if n == 0 || size <= 0 {
						t.Fatalf("no list packed after %d lists probed (%d bytes)", lists, size)
					}
					if got := statsOf(b.Stats(), "filters").Bytes; got < size {
						t.Fatalf("filter cache charged %d bytes, the packed lists hold %d", got, size)
					}
					warm := search(t, ix, tc.opts, 1)
					same(t, "warm", warm, unpacked2)
					var cached int64
					for _, r := range warm {
						cached += r.Stats.CachedLists
					}
					if cached != lists {
						t.Fatalf("warm: %d of %d lists served from the caches", cached, lists)
					}

					// A bound that holds about a third of the packed lists:
					// the rest fall back to scoring from the postings.
					bound := size / int64(n) * int64(max(n/3, 1))
					query.SetMaxPackedBytes(bound)
					ix = open(t, p, nil)
					for pass, want := range [][]*query.Result{unpacked, unpacked2} {
						same(t, "bounded", search(t, ix, tc.opts, 1), want)
						m, msize := query.PackedLists(ix, p)
						if m == 0 || m >= n || msize > bound {
							t.Fatalf("pass %d under a bound of %d bytes: %d lists packed (%d bytes), %d without the bound", pass, bound, m, msize, n)
						}
					}
				})
			}
		})
	}
}
