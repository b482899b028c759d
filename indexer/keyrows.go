package indexer

import (
	"bufio"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/storage"
)

// keyPartitions is the number of spill files the key map is partitioned
// into by the top bits of the key hash: each is sorted in memory on its
// own, so writing the key-rows table holds 16·N/keyPartitions bytes
// (625 KB at 10M rows) rather than 16·N.
const keyPartitions = 256

// keySpill collects (StableKeyHash, source ordinal) pairs during the scan,
// partitioned by the hash's top 8 bits into temporary files.
type keySpill struct {
	dir   *spillDir
	files [keyPartitions]*os.File
	bufs  [keyPartitions]*bufio.Writer
	n     [keyPartitions]int64
	rec   [16]byte
}

func newKeySpill(tmp string) (*keySpill, error) {
	dir, err := newSpillDir(tmp, "keys-")
	if err != nil {
		return nil, fmt.Errorf("key map spill folder: %w", err)
	}
	return &keySpill{dir: dir}, nil
}

func (k *keySpill) add(h uint64, ord int64) error {
	p := h >> 56
	if k.files[p] == nil {
		f, err := os.CreateTemp(k.dir.path, fmt.Sprintf("keys-%03d-*", p))
		if err != nil {
			return fmt.Errorf("key map spill: %w", err)
		}
		k.files[p], k.bufs[p] = f, bufio.NewWriterSize(f, 16<<10)
	}
	binary.LittleEndian.PutUint64(k.rec[:8], h)
	binary.LittleEndian.PutUint64(k.rec[8:], uint64(ord))
	k.n[p]++
	if _, err := k.bufs[p].Write(k.rec[:]); err != nil {
		return fmt.Errorf("key map spill %s: %w", k.files[p].Name(), err)
	}
	return nil
}

type keyEnt struct {
	h   uint64
	ord int64
}

// partitions calls fn with each non-empty partition's entries sorted by
// (hash, ordinal), in hash order; ents is reused between calls.
func (k *keySpill) partitions(ctx context.Context, fn func(ents []keyEnt) error) error {
	var ents []keyEnt
	for p := range k.files {
		if err := ctx.Err(); err != nil {
			return err
		}
		if k.files[p] == nil {
			continue
		}
		if err := k.bufs[p].Flush(); err != nil {
			return fmt.Errorf("key map spill %s: %w", k.files[p].Name(), err)
		}
		data, err := os.ReadFile(k.files[p].Name())
		if err != nil {
			return fmt.Errorf("key map spill: %w", err)
		}
		if int64(len(data)) != 16*k.n[p] {
			return fmt.Errorf("key map spill %s: %d bytes, want %d", k.files[p].Name(), len(data), 16*k.n[p])
		}
		ents = ents[:0]
		for i := 0; i < len(data); i += 16 {
			ents = append(ents, keyEnt{binary.LittleEndian.Uint64(data[i:]), int64(binary.LittleEndian.Uint64(data[i+8:]))})
		}
		slices.SortFunc(ents, func(a, b keyEnt) int {
			if c := cmp.Compare(a.h, b.h); c != 0 {
				return c
			}
			return cmp.Compare(a.ord, b.ord)
		})
		if err := fn(ents); err != nil {
			return err
		}
	}
	return nil
}

// shared returns the hashes that two or more rows have, sorted: the only
// rows whose exact keys the unique-key check must compare.
func (k *keySpill) shared(ctx context.Context) ([]uint64, error) {
	var out []uint64
	err := k.partitions(ctx, func(ents []keyEnt) error {
		for i := 1; i < len(ents); i++ {
			if h := ents[i].h; h == ents[i-1].h && (len(out) == 0 || out[len(out)-1] != h) {
				out = append(out, h)
			}
		}
		return nil
	})
	return out, err
}

// write streams the key-rows table to w, partition by partition.
func (k *keySpill) write(ctx context.Context, w io.Writer) (int64, error) {
	kw := postings.NewKeyRowsWriter(w)
	var hs []uint64
	var ords []int64
	err := k.partitions(ctx, func(ents []keyEnt) error {
		hs, ords = hs[:0], ords[:0]
		for _, e := range ents {
			hs, ords = append(hs, e.h), append(ords, e.ord)
		}
		return kw.Write(hs, ords)
	})
	if err != nil {
		return 0, err
	}
	return kw.Close()
}

func (k *keySpill) remove() {
	for _, f := range k.files {
		if f != nil {
			f.Close()
		}
	}
	k.dir.remove()
}

// writeKeyRows writes the key-rows table of a build that scanned the whole
// source and returns its manifest entry.
func (b *builder) writeKeyRows(ctx context.Context) (postings.KeyRowsEntry, error) {
	key := b.metaLoc + postings.KeyRowsName
	var rows int64
	n, err := storage.WriteWith(ctx, b.env.Warehouse, key, func(w io.Writer) error {
		var err error
		rows, err = b.keySpill.write(ctx, w)
		return err
	})
	if err != nil {
		return postings.KeyRowsEntry{}, fmt.Errorf("key map %s: %w", key, err)
	}
	b.written = append(b.written, key)
	b.bytes += n
	return postings.KeyRowsEntry{Path: key, Size: n, Rows: rows}, nil
}
