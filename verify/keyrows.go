package verify

import (
	"bytes"
	"context"
	"errors"

	"github.com/parqdb/parqdb/internal/source"
	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/storage"
)

// checkKeyRows checks the key-rows table of a version-2 manifest (profile
// §9.5) against the source: the table is readable, has one row per source
// row, is sorted with distinct hashes, and maps every source row's key to
// that row. Problems go to p (the postings keys check). It returns a
// summary suffix, or "" when the manifest has no key-rows table.
func (r *runner) checkKeyRows(ctx context.Context, p *problems) (string, error) {
	kr := r.man.KeyRows
	if kr == nil {
		return "", nil
	}
	data, err := storage.ReadAll(ctx, r.env.Warehouse, kr.Path)
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		p.add("key-rows table %s: %v", kr.Path, err)
		return "", nil
	}
	if int64(len(data)) != kr.Size {
		p.add("key-rows table %s: %d bytes, the manifest says %d", kr.Path, len(data), kr.Size)
		return "", nil
	}
	hs, ords, err := postings.ReadKeyRows(bytes.NewReader(data), kr.Size, kr.Rows)
	if err != nil {
		p.add("key-rows table %s: %v", kr.Path, err)
		return "", nil
	}
	ki, err := source.NewKeyIndexFromSorted(r.table, r.layout, hs, ords)
	if errors.Is(err, source.ErrSharedHash) {
		// Readers fall back to the source for such a table: not an error.
		return "; key-rows table has a shared key hash (readers use the source)", nil
	}
	if err != nil {
		p.add("key-rows table %s: %v", kr.Path, err)
		return "", nil
	}
	var ord int64
	var scratch []byte
	err = r.table.Scan(ctx, r.layout, 0, func(b *source.Batch) error {
		for i := 0; i < b.N; i++ {
			scratch = b.AppendKey(scratch[:0], i)
			loc, ok := ki.Lookup(scratch)
			if !ok {
				p.add("key-rows table %s: source row %d's key is not in the table", kr.Path, ord)
			} else if got := r.fileStartOf(loc.File) + loc.Row; got != ord {
				p.add("key-rows table %s: source row %d's key maps to row %d", kr.Path, ord, got)
			}
			ord++
		}
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		p.add("key-rows table %s: scan the source: %v", kr.Path, err)
	}
	return "; the key-rows table maps every source key to its row", nil
}

// fileStartOf is the ordinal of the first row of source file f.
func (r *runner) fileStartOf(f int32) int64 {
	var n int64
	for i, sf := range r.table.Files() {
		if int32(i) == f {
			break
		}
		n += sf.Rows
	}
	return n
}
