package indexer

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/storage"
	"github.com/parqdb/parqdb/vecfile"
)

// vectorsWindowBytes bounds the memory of the vectors stage: the rows of
// one window of a root bucket's postings order, placed from one pass over
// the bucket's vector spill.
var vectorsWindowBytes = 128 << 20

// writeVectors writes the snapshot's vectors file (profile §4.2): root
// buckets in order (their CID intervals ascend, so this is CID order), each
// bucket's rows placed in postings order and streamed to the warehouse.
// Rows come from the vector spill — by CID, then source order, as the
// postings writer's stable sort puts them — and, for an incremental refresh
// or optimize, from the base snapshot's vectors file (b.baseVec): a list of
// the successor keeps the base's rows first, in the base's order (its
// manifest lists the base's files first), then the spilled ones. Memory is
// one window of at most vectorsWindowBytes (a bucket larger than that is
// read once per window) and one read chunk of the base file, not the
// bucket or N.
func (b *builder) writeVectors(ctx context.Context) error {
	sp, m, bv := b.vspill, b.manifest, b.baseVec
	if sp == nil && bv == nil || m == nil || b.manifestRaw == nil {
		return fmt.Errorf("vectors file: no vector spill or base vectors file")
	}
	dim := b.dim
	starts := vecfile.Starts(m)
	// kept[c]: the rows list c keeps from the base, at its front.
	kept := make([]int64, m.NList)
	var base *vecfile.Stream
	if bv != nil {
		if len(bv.starts) != len(starts) {
			return fmt.Errorf("vectors file: the base has %d lists, the successor %d", len(bv.starts)-1, len(starts)-1)
		}
		for c := range kept {
			kept[c] = bv.starts[c+1] - bv.starts[c]
		}
		base = bv.f.Stream(baseVectorsChunk)
	}
	c := b.art.Centroids
	p := b.opts.Progress
	p.Start(StageVectors, m.Rows)
	key := vecfile.Location(b.metaLoc)
	winRows := max(1, int64(vectorsWindowBytes/(4*dim)))
	n, err := storage.WriteWith(ctx, b.env.Warehouse, key, func(w io.Writer) error {
		vw := vecfile.NewWriter(w, dim, m.Rows, vecfile.ManifestHash(b.manifestRaw))
		var win []float32
		for r := 0; r < c.NumRoots(); r++ {
			lo, hi := c.CIDOffsets[r], c.CIDOffsets[r+1]
			off, total := starts[lo], starts[hi]-starts[lo]
			// first[i]: the bucket position of list lo+i's first spilled row.
			first := make([]int64, hi-lo)
			var fromBase, spilled int64
			for i := range first {
				first[i] = starts[lo+int32(i)] - off + kept[lo+int32(i)]
				fromBase += kept[lo+int32(i)]
			}
			if sp != nil {
				spilled = sp.rows[r]
			}
			if total != fromBase+spilled {
				return fmt.Errorf("vectors file: root bucket %d has %d postings rows, %d base and %d spilled vectors", r, total, fromBase, spilled)
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
				if sp != nil {
					if err := sp.placeVectors(r, dim, lo, first, wlo, whi, win); err != nil {
						return err
					}
				}
				if base != nil {
					// The base rows of each list, in ascending positions: the
					// base file is read once, front to back, over all windows.
					for i := range first {
						a, e := max(first[i]-kept[lo+int32(i)], wlo), min(first[i], whi)
						if a < e {
							if err := base.Read(win[(a-wlo)*int64(dim) : (e-wlo)*int64(dim)]); err != nil {
								return fmt.Errorf("vectors file: reading the base snapshot's: %w", err)
							}
						}
					}
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

// baseVectorsChunk is the size of the ranged reads of a base vectors file.
const baseVectorsChunk = 4 << 20

// baseVectors is the base snapshot's vectors file, from which an
// incremental refresh or optimize derives the successor's.
type baseVectors struct {
	f      *vecfile.File
	obj    storage.Object
	starts []int64 // vecfile.Starts of the base manifest
}

// openBaseVectors opens the vectors file of the base postings whose side
// objects are in meta (raw and m: its manifest as stored and parsed),
// checked against them, or returns nil when the base has none.
func openBaseVectors(ctx context.Context, wh storage.Bucket, meta string, raw []byte, m *postings.Manifest) (*baseVectors, error) {
	key := vecfile.Location(meta)
	o, err := wh.Open(ctx, key)
	if errors.Is(err, storage.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("base snapshot's vectors file: %w", err)
	}
	f, err := vecfile.OpenFor(o, o.Size(), key, int(m.Dim), m.Rows, vecfile.ManifestHash(raw))
	if err != nil {
		o.Close()
		return nil, fmt.Errorf("base snapshot's vectors file: %w", err)
	}
	return &baseVectors{f: f, obj: o, starts: vecfile.Starts(m)}, nil
}

// placeVectors reads bucket r's vector spill (records in source order) and
// copies the rows whose postings position within the bucket lies in
// [wlo, whi) into win (row at (pos−wlo)·dim). A row's position is its
// list's first spilled position (first[cid−lo]) plus the number of earlier
// rows of that list in the spill.
func (s *spill) placeVectors(r, dim int, lo int32, first []int64, wlo, whi int64, win []float32) error {
	f := s.files[r]
	if f == nil {
		return nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("vector spill %s: %w", f.Name(), err)
	}
	next := slices.Clone(first)
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
