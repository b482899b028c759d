package knnjoin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/parqdb/parqdb/internal/pqnode"
	"github.com/parqdb/parqdb/internal/source"
	"github.com/parqdb/parqdb/internal/version"
	"github.com/parqdb/parqdb/storage"
)

// Output columns besides the keys.
const (
	DistanceColumn = "_distance"
	RankColumn     = "_rank"
	// QueryPrefix prefixes the query key columns' names.
	QueryPrefix = "query_"
)

// Part file sizing.
const (
	// maxPartRows starts a new part file after this many rows.
	maxPartRows = 16 << 20
	// rowGroupRows is the rows per row group.
	rowGroupRows = 1 << 20
)

// outputSchema is the output's schema: query_<key> for each query key
// field, each index key field under its own name, _distance (FLOAT) and
// _rank (INT32, from 1), all required.
func outputSchema(qkeys, nkeys []source.KeyType) *parquet.Schema {
	var fields []parquet.Field
	for _, k := range qkeys {
		fields = append(fields, pqnode.Field(QueryPrefix+k.Name, keyNode(k)))
	}
	for _, k := range nkeys {
		fields = append(fields, pqnode.Field(k.Name, keyNode(k)))
	}
	fields = append(fields, pqnode.Field(DistanceColumn, parquet.Leaf(parquet.FloatType)), pqnode.Field(RankColumn, parquet.Int(32)))
	return parquet.NewSchema("join", pqnode.Group(fields...))
}

// keyNode is a key field's node in the output: its source type, required,
// Snappy-compressed as the other columns (not the source's codec).
func keyNode(k source.KeyType) parquet.Node {
	return parquet.Compressed(parquet.Required(k.Node), &parquet.Snappy)
}

// partWriter writes one shard attempt's rows as part files of at most
// maxPartRows rows. It is used by one goroutine.
type partWriter struct {
	// ctx is the shard's: a part is created with it, and an S3 upload
	// lives as long as its context.
	ctx     context.Context
	b       storage.Bucket
	shard   int
	attempt string
	schema  *parquet.Schema

	cur     storage.Writer
	pw      *parquet.GenericWriter[any]
	curRows int64

	parts   []Part // finished parts
	queries int64
	rows    []parquet.Row
}

func newPartWriter(ctx context.Context, b storage.Bucket, shard int, attempt string, schema *parquet.Schema) *partWriter {
	return &partWriter{ctx: ctx, b: b, shard: shard, attempt: attempt, schema: schema}
}

