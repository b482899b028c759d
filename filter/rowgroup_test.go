package filter

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// pageRow is a row of the paged test file: id sorted (so that the page
// index can decide whole pages), the other columns random, with NULLs.
type pageRow struct {
	ID    int64    `parquet:"id"`
	U     int32    `parquet:"u"`
	Small int32    `parquet:"small,uint(16)"`
	Price *float64 `parquet:"price,optional"`
	Ratio float32  `parquet:"ratio"`
	Cat   *string  `parquet:"cat,optional,dict"`
	Name  string   `parquet:"name"`
	Flag  *bool    `parquet:"flag,optional"`
	Day   int32    `parquet:"day,date"`
}

func pageRows(n int, seed uint64) []pageRow {
	r := rand.New(rand.NewPCG(seed, 7))
	rows := make([]pageRow, n)
	cats := []string{"a", "ab", "b", "boots", "shoes"}
	for i := range rows {
		x := pageRow{ID: int64(i), U: int32(r.IntN(1000)), Small: int32(r.IntN(70000)), Ratio: float32(r.Float64()), Name: fmt.Sprintf("n%04d", r.IntN(5000)), Day: int32(19000 + r.IntN(400))}
		if r.IntN(5) > 0 {
			p := float64(r.IntN(10000)) / 100
			if r.IntN(50) == 0 {
				p = math.NaN()
			}
			x.Price = &p
		}
		if r.IntN(4) > 0 {
			c := cats[r.IntN(len(cats))]
			x.Cat = &c
		}
		if r.IntN(3) > 0 {
			b := r.IntN(2) == 0
			x.Flag = &b
		}
		rows[i] = x
	}
	return rows
}

