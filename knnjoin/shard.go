package knnjoin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/parqdb/parqdb/filter"
	"github.com/parqdb/parqdb/internal/source"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/storage"
)

// Batch sizing (batchQueries).
const (
	minBatchQueries = 256
	maxBatchQueries = 16384
	// batchBudgetShare: the queries in flight (three batches: scanned,
	// searched, written) hold at most 1/batchBudgetShare of the process
	// memory budget.
	batchBudgetShare = 16
)

// batchQueries returns the queries per SearchBatch call for a shard of
// rows queries: as many as fit in the budget share (more queries per call
// share each list scan among more of them), between minBatchQueries and
// maxBatchQueries, and no more than a quarter of the shard's, so that
// reading, searching and writing overlap on a small shard too.
func batchQueries(dim, k int, limit, rows int64) int {
	perQuery := int64(4*dim + 64*k + 256)
	n := min(maxBatchQueries, limit/batchBudgetShare/3/perQuery, (rows+3)/4)
	return int(max(minBatchQueries, n))
}

// searchOptions are the plan's search options.
func searchOptions(p *Plan) (query.Options, error) {
	o := query.Options{K: p.K, NProbe: p.NProbe, Refine: p.Refine, Recall: p.Recall, NoRows: true}
	if p.Self {
		o.K++
	}
	if p.Where != "" {
		pred, err := filter.Parse(p.Where)
		if err != nil {
			return o, fmt.Errorf("%s: %w: where: %w", PlanLocation(p.Output), ErrInvalid, err)
		}
		o.Filter = pred
	}
	return o, nil
}

// qbatch is one batch of query rows on its way through the shard's
// pipeline: scanned, searched, written.
type qbatch struct {
	vecs [][]float32
	keys [][]source.KeyValue // byte values are the batch's own copies
	enc  [][]byte            // the keys' canonical encodings (Self)
	// where names the batch's first row in errors.
	where string
	res   []*query.Result
}

func runShard(ctx context.Context, r *resolved, i int, ro RunOptions) (*ShardResult, error) {
	start := time.Now()
	p := r.plan
	prog := ro.Progress
	if prog == nil {
		prog = nopProgress{}
	}
	if _, err := r.out.Stat(ctx, SuccessKey); err == nil {
		return nil, fmt.Errorf("%w: %s is being committed or was: its shards cannot change", ErrStalePlan, PlanLocation(p.Output))
	}
	opts, err := searchOptions(p)
	if err != nil {
		return nil, err
	}
	view, full, err := openShardTable(ctx, p, i)
	if full != nil {
		defer full.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("shard %d of %s: %w", i, PlanLocation(p.Output), err)
	}
	attempt := fmt.Sprintf("%016x", rand.Uint64())
	sm := &ShardManifest{FormatVersion: FormatVersion, PlanID: p.ID, Shard: i, Attempt: attempt, Parts: []Part{}}
	res := &ShardResult{Shard: i, Manifest: p.Output + "/" + ShardManifestKey(i)}
	var w *partWriter
	if view != nil {
		l, err := view.Check(ctx, queryBinding(p, r.ix))
		if err != nil {
			return nil, fmt.Errorf("shard %d: query table: %w", i, err)
		}
		if err := r.ix.Warm(ctx, opts); err != nil {
			return nil, err
		}
		w = newPartWriter(ctx, r.out, i, attempt, outputSchema(l.Keys, r.ix.KeyTypes()))
		prog.Start(StageJoin, p.Shards[i].Rows)
		n := ro.BatchQueries
		if n <= 0 {
			n = batchQueries(r.ix.Dim(), opts.K, query.DefaultBudget.Limit(), p.Shards[i].Rows)
		}
		err = r.pipeline(ctx, view, l, opts, n, ro.Workers, w, prog)
		if err == nil {
			err = w.finish()
		}
		if err != nil {
			w.abort(context.WithoutCancel(ctx))
			return nil, fmt.Errorf("shard %d of %s: %w", i, PlanLocation(p.Output), err)
		}
		prog.End(StageJoin, time.Since(start))
		sm.Parts, sm.Queries = w.parts, w.queries
		for _, pt := range w.parts {
			sm.Rows += pt.Rows
			res.Bytes += pt.Size
		}
	}
	data, err := marshal(sm)
	if err == nil {
		err = storage.WriteAll(ctx, r.out, ShardManifestKey(i), data)
	}
	if err != nil {
		if w != nil {
			w.abort(context.WithoutCancel(ctx))
		}
		return nil, fmt.Errorf("shard %d: write %s: %w", i, res.Manifest, err)
	}
	// Earlier attempts of this shard are unreachable now; the commit
	// removes them with the work prefix.
	res.Queries, res.Rows, res.Parts, res.Duration = sm.Queries, sm.Rows, len(sm.Parts), time.Since(start)
	return res, nil
}

