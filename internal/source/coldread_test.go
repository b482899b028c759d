package source

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/parqdb/parqdb/internal/source/sourcetest"
)

// stripPageIndex returns data without its page index in the footer.
func stripPageIndex(t testing.TB, data []byte) []byte {
	t.Helper()
	out, err := sourcetest.StripPageIndex(data)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// chunkPages is where the pages of one vector column chunk start, from a
// file's offset index: first rows (relative to the row group) and
// compressed sizes.
type chunkPages struct {
	firstRow []int64
	bytes    []int64
	rows     int64
}

func vectorPages(t testing.TB, data []byte, leaf int) []chunkPages {
	t.Helper()
	pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var out []chunkPages
	for _, rg := range pf.RowGroups() {
		oi, err := rg.ColumnChunks()[leaf].(*parquet.FileColumnChunk).OffsetIndex()
		if err != nil {
			t.Fatal(err)
		}
		cp := chunkPages{rows: rg.NumRows()}
		for i := range oi.NumPages() {
			cp.firstRow = append(cp.firstRow, oi.FirstRowIndex(i))
			cp.bytes = append(cp.bytes, oi.CompressedPageSize(i))
		}
		out = append(out, cp)
	}
	return out
}

// page returns the index of the page holding row rel.
func (cp chunkPages) page(rel int64) int {
	return sort.Search(len(cp.firstRow), func(i int) bool { return cp.firstRow[i] > rel }) - 1
}

// TestReadVectorsDecodesPagesOnce: a ReadVectors call over rows spread
// across large zstd pages decodes each page holding a wanted row once
// and no other page when the file has an offset index, and, without one,
// each page up to the last wanted row of its row group once (not once per
// row); the vectors are bit for bit Scan's. With the decoded-page cache
// on, a second call over the same rows decodes nothing (offset index)
// and the same pages again (none: the cache is keyed by the index).
func TestReadVectorsDecodesPagesOnce(t *testing.T) {
	ctx := context.Background()
	const n, dim, rgRows = 5600, 64, 2800
	r := rand.New(rand.NewPCG(29, 1))
	vecs := randVectors(r, n, dim)
	vecs[4100] = nil // a null vector, read only when asked for
	file := vectorFile(t, seq(0, n), vecs, sourcetest.Options{Codec: &parquet.Zstd, PageBufferSize: 16 << 10, RowGroupRows: rgRows})
	pages := vectorPages(t, file, 1)
	for _, cp := range pages {
		if len(cp.firstRow) < 20 {
			t.Fatalf("%d pages per row group, want many", len(cp.firstRow))
		}
	}
	// Rows spread across the pages, repeated, unordered; none past
	// row 5200 (so the row group's last pages are not needed).
	var locs []RowLoc
	for range 12 {
		row := r.Int64N(5200)
		if row == 4100 {
			continue
		}
		locs = append(locs, RowLoc{Row: row})
	}
	locs = append(locs, locs[3], locs[7])
	rgOf := func(row int64) (int, int64) { return int(row / rgRows), row % rgRows }
	// wantIndexed: distinct pages holding a wanted row; wantSeq: per row
	// group, the pages up to the one holding its last wanted row.
	wantIndexed, wantSeq := 0, 0
	{
		seen := map[[2]int]bool{}
		last := map[int]int{}
		for _, loc := range locs {
			rg, rel := rgOf(loc.Row)
			p := pages[rg].page(rel)
			if !seen[[2]int{rg, p}] {
				seen[[2]int{rg, p}] = true
				wantIndexed++
			}
			last[rg] = max(last[rg], p+1)
		}
		for _, k := range last {
			wantSeq += k
		}
	}
	var chunkBytes int64
	for _, cp := range pages {
		for _, b := range cp.bytes {
			chunkBytes += b
		}
	}
	for _, c := range []struct {
		name      string
		strip     bool
		want      int   // pages decoded by the first call
		wantAgain int64 // … and by the second, the cache on
		seeks     int   // page seeks, each of which may read ahead
	}{
		{"offset index", false, wantIndexed, 0, wantIndexed},
		{"no offset index", true, wantSeq, int64(wantSeq), 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := file
			if c.strip {
				data = stripPageIndex(t, data)
			}
			b := newMem()
			b.put("s/part-0.parquet", data)
			st := mustOpen(t, b, "s")
			l, err := st.Check(ctx, l2("embedding", "id"))
			if err != nil {
				t.Fatal(err)
			}
			all, err := scanAll(t, st, l, ScanOptions{})
			if err == nil || !errors.Is(err, ErrNullVector) {
				t.Fatalf("scan: %v, want the null vector of row 4100", err)
			}
			if len(all.vecs) == 0 {
				t.Fatal("scan delivered no rows before the null one")
			}
			read := func() (decoded, bytesRead int64) {
				t.Helper()
				dst := make([]float32, len(locs)*dim)
				p0 := vecPagesRead.Load()
				b.mu.Lock()
				b.reads = 0
				b.mu.Unlock()
				if err := st.ReadVectors(ctx, l, locs, dst); err != nil {
					t.Fatal(err)
				}
				for i, loc := range locs {
					// Scan's vector where it delivered the row (it stops
					// at the null one), else the written one (the same
					// under l2).
					want := vecs[loc.Row]
					if loc.Row < int64(len(all.vecs)) {
						want = all.vecs[loc.Row]
					}
					for j, v := range dst[i*dim : (i+1)*dim] {
						if math.Float32bits(v) != math.Float32bits(want[j]) {
							t.Fatalf("row %d element %d: %v, want %v", loc.Row, j, v, want[j])
						}
					}
				}
				b.mu.Lock()
				defer b.mu.Unlock()
				return vecPagesRead.Load() - p0, b.reads
			}

			defer SetPageCacheBytes(SetPageCacheBytes(0))
			got, nb := read()
			if got != int64(c.want) {
				t.Errorf("cache off: decoded %d pages, want %d", got, c.want)
			}
			// Every byte read belongs to a page read once (plus one read
			// buffer of look-ahead per row group and seek).
			if limit := chunkBytes + int64(len(pages)+c.seeks)*readBufferSize; nb > limit {
				t.Errorf("cache off: read %d bytes, want ≤ %d (the vector chunks are %d)", nb, limit, chunkBytes)
			}

			SetPageCacheBytes(64 << 20)
			read()
			if got, _ := read(); got != c.wantAgain {
				t.Errorf("cache on, second call: decoded %d pages, want %d", got, c.wantAgain)
			}

			// The null vector fails, naming its row; its neighbours read.
			dst := make([]float32, dim)
			err = st.ReadVectors(ctx, l, []RowLoc{{Row: 4100}}, dst)
			var se *Error
			if !errors.Is(err, ErrNullVector) || !errors.As(err, &se) || se.Row != 4100 || se.File != "s/part-0.parquet" {
				t.Errorf("row 4100: %v, want ErrNullVector naming the file and row", err)
			}
			if err := st.ReadVectors(ctx, l, []RowLoc{{Row: 4099}}, dst); err != nil {
				t.Errorf("row 4099: %v", err)
			}
		})
	}
}