// writePaged writes rows with small pages and a page index, opened as
// the source opens files (page index read on demand).
func writePaged(t testing.TB, rows []pageRow, rowsPerGroup int64, pageBytes int) *parquet.File {
	t.Helper()
	var buf bytes.Buffer
	if err := parquet.Write(&buf, rows, parquet.MaxRowsPerRowGroup(rowsPerGroup), parquet.PageBufferSize(pageBytes),
		parquet.Compression(&parquet.Snappy)); err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// chunksOf returns the row group's chunks of the program's columns.
func chunksOf(t testing.TB, f *parquet.File, rg parquet.RowGroup, prog *Program) []parquet.ColumnChunk {
	t.Helper()
	var out []parquet.ColumnChunk
	for _, name := range prog.Columns() {
		leaf, ok := f.Schema().Lookup(name)
		if !ok {
			t.Fatalf("no column %q", name)
		}
		out = append(out, rg.ColumnChunks()[leaf.ColumnIndex])
	}
	return out
}

// evalRowWise is the reference: Eval on each row's boxed values.
func evalRowWise(t *testing.T, f *parquet.File, rg parquet.RowGroup, prog *Program) []uint32 {
	t.Helper()
	idx := make([]int, len(prog.Columns()))
	for j, name := range prog.Columns() {
		leaf, _ := f.Schema().Lookup(name)
		idx[j] = leaf.ColumnIndex
	}
	rr := rg.Rows()
	defer rr.Close()
	var out []uint32
	buf := make([]parquet.Row, 64)
	vals := make([]parquet.Value, len(idx))
	row := 0
	for {
		n, err := rr.ReadRows(buf)
		for _, r := range buf[:n] {
			for j, c := range idx {
				vals[j] = parquet.Value{}
				for _, v := range r {
					if v.Column() == c {
						vals[j] = v
					}
				}
			}
			if prog.Eval(vals) {
				out = append(out, uint32(row))
			}
			row++
		}
		if err != nil {
			break
		}
	}
	return out
}

var pagedPredicates = []string{
	"u < 100",
	"u < 500 AND cat IN ('a', 'b')",
	"id BETWEEN 1000 AND 1100",
	"id >= 0",
	"id < 0",
	"id NOT BETWEEN 10 AND 5000",
	"NOT (id < 3000) OR u = 7",
	"price > 50",
	"price != 12.5",
	"price IS NULL",
	"price IS NOT NULL AND id > 2500",
	"cat LIKE 'b%'",
	"cat NOT LIKE 'b%'",
	"cat = 'boots'",
	"cat NOT IN ('a', NULL)",
	"cat IN ('ab', NULL)",
	"name >= 'n2500'",
	"name LIKE 'n00%'",
	"flag = TRUE",
	"flag != TRUE OR flag IS NULL",
	"small > 65535",
	"small IN (1, 2, 69999)",
	"u IN (3, 5, 7, 66)",
	"u NOT IN (0, 1, 2, 63)",
	"day IN (DATE '2022-01-01', DATE '2022-01-05')",
	"ratio < 0.25",
	"u > 2.5 AND u < 10.5",
	"day >= DATE '2022-01-01'",
	"price BETWEEN 10 AND NULL",
	"NOT (price BETWEEN NULL AND 10)",
	"u = NULL",
	// A sorted column's page index skips pages of the dictionary-encoded
	// and plain string columns too (their pages are then read after a seek).
	"id > 4000 AND cat = 'boots'",
	"id BETWEEN 2600 AND 2700 AND name >= 'n2500'",
	"(id < 300 OR id > 5800) AND cat LIKE 'b%'",
	// Conjuncts evaluated one after the other: the later ones read only
	// the pages (or none) where the earlier ones leave rows possible.
	"u = 7 AND id >= 0",
	"u < 0 AND cat = 'boots'",
	"cat = 'boots' AND u < 100 AND price > 50",
	"(u < 50 OR price IS NULL) AND name LIKE 'n1%' AND flag = TRUE",
	"u = 7 AND NOT (price > 50) AND id IS NOT NULL",
}

// TestMatchRowGroup checks the typed, vectorised evaluation (with page
// skipping) against the row-wise evaluation of boxed values, on a file of
// many small pages with NULLs, NaN, a dictionary column, unsigned and
// date columns.
func TestMatchRowGroup(t *testing.T) {
	rows := pageRows(6000, 1)
	f := writePaged(t, rows, 2500, 512)
	schema := f.Schema()
	for _, text := range pagedPredicates {
		t.Run(text, func(t *testing.T) {
			pred, err := Parse(text)
			if err != nil {
				t.Fatal(err)
			}
			prog, err := pred.Check(schema)
			if err != nil {
				t.Fatal(err)
			}
			s := prog.NewScratch()
			for ri, rg := range f.RowGroups() {
				m, err := prog.MatchRowGroup(context.Background(), s, chunksOf(t, f, rg, prog), int(rg.NumRows()))
				if err != nil {
					t.Fatalf("row group %d: %v", ri, err)
				}
				want := evalRowWise(t, f, rg, prog)
				if !slices.Equal(m.Rows, want) && !(len(m.Rows) == 0 && len(want) == 0) {
					t.Fatalf("row group %d: %d rows match, want %d (first got %v, want %v)", ri, len(m.Rows), len(want), head(m.Rows), head(want))
				}
			}
		})
	}
}

func head(x []uint32) []uint32 { return x[:min(len(x), 8)] }

// TestMatchRowGroupSkipsPages checks that the page index skips the pages
// of a sorted column that cannot match and takes whole the pages that all
// match, without decoding them.
func TestMatchRowGroupSkipsPages(t *testing.T) {
	rows := pageRows(6000, 2)
	f := writePaged(t, rows, 6000, 512)
	rg := f.RowGroups()[0]
	tests := []struct {
		text        string
		rows        int
		wantRead    bool // some page decoded
		wantSkipped bool
	}{
		{"id BETWEEN 1000 AND 1100", 101, true, true},
		{"id >= 0", 6000, false, true},
		{"id < 0", 0, false, true},
		{"u < 1000", 6000, false, true},         // every page's max is below 1000
		{"u < 500 AND u > 499", 0, true, false}, // no order: every page decoded
		// The dictionary column's pages outside id's range are skipped too,
		// and the ones read are reached by a seek.
		{"id > 5500 AND cat = 'boots'", -1, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			pred, err := Parse(tt.text)
			if err != nil {
				t.Fatal(err)
			}
			prog, err := pred.Check(f.Schema())
			if err != nil {
				t.Fatal(err)
			}
			m, err := prog.MatchRowGroup(context.Background(), prog.NewScratch(), chunksOf(t, f, rg, prog), int(rg.NumRows()))
			if err != nil {
				t.Fatal(err)
			}
			if want := evalRowWise(t, f, rg, prog); !slices.Equal(m.Rows, want) && len(m.Rows)+len(want) > 0 {
				t.Errorf("%d rows match, want %d (row-wise evaluation)", len(m.Rows), len(want))
			}
			if tt.rows >= 0 && len(m.Rows) != tt.rows {
				t.Errorf("%d rows match, want %d", len(m.Rows), tt.rows)
			}
			if (m.PagesRead > 0) != tt.wantRead || (m.PagesSkipped > 0) != tt.wantSkipped {
				t.Errorf("pages read %d, skipped %d; want read %v, skipped %v", m.PagesRead, m.PagesSkipped, tt.wantRead, tt.wantSkipped)
			}
			if tt.wantSkipped && tt.wantRead && m.PagesSkipped < 5*m.PagesRead {
				t.Errorf("pages read %d, skipped %d: the page index should skip most pages", m.PagesRead, m.PagesSkipped)
			}
		})
	}
}

