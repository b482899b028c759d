package verify

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/maphash"
	"math"
	"sync/atomic"

	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/storage"
	"github.com/parqdb/parqdb/vecfile"
)

// vectorsFileCheck checks the snapshot's optional vectors file (profile
// §4.2): its footer, size and binding to the manifest, its data checksum,
// and that row p holds the canonical source vector of the p-th postings
// row. The last is an order-free fingerprint: the row join adds
// hash(p, source vector) for every postings row it matches, and one
// sequential read of the file adds hash(p, row p) for every row; the two
// sums agree only if every row is the right vector (up to a 2⁻⁶⁴ chance).
type vectorsFileCheck struct {
	key  string
	f    *vecfile.File
	obj  storage.Object
	seed maphash.Seed
	src  atomic.Uint64 // sum over joined rows of hash(pos, source vector)
	n    atomic.Int64  // rows added to src
	err  error         // a problem found at open: reported by checkVectorsFile
}

// rowHash is the fingerprint of vector x at position pos; buf is scratch.
func (vc *vectorsFileCheck) rowHash(buf []byte, pos int64, x []float32) ([]byte, uint64) {
	buf = binary.LittleEndian.AppendUint64(buf[:0], uint64(pos))
	for _, v := range x {
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
	}
	return buf, maphash.Bytes(vc.seed, buf)
}

func (vc *vectorsFileCheck) addSource(wk *worker, pos int64, x []float32) {
	var h uint64
	wk.vbuf, h = vc.rowHash(wk.vbuf, pos, x)
	vc.src.Add(h)
	vc.n.Add(1)
}

// openVectorsFile opens the vectors file, if the snapshot has one, before
// the row join so that the join can fingerprint the source side.
func (r *runner) openVectorsFile(ctx context.Context) error {
	if r.man == nil || r.postLoc == "" {
		return nil
	}
	key := vecfile.Location(r.postings.Meta)
	o, err := r.env.Warehouse.Open(ctx, key)
	if errors.Is(err, storage.ErrNotExist) {
		return nil
	}
	var f *vecfile.File
	if err == nil {
		if f, err = vecfile.OpenFor(o, o.Size(), key, r.man.Dim, r.man.Rows, vecfile.ManifestHash(r.manRaw)); err != nil {
			o.Close()
		}
	}
	vc := &vectorsFileCheck{key: key, seed: maphash.MakeSeed()}
	r.vf = vc
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		vc.err = err
		return nil
	}
	vc.f, vc.obj = f, o
	return nil
}

// checkVectorsFile reports the vectors file check: skipped when the
// snapshot has none (it is optional).
func (r *runner) checkVectorsFile(ctx context.Context) error {
	r.begin(CheckVectorsFile)
	vc := r.vf
	if vc == nil {
		r.skip(CheckVectorsFile, "none (optional; refine reads the source)")
		return nil
	}
	if vc.obj != nil {
		defer vc.obj.Close()
	}
	p := r.newProblems()
	if vc.err != nil {
		p.add("%v", vc.err)
		r.fail(CheckVectorsFile, p)
		return nil
	}
	if err := vc.f.Verify(ctx); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		p.add("%v", err)
		r.fail(CheckVectorsFile, p)
		return nil
	}
	// The file side of the fingerprint: one sequential read.
	var sum uint64
	dim := vc.f.Dim
	const chunk = 4096
	rows := make([]float32, 0, chunk*dim)
	var buf []byte
	for first := int64(0); first < vc.f.Rows; first += chunk {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(chunk, vc.f.Rows-first)
		rows = rows[:n*int64(dim)]
		if err := vc.f.ReadRows(rows, first); err != nil {
			p.add("%v", err)
			r.fail(CheckVectorsFile, p)
			return nil
		}
		for i := range n {
			var h uint64
			buf, h = vc.rowHash(buf, first+i, rows[i*int64(dim):(i+1)*int64(dim)])
			sum += h
		}
	}
	switch {
	case vc.n.Load() != vc.f.Rows:
		r.ok(CheckVectorsFile, "%s: %d rows × %d, bound to the manifest, data CRC-32C ok; content not compared (%d of %d rows joined with the source; see %s)", vc.key, vc.f.Rows, dim, vc.n.Load(), vc.f.Rows, CheckKeys)
		return nil
	case sum != vc.src.Load():
		p.add("%s: the rows are not the source vectors in postings order (fingerprints differ)", vc.key)
		r.fail(CheckVectorsFile, p)
		return nil
	}
	r.ok(CheckVectorsFile, "%s: %d rows × %d, bound to the manifest, data CRC-32C ok, every row is its postings row's source vector", vc.key, vc.f.Rows, dim)
	return nil
}

// rowGroupPositions maps each row group (file, ordinal) of m to the
// postings-order position of its first row: lists in CID order, a list's
// row groups in (file, ordinal) order (M8), as vecfile.Starts counts them.
func rowGroupPositions(m *postings.Manifest) map[[2]int32]int64 {
	out := make(map[[2]int32]int64, len(m.RowGroups))
	var pos int64
	for _, rg := range m.RowGroups {
		out[[2]int32{rg.File, rg.RowGroup}] = pos
		pos += rg.Rows
	}
	return out
}