// writeBatch writes the rows of a searched batch: per query, its
// neighbours in rank order.
func (w *partWriter) writeBatch(ctx context.Context, r *resolved, b *qbatch) error {
	nk := len(r.ix.KeyTypes())
	w.rows = w.rows[:0]
	// The batch's rows share one array of values.
	var cells []parquet.Value
	for j := range b.vecs {
		nq := len(b.keys[j])
		width := nq + nk + 2
		for rank, h := range r.plan.neighbours(b, j) {
			vals, err := source.DecodeKey(r.ix.KeyTypes(), h.Key)
			if err != nil {
				return fmt.Errorf("query at %s + %d: neighbour key: %w", b.where, j, err)
			}
			if len(cells)+width > cap(cells) {
				cells = make([]parquet.Value, 0, max(64<<10, width))
			}
			row := parquet.Row(cells[len(cells) : len(cells) : len(cells)+width])
			cells = cells[:len(cells)+width]
			for c, v := range b.keys[j] {
				row = append(row, v.ParquetValue().Level(0, 0, c))
			}
			for c, v := range vals {
				row = append(row, v.ParquetValue().Level(0, 0, nq+c))
			}
			row = append(row, parquet.FloatValue(h.Distance).Level(0, 0, nq+nk), parquet.Int32Value(int32(rank+1)).Level(0, 0, nq+nk+1))
			w.rows = append(w.rows, row)
		}
	}
	w.queries += int64(len(b.vecs))
	for rows := w.rows; len(rows) > 0; {
		if err := ctx.Err(); err != nil {
			return err
		}
		if w.pw == nil {
			if err := w.openPart(); err != nil {
				return err
			}
		}
		n := min(len(rows), int(maxPartRows-w.curRows))
		if _, err := w.pw.WriteRows(rows[:n]); err != nil {
			return fmt.Errorf("write %s: %w", partKey(w.shard, w.attempt, len(w.parts)), err)
		}
		w.curRows += int64(n)
		rows = rows[n:]
		if w.curRows >= maxPartRows {
			if err := w.closePart(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (w *partWriter) openPart() error {
	key := partKey(w.shard, w.attempt, len(w.parts))
	sw, err := w.b.Create(w.ctx, key)
	if err != nil {
		return fmt.Errorf("create %s: %w", key, err)
	}
	w.cur, w.curRows = sw, 0
	w.pw = parquet.NewGenericWriter[any](sw, w.schema, parquet.Compression(&parquet.Snappy),
		parquet.MaxRowsPerRowGroup(rowGroupRows), parquet.CreatedBy("parqdb", version.String(), "join"))
	return nil
}

func (w *partWriter) closePart() error {
	key := partKey(w.shard, w.attempt, len(w.parts))
	if err := w.pw.Close(); err != nil {
		return fmt.Errorf("write %s: %w", key, err)
	}
	if err := w.cur.Close(); err != nil {
		return fmt.Errorf("write %s: %w", key, err)
	}
	w.cur = nil
	info, err := w.b.Stat(w.ctx, key)
	if err != nil {
		w.pw = nil
		_ = w.b.Delete(context.WithoutCancel(w.ctx), key)
		return fmt.Errorf("stat %s: %w", key, err)
	}
	w.parts = append(w.parts, Part{Key: key, Size: info.Size, Rows: w.curRows})
	w.cur, w.pw = nil, nil
	return nil
}

// finish closes the last part.
func (w *partWriter) finish() error {
	if w.pw == nil {
		return nil
	}
	return w.closePart()
}

// abort drops the open part and deletes the finished ones.
func (w *partWriter) abort(ctx context.Context) {
	if w.cur != nil {
		_ = w.cur.Abort()
		w.cur, w.pw = nil, nil
	}
	for _, pt := range w.parts {
		_ = w.b.Delete(ctx, pt.Key)
	}
	w.parts = nil
}

// commit publishes p's output (Commit).
func commit(ctx context.Context, b storage.Bucket, p *Plan, prog Progress) (*CommitResult, error) {
	if prog == nil {
		prog = nopProgress{}
	}
	start := time.Now()
	if data, err := storage.ReadAll(ctx, b, SuccessKey); err == nil {
		// A commit of this plan finished but was stopped before it
		// removed the work prefix.
		if s, err := ParseSuccess(p.Output+"/"+SuccessKey, data); err == nil && s.PlanID == p.ID {
			cleanup(ctx, b)
			return &CommitResult{Output: p.Output, Success: s}, nil
		}
		return nil, fmt.Errorf("%w: %s holds another join's %s", ErrOutputExists, p.Output, SuccessKey)
	} else if !errors.Is(err, storage.ErrNotExist) {
		return nil, fmt.Errorf("read %s/%s: %w", p.Output, SuccessKey, err)
	}
	mans := make([]*ShardManifest, len(p.Shards))
	var missing []int
	nparts := 0
	for i := range p.Shards {
		loc := p.Output + "/" + ShardManifestKey(i)
		data, err := storage.ReadAll(ctx, b, ShardManifestKey(i))
		if errors.Is(err, storage.ErrNotExist) {
			missing = append(missing, i)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", loc, err)
		}
		if mans[i], err = ParseShardManifest(loc, data, p, i); err != nil {
			return nil, err
		}
		nparts += len(mans[i].Parts)
	}
	if len(missing) > 0 {
		shown := missing[:min(len(missing), 10)]
		more := ""
		if len(missing) > len(shown) {
			more = fmt.Sprintf(" and %d more", len(missing)-len(shown))
		}
		return nil, fmt.Errorf("%w: %d of the %d shards of %s have not finished: shard(s) %v%s; run them (join-shard), then commit again",
			ErrIncomplete, len(missing), len(p.Shards), PlanLocation(p.Output), shown, more)
	}
	s := &Success{FormatVersion: FormatVersion, PlanID: p.ID, Index: p.Index, SnapshotID: p.SnapshotID, Queries: p.Queries, Parts: []Part{}}
	res := &CommitResult{Output: p.Output, Success: s}
	prog.Start(StagePublish, int64(nparts))
	var published []string
	fail := func(err error) (*CommitResult, error) {
		for _, k := range published {
			_ = b.Delete(context.WithoutCancel(ctx), k)
		}
		return nil, err
	}
	for i, m := range mans {
		s.QueryRows += m.Queries
		for j, pt := range m.Parts {
			dst := publishedKey(i, j)
			if err := publish(ctx, b, pt.Key, dst); err != nil {
				return fail(err)
			}
			published = append(published, dst)
			s.Parts = append(s.Parts, Part{Key: dst, Size: pt.Size, Rows: pt.Rows})
			s.Rows += pt.Rows
			res.Bytes += pt.Size
			prog.Add(1)
		}
	}
	s.CommittedAtMs = time.Now().UnixMilli()
	data, err := marshal(s)
	if err == nil {
		err = storage.WriteAll(ctx, b, SuccessKey, data)
	}
	if err != nil {
		return fail(fmt.Errorf("write %s/%s: %w", p.Output, SuccessKey, err))
	}
	prog.End(StagePublish, time.Since(start))
	cleanup(context.WithoutCancel(ctx), b)
	return res, nil
}

// cleanup removes the work prefix of a committed join, the plan first: a
// commit stopped in the middle then finds no plan and _SUCCESS, and
// reports the join committed.
func cleanup(ctx context.Context, b storage.Bucket) {
	if err := b.Delete(ctx, PlanKey); err != nil {
		return
	}
	removePrefix(ctx, b, WorkPrefix)
}

// publish makes the part at src visible at dst: a hard link in a local
// folder (no copy; atomic), else a copy of its bytes, visible when
// complete (storage.Writer).
func publish(ctx context.Context, b storage.Bucket, src, dst string) error {
	if dir, ok := storage.IsLocal(b); ok {
		to := filepath.Join(dir, filepath.FromSlash(dst))
		if err := os.Remove(to); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("publish %s: %w", to, err)
		}
		if err := os.Link(filepath.Join(dir, filepath.FromSlash(src)), to); err == nil {
			return nil
		}
	}
	o, err := b.Open(ctx, src)
	if err != nil {
		return fmt.Errorf("publish %s: %w", src, err)
	}
	defer o.Close()
	_, err = storage.WriteWith(ctx, b, dst, func(w io.Writer) error {
		_, err := io.Copy(w, io.NewSectionReader(o, 0, o.Size()))
		return err
	})
	return err
}