// TestMatchRowGroupRandom compares random predicates over every column
// with the row-wise evaluation.
func TestMatchRowGroupRandom(t *testing.T) {
	rows := pageRows(5000, 3)
	f := writePaged(t, rows, 1700, 256)
	r := rand.New(rand.NewPCG(9, 9))
	leaves := []func() string{
		func() string { return fmt.Sprintf("u %s %d", randOp(r), r.IntN(1000)) },
		func() string { return fmt.Sprintf("id %s %d", randOp(r), r.IntN(5000)) },
		func() string { return fmt.Sprintf("price %s %d.5", randOp(r), r.IntN(100)) },
		func() string {
			return fmt.Sprintf("cat %s '%s'", randOp(r), []string{"a", "b", "boots", "c"}[r.IntN(4)])
		},
		func() string { return fmt.Sprintf("id BETWEEN %d AND %d", r.IntN(5000), r.IntN(5000)) },
		func() string { return []string{"price IS NULL", "cat IS NOT NULL", "flag", "flag = FALSE"}[r.IntN(4)] },
		func() string { return fmt.Sprintf("name LIKE 'n%d%%'", r.IntN(10)) },
		func() string { return fmt.Sprintf("u IN (%d, %d, %d)", r.IntN(1000), r.IntN(1000), r.IntN(1000)) },
		func() string { x := r.IntN(1000); return fmt.Sprintf("u NOT IN (%d, %d)", x, x+r.IntN(80)) },
	}
	var gen func(d int) string
	gen = func(d int) string {
		if d > 0 && r.IntN(3) > 0 {
			switch r.IntN(3) {
			case 0:
				return "(" + gen(d-1) + " AND " + gen(d-1) + ")"
			case 1:
				return "(" + gen(d-1) + " OR " + gen(d-1) + ")"
			}
			return "NOT (" + gen(d-1) + ")"
		}
		return leaves[r.IntN(len(leaves))]()
	}
	for i := 0; i < 150; i++ {
		text := gen(3)
		if strings.HasPrefix(text, "flag") || strings.Contains(text, "(flag)") || strings.Contains(text, " flag)") {
			text = strings.ReplaceAll(text, "flag)", "flag = TRUE)")
		}
		pred, err := Parse(text)
		if err != nil {
			continue // e.g. a bare boolean column, which the grammar does not take
		}
		prog, err := pred.Check(f.Schema())
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		s := prog.NewScratch()
		for ri, rg := range f.RowGroups() {
			m, err := prog.MatchRowGroup(context.Background(), s, chunksOf(t, f, rg, prog), int(rg.NumRows()))
			if err != nil {
				t.Fatalf("%s: row group %d: %v", text, ri, err)
			}
			want := evalRowWise(t, f, rg, prog)
			if !slices.Equal(m.Rows, want) && !(len(m.Rows) == 0 && len(want) == 0) {
				t.Fatalf("%s: row group %d: %d rows match, want %d", text, ri, len(m.Rows), len(want))
			}
		}
	}
}