// TestReadVectorsPrefetchesPages: with an offset index, a cold read fetches
// the pages it needs in one round of concurrent requests — one a run of
// adjacent pages — and decodes them from memory, with the same vectors.
func TestReadVectorsPrefetchesPages(t *testing.T) {
	ctx := context.Background()
	const n, dim = 4000, 32
	r := rand.New(rand.NewPCG(31, 1))
	vecs := randVectors(r, n, dim)
	file := vectorFile(t, seq(0, n), vecs, sourcetest.Options{Codec: &parquet.Zstd, PageBufferSize: 32 << 10})
	pages := vectorPages(t, file, 1)[0]
	if len(pages.firstRow) < 20 {
		t.Fatalf("%d pages, want many", len(pages.firstRow))
	}
	// One row in each of pages 2, 3 (adjacent), 9 and 15: three runs.
	var locs []RowLoc
	for _, p := range []int{2, 3, 9, 15} {
		locs = append(locs, RowLoc{Row: pages.firstRow[p] + 1})
	}
	b := newMem()
	b.put("s/part-0.parquet", file)
	st := mustOpen(t, b, "s")
	l, err := st.Check(ctx, l2("embedding", "id"))
	if err != nil {
		t.Fatal(err)
	}
	defer SetPageCacheBytes(SetPageCacheBytes(0))
	b.mu.Lock()
	b.calls = 0
	b.mu.Unlock()
	dst := make([]float32, len(locs)*dim)
	if err := st.ReadVectors(ctx, l, locs, dst); err != nil {
		t.Fatal(err)
	}
	for i, loc := range locs {
		if !slices.Equal(dst[i*dim:(i+1)*dim], vecs[loc.Row]) {
			t.Fatalf("row %d: wrong vector", loc.Row)
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.calls != 3 {
		t.Fatalf("%d reads of the file for 4 pages in 3 runs, want 3", b.calls)
	}
}