// openShardTable opens the query table and returns the view of shard i's
// files (nil when the shard has no rows) after checking that they are as
// the plan recorded them, and the whole table, which the caller closes.
func openShardTable(ctx context.Context, p *Plan, i int) (view, full *source.Table, err error) {
	want := p.ShardFiles(i)
	if p.Shards[i].Rows == 0 {
		return nil, nil, nil
	}
	t, canon, err := source.OpenAny(ctx, p.Queries)
	if err != nil {
		return nil, nil, err
	}
	if canon != p.Queries {
		return nil, t, fmt.Errorf("%w: query table %s is now %s", ErrStalePlan, p.Queries, canon)
	}
	have := map[string]source.File{}
	for _, f := range t.Files() {
		have[f.Key] = f
	}
	set := map[string]bool{}
	for _, w := range want {
		f, ok := have[w.Key]
		switch {
		case !ok:
			return nil, t, fmt.Errorf("%w: query file %q of %s was removed after the plan was made; make a new plan", ErrStalePlan, w.Key, p.Queries)
		case f.Size != w.Size || f.Version() != w.Version || f.Rows != w.Rows:
			return nil, t, fmt.Errorf("%w: query file %q of %s was rewritten after the plan was made (size %d, version %s; the plan has %d, %s); make a new plan",
				ErrStalePlan, w.Key, p.Queries, f.Size, f.Version(), w.Size, w.Version)
		}
		set[w.Key] = true
	}
	return t.Select(func(f source.File) bool { return set[f.Key] }), t, nil
}

// pipeline scans the view's query rows into batches of n, searches each
// batch with SearchBatch and writes its rows, the three stages overlapping
// (one batch in each).
func (r *resolved) pipeline(ctx context.Context, view *source.Table, l *source.Layout, opts query.Options, n, workers int, w *partWriter, prog Progress) error {
	g, gctx := errgroup.WithContext(ctx)
	toSearch := make(chan *qbatch, 1)
	toWrite := make(chan *qbatch, 1)
	send := func(c chan<- *qbatch, b *qbatch) error {
		select {
		case c <- b:
			return nil
		case <-gctx.Done():
			return gctx.Err()
		}
	}
	files := view.Files()
	g.Go(func() error {
		defer close(toSearch)
		dim := l.Dim
		var cur *qbatch
		var flat []float32
		err := view.ScanWith(gctx, l, source.ScanOptions{}, func(b *source.Batch) error {
			for j := 0; j < b.N; j++ {
				if cur == nil {
					cur = &qbatch{where: fmt.Sprintf("%s row %d", files[b.File].Key, b.FirstRow+int64(j))}
					flat = make([]float32, 0, n*dim)
				}
				off := len(flat)
				flat = append(flat, b.Vector(j)...)
				cur.vecs = append(cur.vecs, flat[off:off+dim:off+dim])
				key := b.Key(j)
				for k := range key {
					key[k].Bytes = bytes.Clone(key[k].Bytes)
				}
				cur.keys = append(cur.keys, key)
				if r.plan.Self {
					cur.enc = append(cur.enc, source.AppendKey(nil, key))
				}
				if len(cur.vecs) == n {
					if err := send(toSearch, cur); err != nil {
						return err
					}
					cur = nil
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if cur != nil {
			return send(toSearch, cur)
		}
		return nil
	})
	g.Go(func() error {
		defer close(toWrite)
		for b := range toSearch {
			res, err := r.ix.SearchBatch(gctx, b.vecs, opts, workers)
			if err != nil {
				if errors.Is(err, context.Canceled) && gctx.Err() != nil {
					return err
				}
				return fmt.Errorf("the batch of %d queries from %s (query i is the batch's row i): %w", len(b.vecs), b.where, err)
			}
			b.res = res
			if err := send(toWrite, b); err != nil {
				return err
			}
		}
		return nil
	})
	g.Go(func() error {
		for b := range toWrite {
			if err := w.writeBatch(gctx, r, b); err != nil {
				return err
			}
			prog.Add(int64(len(b.vecs)))
		}
		return gctx.Err()
	})
	return g.Wait()
}

// neighbours returns query j's neighbours to write: with Self, its own
// row dropped (or, when it is not among the K+1, the farthest); then those
// within MaxDistance.
func (p *Plan) neighbours(b *qbatch, j int) []query.Hit {
	hits := b.res[j].Hits
	if p.Self {
		self := -1
		for h := range hits {
			if bytes.Equal(hits[h].Key, b.enc[j]) {
				self = h
				break
			}
		}
		if self >= 0 {
			hits = append(hits[:self:self], hits[self+1:]...)
		} else if len(hits) > p.K {
			hits = hits[:p.K]
		}
	}
	if p.MaxDistance != nil {
		// Hits come nearest first.
		n := len(hits)
		for n > 0 && float64(hits[n-1].Distance) > *p.MaxDistance {
			n--
		}
		hits = hits[:n]
	}
	return hits
}
