package source

import (
	"context"
	"fmt"
	"hash/maphash"
	"slices"
)

// checkChunk is how many distinct shared hashes one resolving pass of
// CheckUniqueKeys keeps exact keys for: it bounds that pass's memory.
const checkChunk = 1 << 16

// KeyHashes collects a 64-bit hash of every row's key as a scan delivers
// the rows, for CheckUniqueKeys: 8 bytes per row. Make one with
// NewKeyHashes; it is not safe for concurrent use.
type KeyHashes struct {
	stable  bool // StableKeyHash instead of the seeded maphash
	seed    maphash.Seed
	h       []uint64
	scratch []byte
}

// NewKeyHashes returns an empty KeyHashes with a fresh random seed.
func NewKeyHashes() *KeyHashes { return &KeyHashes{seed: maphash.MakeSeed()} }

// Add records the key of every row of b.
func (k *KeyHashes) Add(b *Batch) {
	for i := 0; i < b.N; i++ {
		k.scratch = b.AppendKey(k.scratch[:0], i)
		k.h = append(k.h, k.hash(k.scratch))
	}
}

// Len returns the number of rows recorded.
func (k *KeyHashes) Len() int { return len(k.h) }

func (k *KeyHashes) hash(b []byte) uint64 {
	if hashKeyForTest != nil {
		return hashKeyForTest(b)
	}
	if k.stable {
		return StableKeyHash(b)
	}
	return maphash.Bytes(k.seed, b)
}

// CheckUniqueKeys enforces the source contract's unique-key rule: it
// returns an *Error with rule ErrDuplicateKey for a row whose key an
// earlier row (in file and row order) already has, naming both rows (file
// and row within the file) and the key; nil when every key is unique.
//
// Rows of the files for which old returns true are rows an index already
// holds: they are compared with every other row but not with each other
// (old nil: every file is new). hs holds the key hashes of exactly the
// rows of the new files, in any order, when a Scan already collected them
// with Add; nil makes CheckUniqueKeys read the new files' key columns
// itself. CheckUniqueKeys sorts hs, which must not be used afterwards.
//
// It reads only key columns: the old files once (when there are any and
// hs is not empty) and, when two hashes are equal (in practice only when a
// key is duplicated), every file once more per 65,536 shared hashes, to
// compare the exact keys. Memory: 8 bytes per new row (plus a bitmap of 2
// to 4 bytes per new row when there are old files), 8 per old row whose
// hash is a new row's, and the exact keys of the rows with a shared hash
// of the current pass. A contract violation in a key column (a null key)
// or an unreadable page fails as Scan does.
func CheckUniqueKeys(ctx context.Context, t *Table, l *Layout, old func(File) bool, hs *KeyHashes) error {
	if err := t.checkLayout(l); err != nil {
		return err
	}
	isOld := make([]bool, len(t.files))
	anyOld := false
	for i, f := range t.files {
		if old != nil && old(f.File) {
			isOld[i], anyOld = true, true
		}
	}
	if hs == nil {
		hs = NewKeyHashes()
		err := t.scanKeys(ctx, l, func(fi int) bool { return !isOld[fi] }, func(b *Batch) error {
			hs.Add(b)
			return nil
		})
		if err != nil {
			return err
		}
	}
	slices.Sort(hs.h)
	var shared []uint64
	for i := 1; i < len(hs.h); i++ {
		if hs.h[i] == hs.h[i-1] && (len(shared) == 0 || shared[len(shared)-1] != hs.h[i]) {
			shared = append(shared, hs.h[i])
		}
	}
	if anyOld && len(hs.h) > 0 {
		// A bitmap of 16 bits per new row answers most lookups of old keys
		// (all but about 1 in 16 absent ones) without a binary search.
		size := uint64(64)
		for size < 16*uint64(len(hs.h)) {
			size *= 2
		}
		bits, mask := make([]uint64, size/64), size-1
		for _, h := range hs.h {
			bits[(h&mask)>>6] |= 1 << (h & 63)
		}
		var scratch []byte
		err := t.scanKeys(ctx, l, func(fi int) bool { return isOld[fi] }, func(b *Batch) error {
			for i := 0; i < b.N; i++ {
				scratch = b.AppendKey(scratch[:0], i)
				h := hs.hash(scratch)
				if bits[(h&mask)>>6]&(1<<(h&63)) == 0 {
					continue
				}
				if _, found := slices.BinarySearch(hs.h, h); found {
					shared = append(shared, h)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		slices.Sort(shared)
		shared = slices.Compact(shared)
	}
	hs.h = nil
	for len(shared) > 0 {
		n := min(len(shared), checkChunk)
		if err := t.findDuplicate(ctx, l, isOld, hs, shared[:n]); err != nil {
			return err
		}
		shared = shared[n:]
	}
	return nil
}

// findDuplicate reads every file's key columns and compares the exact keys
// of the rows whose hash is in hashes (sorted).
func (t *Table) findDuplicate(ctx context.Context, l *Layout, isOld []bool, hs *KeyHashes, hashes []uint64) error {
	type firstRow struct {
		file int
		row  int64
	}
	seen := map[string]firstRow{}
	var scratch []byte
	return t.scanKeys(ctx, l, func(int) bool { return true }, func(b *Batch) error {
		for i := 0; i < b.N; i++ {
			scratch = b.AppendKey(scratch[:0], i)
			if _, ok := slices.BinarySearch(hashes, hs.hash(scratch)); !ok {
				continue
			}
			row := b.FirstRow + int64(i)
			p, dup := seen[string(scratch)]
			if !dup {
				seen[string(scratch)] = firstRow{b.File, row}
				continue
			}
			if isOld[p.file] && isOld[b.File] {
				continue // both already indexed: not this check's business
			}
			where := ""
			if isOld[p.file] {
				where = ", which the index already holds"
			}
			return &Error{Source: t.desc, File: t.files[b.File].Key, Row: row, Key: b.keyString(i), Rule: ErrDuplicateKey,
				Detail: fmt.Sprintf("same key as row %d of file %q%s; keys must be unique: remove or change one of the two rows",
					p.row, t.files[p.file].Key, where)}
		}
		return nil
	})
}

// scanKeys streams the rows of the files for which keep is true, in file
// and row order, decoding and checking only the key columns: the batches
// carry no vectors.
func (t *Table) scanKeys(ctx context.Context, l *Layout, keep func(file int) bool, fn func(*Batch) error) error {
	r := rgReader{keysOnly: true}
	b := new(Batch)
	get := func() *Batch { return b }
	for fi, f := range t.files {
		if !keep(fi) {
			continue
		}
		for rgi := range f.pf.RowGroups() {
			if f.rgStart[rgi+1] == f.rgStart[rgi] {
				continue
			}
			if err := r.run(ctx, t, l, unit{fi, rgi}, DefaultBatchRows, get, fn); err != nil {
				return err
			}
		}
	}
	return nil
}
