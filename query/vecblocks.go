package query

import (
	"context"
	"math"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/parqdb/parqdb/internal/membudget"
	"github.com/parqdb/parqdb/vecfile"
)

// vecBlockSize is the unit in which the vectors file is read and cached:
// small, so that a cached candidate costs little memory (a row of D·4
// bytes spans at most two blocks up to D = 1,024), and a multiple of the
// usual page size.
const vecBlockSize = 4 << 10

// vecReadParallel bounds the ranged reads of one gather in flight.
const vecReadParallel = 16

// vecBlockOverhead is charged per cached block on top of its bytes.
const vecBlockOverhead = 64

// vecBlocks caches blocks of an index's vectors file, by block number,
// under the process budget (account "vectors file"): a membudget cache.
// It is safe for concurrent use; blocks are immutable once stored.
type vecBlocks struct {
	off bool // caching disabled (OpenOptions.VectorCacheBytes < 0)
	c   *membudget.Cache[int64, []byte]
}

func newVecBlocks(b *membudget.Budget, off bool) *vecBlocks {
	c := &vecBlocks{off: off}
	if !off {
		c.c = membudget.NewCache[int64, []byte](membudget.CacheConfig{Name: "vectors file", Budget: b, MaxBytes: math.MaxInt64})
	}
	return c
}

func (c *vecBlocks) get(id int64) []byte {
	d, _ := c.c.Lookup(id)
	return d
}

// put stores data as block id if the budget has room (it is used by the
// caller either way).
func (c *vecBlocks) put(id int64, data []byte) { c.c.Put(id, data, int64(len(data))+vecBlockOverhead) }

func (c *vecBlocks) close() { c.c.Close() }

// gather calls put(j, bytes) with the D·4 bytes of row pos[j] of f, for
// every j, from cached blocks, reading the missing ones (runs of adjacent
// blocks in one ranged read each) and caching them. The bytes are valid
// during the call only. With put nil it only reads and caches the missing
// blocks (a prefetch). The ranged reads it issues (one per run of missing
// blocks) and their bytes are added to st's VectorFileRequests and
// VectorFileBytes when st is not nil.
func (c *vecBlocks) gather(ctx context.Context, f *vecfile.File, pos []int64, put func(j int, row []byte), st *Stats) error {
	rb := int64(f.Dim) * 4
	size := f.DataSize()
	// Blocks of each row, found or missing.
	have := map[int64][]byte{}
	var missing []int64
	var hits, misses int64
	for _, p := range pos {
		for b := p * rb / vecBlockSize; b <= ((p+1)*rb-1)/vecBlockSize; b++ {
			if _, ok := have[b]; ok {
				continue
			}
			if d := c.get(b); d != nil {
				have[b] = d
				hits++
			} else {
				have[b] = nil
				missing = append(missing, b)
				misses++
			}
		}
	}
	c.c.Count(hits, misses)
	slices.Sort(missing)
	// Runs of adjacent blocks, each one ranged read, issued in parallel:
	// on a disk or S3 their latencies overlap.
	type run struct {
		first, last int64
		buf         []byte
	}
	var runs []run
	for i := 0; i < len(missing); {
		j := i + 1
		for j < len(missing) && missing[j] == missing[j-1]+1 {
			j++
		}
		runs = append(runs, run{first: missing[i], last: missing[j-1]})
		i = j
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(vecReadParallel)
	for i := range runs {
		r := &runs[i]
		off := r.first * vecBlockSize
		r.buf = make([]byte, min(size, (r.last+1)*vecBlockSize)-off)
		if st != nil {
			st.VectorFileRequests++
			st.VectorFileBytes += int64(len(r.buf))
		}
		if len(runs) == 1 {
			if err := f.ReadData(r.buf, off); err != nil {
				return err
			}
			break
		}
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			return f.ReadData(r.buf, off)
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for _, r := range runs {
		off := r.first * vecBlockSize
		end := off + int64(len(r.buf))
		for b := r.first; b <= r.last; b++ {
			lo, hi := b*vecBlockSize-off, min(end, (b+1)*vecBlockSize)-off
			d := r.buf[lo:hi:hi]
			have[b] = d
			c.put(b, d)
		}
	}
	if put == nil {
		return nil
	}
	row := make([]byte, rb)
	for j, p := range pos {
		off := p * rb
		for n := int64(0); n < rb; {
			b := (off + n) / vecBlockSize
			d := have[b]
			k := copy(row[n:], d[off+n-b*vecBlockSize:])
			n += int64(k)
		}
		put(j, row)
	}
	return nil
}