func randOp(r *rand.Rand) string { return []string{"=", "!=", "<", "<=", ">", ">="}[r.IntN(6)] }

// TestPagedFileHasDictionaryPages guards the test file: the dictionary
// path of the decoder is only tested if cat's pages are dictionary-indexed.
func TestPagedFileHasDictionaryPages(t *testing.T) {
	f := writePaged(t, pageRows(3000, 4), 3000, 512)
	leaf, _ := f.Schema().Lookup("cat")
	pages := f.RowGroups()[0].ColumnChunks()[leaf.ColumnIndex].Pages()
	defer pages.Close()
	p, err := pages.ReadPage()
	if err != nil {
		t.Fatal(err)
	}
	if p.Dictionary() == nil {
		t.Fatal("cat's first page has no dictionary")
	}
	if len(p.DefinitionLevels()) == 0 {
		t.Fatal("cat's first page has no definition levels")
	}
}

// TestMatchRowGroupConjunctsSkip checks that a conjunct reads only the
// pages in which the conjuncts before it leave a row possible: with
// `u = 7` first (a few rows), `id != 3` (undecided by id's page statistics
// where u's pages are undecided) reads at most one page per matching row.
func TestMatchRowGroupConjunctsSkip(t *testing.T) {
	rows := pageRows(6000, 2)
	f := writePaged(t, rows, 6000, 512)
	rg := f.RowGroups()[0]
	match := func(text string) RowGroupMatch {
		t.Helper()
		pred, err := Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		prog, err := pred.Check(f.Schema())
		if err != nil {
			t.Fatal(err)
		}
		m, err := prog.MatchRowGroup(context.Background(), prog.NewScratch(), chunksOf(t, f, rg, prog), int(rg.NumRows()))
		if err != nil {
			t.Fatal(err)
		}
		if want := evalRowWise(t, f, rg, prog); !slices.Equal(m.Rows, want) && len(m.Rows)+len(want) > 0 {
			t.Fatalf("%s: %d rows match, want %d (row-wise evaluation)", text, len(m.Rows), len(want))
		}
		m.Rows = slices.Clone(m.Rows)
		return m
	}
	alone := match("u = 7")
	all := match("id != 3")
	both := match("u = 7 AND id != 3")
	if len(alone.Rows) == 0 || len(alone.Rows) > 20 {
		t.Fatalf("u = 7 matches %d rows; the test needs a few", len(alone.Rows))
	}
	idPages := all.PagesRead + all.PagesSkipped
	if extra := both.PagesRead - alone.PagesRead; extra > len(alone.Rows) || idPages < 20 {
		t.Errorf("id's pages read after u = 7: %d of %d (%d rows left)", extra, idPages, len(alone.Rows))
	}
	none := match("u < 0 AND id != 3")
	if none.PagesRead != match("u < 0").PagesRead || len(none.Rows) != 0 {
		t.Errorf("u < 0 AND id != 3 read %d pages, matched %d rows; id's pages should not be read", none.PagesRead, len(none.Rows))
	}
}
