package indexer

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/parqdb/parqdb/storage"
	"github.com/parqdb/parqdb/vecfile"
)

// vectorsWindowBytes bounds the memory of the vectors stage: the rows of
// one window of a root bucket's postings order, placed from one pass over
// the bucket's vector spill.
var vectorsWindowBytes = 128 << 20

// writeVectors writes the snapshot's vectors file (profile §4.2) from the
// vector spill: root buckets in order (their CID intervals ascend, so this
// is CID order), each bucket's rows placed in postings order — by CID,
// then source order, as the postings writer's stable sort puts them — and
// streamed to the warehouse. Memory is one window of at most
// vectorsWindowBytes (a bucket larger than that is read once per window),
// not the bucket or N.
func (b *builder) writeVectors(ctx context.Context) error {
	sp, m := b.vspill, b.manifest
	if sp == nil || m == nil || b.manifestRaw == nil {
		return fmt.Errorf("vectors file: no vector spill (only a full build writes one)")
	}
	dim := b.dim
	starts := vecfile.Starts(m)
	c := b.art.Centroids
	p := b.opts.Progress
	p.Start(StageVectors, m.Rows)
	key := vecfile.Location(b.postingsLoc)
	winRows := max(1, int64(vectorsWindowBytes/(4*dim)))
	n, err := storage.WriteWith(ctx, b.env.Warehouse, key, func(w io.Writer) error {
		vw := vecfile.NewWriter(w, dim, m.Rows, vecfile.ManifestHash(b.manifestRaw))
		var win []float32
		for r := 0; r < c.NumRoots(); r++ {
			lo, hi := c.CIDOffsets[r], c.CIDOffsets[r+1]
			base, total := starts[lo], starts[hi]-starts[lo]
			if total != sp.rows[r] {
				return fmt.Errorf("vectors file: root bucket %d has %d postings rows and %d spilled vectors", r, total, sp.rows[r])
			}
			for wlo := int64(0); wlo < total; wlo += winRows {
				if err := ctx.Err(); err != nil {
					return err
				}
				whi := min(total, wlo+winRows)
				if int64(cap(win)) < (whi-wlo)*int64(dim) {
					win = make([]float32, (whi-wlo)*int64(dim))
				}
				win = win[:(whi-wlo)*int64(dim)]
				if err := sp.placeVectors(r, dim, lo, starts[lo:hi+1], base, wlo, whi, win); err != nil {
					return err
				}
				if err := vw.Write(win); err != nil {
					return err
				}
				p.Add(whi - wlo)
			}
		}
		return vw.Close()
	})
	if n > 0 || err == nil {
		b.written = append(b.written, key)
		b.bytes += n
	}
	return err
}

// placeVectors reads bucket r's vector spill (records in source order) and
// copies the rows whose postings position within the bucket lies in
// [wlo, whi) into win (row at (pos−wlo)·dim). A row's position is its
// CID's start (starts[cid−lo] − base) plus the number of earlier rows of
// that CID in the spill.
func (s *spill) placeVectors(r, dim int, lo int32, starts []int64, base, wlo, whi int64, win []float32) error {
	f := s.files[r]
	if f == nil {
		return nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("vector spill %s: %w", f.Name(), err)
	}
	next := make([]int64, len(starts)-1)
	for i := range next {
		next[i] = starts[i] - base
	}
	br := bufio.NewReaderSize(f, 1<<20)
	rec := make([]byte, 4+4*dim)
	for range s.rows[r] {
		if _, err := io.ReadFull(br, rec); err != nil {
			return fmt.Errorf("vector spill %s: %w", f.Name(), err)
		}
		cid := int32(binary.LittleEndian.Uint32(rec)) - lo
		if cid < 0 || int(cid) >= len(next) {
			return fmt.Errorf("vector spill %s: cid %d outside root bucket %d", f.Name(), cid+lo, r)
		}
		pos := next[cid]
		next[cid]++
		if pos < wlo || pos >= whi {
			continue
		}
		row := win[(pos-wlo)*int64(dim) : (pos-wlo+1)*int64(dim)]
		for d := range row {
			row[d] = math.Float32frombits(binary.LittleEndian.Uint32(rec[4+4*d:]))
		}
	}
	return nil
}
