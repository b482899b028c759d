package source

import (
	"context"
	"fmt"
	"hash/maphash"
	"slices"
	"sort"

	"github.com/parquet-go/parquet-go"
)

// KeyIndex maps source keys to row locations, for joining search results
// back to source rows. It stores 16 bytes per row (a 64-bit hash of the
// canonical key and the row's ordinal), plus the exact keys of the rare
// rows whose hashes collide. It is immutable and safe for concurrent use.
//
// Lookup is exact for every key of the source. For a key that is not in
// the source it reports false except with probability about N/2^64, when
// it may return some row; callers that must be certain compare the key of
// the row they read.
type KeyIndex struct {
	identity  string
	keys      []KeyType
	seed      maphash.Seed
	ents      []keyEnt // sorted by hash
	fileStart []int64  // ordinal of each file's first row, plus the total
	exact     map[string]int64
	stable    bool // hash is StableKeyHash (a persisted key map), not maphash
}

type keyEnt struct {
	h   uint64
	ord int64 // row ordinal across files; -1 marks a shared hash (see exact)
}

// BuildKeyIndex scans t once (twice if two keys share a hash) and indexes
// every row's key. It fails like Scan on a contract violation and with
// ErrDuplicateKey, naming both rows, when two rows have the same key.
func BuildKeyIndex(ctx context.Context, t *Table, l *Layout) (*KeyIndex, error) {
	k := &KeyIndex{identity: t.Identity(), keys: l.Keys, seed: maphash.MakeSeed()}
	k.fileStart = make([]int64, len(t.files)+1)
	for i, f := range t.files {
		k.fileStart[i+1] = k.fileStart[i] + f.Rows
	}
	k.ents = make([]keyEnt, 0, min(t.rows, 1<<24)) // the footer's count is not trusted for a huge allocation
	var scratch []byte
	err := t.Scan(ctx, l, 0, func(b *Batch) error {
		base := k.fileStart[b.File] + b.FirstRow
		for i := 0; i < b.N; i++ {
			scratch = b.AppendKey(scratch[:0], i)
			k.ents = append(k.ents, keyEnt{h: k.hash(scratch), ord: base + int64(i)})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(k.ents, func(a, b keyEnt) int {
		switch {
		case a.h < b.h:
			return -1
		case a.h > b.h:
			return 1
		}
		return int(a.ord - b.ord)
	})
	shared := map[uint64]bool{}
	for i := 1; i < len(k.ents); i++ {
		if k.ents[i].h == k.ents[i-1].h {
			shared[k.ents[i].h] = true
		}
	}
	if len(shared) == 0 {
		return k, nil
	}
	// Second pass: keep the exact keys of the rows with a shared hash.
	k.exact = map[string]int64{}
	err = t.Scan(ctx, l, 0, func(b *Batch) error {
		base := k.fileStart[b.File] + b.FirstRow
		for i := 0; i < b.N; i++ {
			scratch = b.AppendKey(scratch[:0], i)
			if !shared[k.hash(scratch)] {
				continue
			}
			ord := base + int64(i)
			if prev, dup := k.exact[string(scratch)]; dup {
				p := k.loc(prev)
				return &Error{Source: t.desc, File: t.files[b.File].Key, Row: b.FirstRow + int64(i), Key: b.keyString(i),
					Rule: ErrDuplicateKey, Detail: fmt.Sprintf("same key as row %d of file %q", p.Row, t.files[p.File].Key)}
			}
			k.exact[string(scratch)] = ord
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i := range k.ents {
		if shared[k.ents[i].h] {
			k.ents[i].ord = -1
		}
	}
	return k, nil
}

// hashKeyForTest, when set, replaces the key hash (tests force collisions).
var hashKeyForTest func([]byte) uint64

func (k *KeyIndex) hash(b []byte) uint64 {
	if hashKeyForTest != nil {
		return hashKeyForTest(b)
	}
	if k.stable {
		return StableKeyHash(b)
	}
	return maphash.Bytes(k.seed, b)
}

// Identity returns the Identity of the table the index was built from.
func (k *KeyIndex) Identity() string { return k.identity }

// Len returns the number of indexed rows.
func (k *KeyIndex) Len() int { return len(k.ents) }

func (k *KeyIndex) loc(ord int64) RowLoc {
	f := sort.Search(len(k.fileStart)-1, func(i int) bool { return k.fileStart[i+1] > ord })
	return RowLoc{File: int32(f), Row: ord - k.fileStart[f]}
}

// Lookup returns the location of the row whose canonical key encoding
// (AppendKey) is key.
func (k *KeyIndex) Lookup(key []byte) (RowLoc, bool) {
	h := k.hash(key)
	i := sort.Search(len(k.ents), func(i int) bool { return k.ents[i].h >= h })
	if i == len(k.ents) || k.ents[i].h != h {
		return RowLoc{}, false
	}
	if ord := k.ents[i].ord; ord >= 0 {
		return k.loc(ord), true
	}
	ord, ok := k.exact[string(key)]
	if !ok {
		return RowLoc{}, false
	}
	return k.loc(ord), true
}

// LookupValues is Lookup for a key given as one Parquet value per key
// field (for example the key_i columns of a postings row).
func (k *KeyIndex) LookupValues(vals []parquet.Value) (RowLoc, bool, error) {
	if len(vals) != len(k.keys) {
		return RowLoc{}, false, &Error{Row: -1, Rule: ErrBinding, Detail: fmt.Sprintf("%d key values for %d key fields", len(vals), len(k.keys))}
	}
	var enc []byte
	for i, v := range vals {
		kv, err := KeyValueOf(k.keys[i], v)
		if err != nil {
			return RowLoc{}, false, err
		}
		enc = appendKeyValue(enc, kv)
	}
	loc, ok := k.Lookup(enc)
	return loc, ok, nil
}
