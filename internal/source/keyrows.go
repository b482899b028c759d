package source

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
)

// ErrSharedHash reports that two rows of a persisted key map share a
// StableKeyHash: such a map cannot tell their keys apart, and the caller
// builds the key index from the source instead (BuildKeyIndex).
var ErrSharedHash = errors.New("two source keys share a key hash")

// StableKeyHash is the 64-bit FNV-1a hash of a canonical key encoding
// (AppendKey). Unlike the seeded hash of BuildKeyIndex it is the same in
// every process, so a key map hashed at build time can be persisted (the
// key-rows table of the Parquet provider profile) and used by readers.
func StableKeyHash(key []byte) uint64 {
	h := fnv.New64a()
	h.Write(key)
	return h.Sum64()
}

// NewKeyIndexFromSorted returns the KeyIndex of table t (layout l) from a
// persisted key map: hashes[i] is the StableKeyHash of the key of source
// row ords[i] (its ordinal across t's files), sorted by hash. It takes
// ownership of nothing: the pairs are copied. It fails wrapping
// ErrSharedHash when two entries have the same hash, and with ErrCorrupt
// when the map is not sorted, its length is not t's row count or an
// ordinal is out of range.
func NewKeyIndexFromSorted(t *Table, l *Layout, hashes []uint64, ords []int64) (*KeyIndex, error) {
	if err := t.checkLayout(l); err != nil {
		return nil, err
	}
	k := &KeyIndex{identity: t.Identity(), keys: l.Keys, stable: true}
	k.fileStart = make([]int64, len(t.files)+1)
	for i, f := range t.files {
		k.fileStart[i+1] = k.fileStart[i] + f.Rows
	}
	bad := func(format string, args ...any) error {
		return &Error{Source: t.desc, Row: -1, Rule: ErrCorrupt, Detail: "key map: " + fmt.Sprintf(format, args...)}
	}
	if len(hashes) != len(ords) || int64(len(hashes)) != t.rows {
		return nil, bad("%d entries for %d source rows", len(hashes), t.rows)
	}
	k.ents = make([]keyEnt, len(hashes))
	for i, h := range hashes {
		if ords[i] < 0 || ords[i] >= t.rows {
			return nil, bad("entry %d: row %d outside [0, %d)", i, ords[i], t.rows)
		}
		if i > 0 {
			switch p := hashes[i-1]; {
			case p == h:
				return nil, fmt.Errorf("entries %d and %d: %w", i-1, i, ErrSharedHash)
			case p > h:
				return nil, bad("entry %d: not sorted by key hash", i)
			}
		}
		k.ents[i] = keyEnt{h: h, ord: ords[i]}
	}
	return k, nil
}

// CheckSharedKeys completes a unique-key check done on StableKeyHash
// values outside this package (an index build partitions them on disk, so
// that its memory does not grow with the row count): given the hashes
// that two or more rows of t share, sorted, it reads t's key columns and
// compares those rows' exact keys. It returns an *Error with rule
// ErrDuplicateKey naming both rows, like CheckUniqueKeys, when two keys
// are equal, and nil when the hashes only collided.
func CheckSharedKeys(ctx context.Context, t *Table, l *Layout, shared []uint64) error {
	if err := t.checkLayout(l); err != nil {
		return err
	}
	hs := &KeyHashes{stable: true}
	isOld := make([]bool, len(t.files))
	for len(shared) > 0 {
		n := min(len(shared), checkChunk)
		if err := t.findDuplicate(ctx, l, isOld, hs, shared[:n]); err != nil {
			return err
		}
		shared = shared[n:]
	}
	return nil
}
