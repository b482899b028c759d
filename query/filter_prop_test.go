package query_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parqdb/parqdb/filter"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/query"
)

// tri is SQL's three-valued truth in the test's own evaluator: nil is
// unknown.
type tri = *bool

func tv(b bool) tri { return &b }

func not3(a tri) tri {
	if a == nil {
		return nil
	}
	return tv(!*a)
}

func and3(a, b tri) tri {
	switch {
	case a != nil && !*a, b != nil && !*b:
		return tv(false)
	case a != nil && b != nil:
		return tv(true)
	}
	return nil
}

func or3(a, b tri) tri { return not3(and3(not3(a), not3(b))) }

// randPred returns a random predicate as text and as a Go evaluator.
func randPred(r *rand.Rand, depth int) (string, func(attrRow) tri) {
	if depth > 0 && r.IntN(3) > 0 {
		l, lf := randPred(r, depth-1)
		rt, rf := randPred(r, depth-1)
		switch r.IntN(3) {
		case 0:
			return "(" + l + " AND " + rt + ")", func(x attrRow) tri { return and3(lf(x), rf(x)) }
		case 1:
			return "(" + l + " OR " + rt + ")", func(x attrRow) tri { return or3(lf(x), rf(x)) }
		default:
			return "NOT (" + l + ")", func(x attrRow) tri { return not3(lf(x)) }
		}
	}
	ops := []string{"=", "!=", "<", "<=", ">", ">="}
	cmp := func(op string, c int) bool {
		switch op {
		case "=":
			return c == 0
		case "!=":
			return c != 0
		case "<":
			return c < 0
		case "<=":
			return c <= 0
		case ">":
			return c > 0
		}
		return c >= 0
	}
	sign := func(a, b float64) int {
		switch {
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	}
	switch r.IntN(7) {
	case 0:
		op, v := ops[r.IntN(6)], r.IntN(1000)
		return fmt.Sprintf("bucket %s %d", op, v), func(x attrRow) tri { return tv(cmp(op, sign(float64(x.Bucket), float64(v)))) }
	case 1:
		op, v := ops[r.IntN(6)], float64(r.IntN(10000))/100
		return fmt.Sprintf("price %s %v", op, v), func(x attrRow) tri {
			if x.Price == nil {
				return nil
			}
			return tv(cmp(op, sign(*x.Price, v)))
		}
	case 2:
		set := []string{"a", "b", "c", "d"}[:1+r.IntN(3)]
		neg := r.IntN(2) == 0
		kw := "IN"
		if neg {
			kw = "NOT IN"
		}
		return fmt.Sprintf("cat %s ('%s')", kw, strings.Join(set, "', '")), func(x attrRow) tri {
			if x.Cat == nil {
				return nil
			}
			in := false
			for _, s := range set {
				in = in || *x.Cat == s
			}
			return tv(in != neg)
		}
	case 3:
		neg := r.IntN(2) == 0
		kw := "IS NULL"
		if neg {
			kw = "IS NOT NULL"
		}
		return "price " + kw, func(x attrRow) tri { return tv((x.Price == nil) != neg) }
	case 4:
		lo := r.IntN(6000)
		hi := lo + r.IntN(3000)
		return fmt.Sprintf("id BETWEEN %d AND %d", lo, hi), func(x attrRow) tri { return tv(x.ID >= int64(lo) && x.ID <= int64(hi)) }
	case 5:
		p := []string{"a", "b", "c", ""}[r.IntN(4)]
		return fmt.Sprintf("cat LIKE '%s%%'", p), func(x attrRow) tri {
			if x.Cat == nil {
				return nil
			}
			return tv(strings.HasPrefix(*x.Cat, p))
		}
	default:
		v := r.IntN(2)
		return fmt.Sprintf("side = %d", v), func(x attrRow) tri { return tv(x.Side == int32(v)) }
	}
}

// TestFilteredRandomPredicates is the property test: on a seeded table
// and random predicates, the matching rows equal the test's own
// three-valued evaluation; with every list probed the answer equals the
// exact filtered answer, also once the index knows which lists hold no
// match; at a low nprobe no hit fails the predicate and never fewer than
// min(k, matches) rows come back.
func TestFilteredRandomPredicates(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join(dir, "attr.parquet")
	rows := attrRows(3000, 8)
	writeAttr(t, src, rows)
	benv, env := localEnv(t)
	buildIndex(t, benv, src, metadata.EncodingSource, 30)
	ix, err := query.Open(ctx, env, "vecs", query.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	qs := filterQueries(rows, 8)
	r := rand.New(rand.NewPCG(42, 1))
	for i := 0; i < 60; i++ {
		where, eval := randPred(r, 3)
		p, err := filter.Parse(where)
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		match := map[int64]bool{}
		for _, x := range rows {
			if v := eval(x); v != nil && *v {
				match[x.ID] = true
			}
		}
		info, err := ix.Filter(ctx, p)
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		if info.Rows != int64(len(match)) {
			t.Fatalf("%s: %d rows match, the test's evaluation says %d", where, info.Rows, len(match))
		}
		truth, err := ix.ExactFilteredBatch(ctx, qs, 10, 0, p)
		if err != nil {
			t.Fatal(err)
		}
		// nprobe 1 and 4 route among the lists that may hold matches; the
		// first all-lists pass learns which lists hold none, the second
		// routes past them: both must give the exact filtered answer.
		for _, np := range []int{1, 4, 30, 30} {
			res, err := ix.SearchBatch(ctx, qs, query.Options{K: 10, NProbe: np, KeysOnly: true, Filter: p}, 0)
			if err != nil {
				t.Fatal(err)
			}
			for qi, rs := range res {
				if len(rs.Hits) != min(10, len(match)) {
					t.Fatalf("%s nprobe %d query %d: %d hits, %d rows match", where, np, qi, len(rs.Hits), len(match))
				}
				for hi, h := range rs.Hits {
					if !match[h.Row["id"].(int64)] {
						t.Fatalf("%s nprobe %d: hit id %v does not match", where, np, h.Row["id"])
					}
					if np == 30 && (string(h.Key) != string(truth[qi][hi].Key) || h.Distance != truth[qi][hi].Distance) {
						t.Fatalf("%s all lists query %d hit %d differs from the exact filtered answer", where, qi, hi)
					}
				}
			}
		}
	}
}

// TestExactPlanCodes checks the exact plan's LVQ8 first pass: with 128 to
// 256 matching rows (the exact plan, scored from codes first) on an LVQ8
// and a source-encoded index, every answer
// equals the exact filtered one (keys and distances, in order), while
// fewer rows than match are scored exactly.
func TestExactPlanCodes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join(dir, "attr.parquet")
	rows := attrRows(3000, 24)
	writeAttr(t, src, rows)
	for _, enc := range []string{metadata.EncodingLVQ8, metadata.EncodingSource} {
		t.Run(enc, func(t *testing.T) {
			benv, env := localEnv(t)
			buildIndex(t, benv, src, enc, 30)
			ix, err := query.Open(ctx, env, "vecs", query.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			qs := filterQueries(rows, 20)
			for _, where := range []string{"id < 200", "id BETWEEN 1000 AND 1139 OR id > 2900"} {
				p, err := filter.Parse(where)
				if err != nil {
					t.Fatal(err)
				}
				truth, err := ix.ExactFilteredBatch(ctx, qs, 10, 0, p)
				if err != nil {
					t.Fatal(err)
				}
				res, err := ix.SearchBatch(ctx, qs, query.Options{K: 10, NProbe: 2, KeysOnly: true, Filter: p}, 0)
				if err != nil {
					t.Fatal(err)
				}
				var scored, cands int64
				for qi, rs := range res {
					if rs.Stats.FilterExact == 0 {
						t.Fatalf("%s: query %d did not take the exact plan", where, qi)
					}
					if len(rs.Hits) != 10 {
						t.Fatalf("%s query %d: %d hits", where, qi, len(rs.Hits))
					}
					for hi, h := range rs.Hits {
						if string(h.Key) != string(truth[qi][hi].Key) || h.Distance != truth[qi][hi].Distance {
							t.Fatalf("%s query %d hit %d: key %x distance %v, want %x %v", where, qi, hi, h.Key, h.Distance, truth[qi][hi].Key, truth[qi][hi].Distance)
						}
					}
					scored += rs.Stats.Refined
					cands += rs.Stats.Candidates
				}
				t.Logf("%s: %d of %d rows scored exactly", where, scored, cands)
				if scored >= cands || scored == 0 {
					t.Errorf("%s: %d of %d rows scored exactly; the codes should leave fewer", where, scored, cands)
				}
			}
		})
	}
}
