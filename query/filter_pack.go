package query

import (
	"github.com/parqdb/parqdb/internal/vecmath"
)

// packedList is a list's matching rows, packed (packList).
type packedList struct {
	l        *list // the matching rows; l.rows maps them to the list's rows
	rejected int   // rows of the list that do not match
}

// maxPackedBytes bounds the packed lists of one predicate (a variable for
// the tests).
var maxPackedBytes int64 = 64 << 20

// packedOf returns cid's packed list, or nil.
func (e *filterEntry) packedOf(cid int32) *packedList {
	if int(cid) >= len(e.packed) || cid < 0 {
		return nil
	}
	return e.packed[cid].Load()
}

// packList returns the matching rows pos (at least one) of list l (its
// ords resolved) packed for e, kept in e for the later searches, or nil
// when they are not packed: an encoding other than LVQ8, e not cached
// (evicted, or refused by the process budget), or no room within
// maxPackedBytes or the process budget. The packed list's bytes are
// charged to e's entry in the filter cache (released when e is evicted);
// other entries are evicted to keep the cache within
// DefaultFilterCacheBytes. Safe for concurrent use: one packed
// list per list is kept.
func (ix *Index) packList(e *filterEntry, l *list, pos []int32) *packedList {
	if e.packed == nil || len(pos) == 0 || l.cid < 0 || int(l.cid) >= len(e.packed) {
		return nil
	}
	if p := e.packedOf(l.cid); p != nil {
		return p
	}
	if ix.filters.lookup(e.key) != e {
		return nil
	}
	w := stride(ix.Dim())
	codeBytes := len(pos) * w
	if l.blocked {
		codeBytes = vecmath.BlockU8Len(len(pos), ix.Dim())
	}
	keyBytes := 0
	ends := l.batch.KeyEnds
	for _, i := range pos {
		start := 0
		if i > 0 {
			start = ends[i-1]
		}
		keyBytes += ends[i] - start
	}
	size := packedSize(len(pos), codeBytes, keyBytes)
	if e.packedBytes.Add(size) > maxPackedBytes {
		e.packedBytes.Add(-size)
		return nil
	}
	p := &packedList{l: packRows(l, pos, w, ix.Dim(), keyBytes), rejected: l.len() - len(pos)}
	if !ix.filters.charge(e, size, func() bool { return e.packed[l.cid].CompareAndSwap(nil, p) }) {
		// No room, e is no longer cached, or another search packed the
		// list first.
		e.packedBytes.Add(-size)
		return e.packedOf(l.cid)
	}
	return p
}

// packedSize is the memory of a packed list of n rows with codeBytes bytes
// of codes and keyBytes bytes of keys (packRows).
func packedSize(n, codeBytes, keyBytes int) int64 {
	// codes, keys; key ends, base, ords; CIDs, offsets, scales, rows
	return int64(codeBytes+keyBytes) + 8*3*int64(n) + 4*4*int64(n) + 256
}

// packRows copies rows pos of l (its ords resolved) into a list of their
// own, in l's scan layout (codes at stride w, or blocked with dim codes
// per row), per-row terms, keys and source ordinals, with rows mapping
// them back to l's rows.
func packRows(l *list, pos []int32, w, dim, keyBytes int) *list {
	n := len(pos)
	b := &l.batch
	p := &list{cid: l.cid, rows: pos, base: make([]float64, n), ords: make([]int64, n),
		maxBase: l.maxBase, maxScale: l.maxScale}
	if l.blocked {
		rows := make([]byte, 0, n*dim)
		for _, i := range pos {
			rows = l.code(rows, int(i), dim)
		}
		p.codes = make([]byte, vecmath.BlockU8Len(n, dim))
		vecmath.BlockU8(p.codes, rows, dim)
		p.blocked = true
	} else {
		p.codes = make([]byte, n*w)
	}
	pb := &p.batch
	pb.CIDs = make([]int32, n)
	pb.Offsets = make([]float32, n)
	pb.Scales = make([]float32, n)
	pb.Keys = make([]byte, 0, keyBytes)
	pb.KeyEnds = make([]int, n)
	pb.CodeLen = b.CodeLen
	for j, i := range pos {
		if !l.blocked {
			copy(p.codes[j*w:(j+1)*w], l.codes[int(i)*w:(int(i)+1)*w])
		}
		p.base[j] = l.base[i]
		p.ords[j] = l.ords[i]
		pb.CIDs[j] = b.CIDs[i]
		pb.Offsets[j] = b.Offsets[i]
		pb.Scales[j] = b.Scales[i]
		pb.Keys = append(pb.Keys, b.Key(int(i))...)
		pb.KeyEnds[j] = len(pb.Keys)
	}
	p.ordsOnce.Do(func() {}) // ords are set
	return p
}
