package vecfile

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/parqdb/parqdb/postings"
)

func write(t *testing.T, dim int, rows int64, man [32]byte, vecs []float32) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf, dim, rows, man)
	// in two calls, to cross a Write boundary
	half := int(rows/2) * dim
	if err := w.Write(vecs[:half]); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(vecs[half:]); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func randVecs(n, dim int) []float32 {
	r := rand.New(rand.NewPCG(1, 2))
	v := make([]float32, n*dim)
	for i := range v {
		v[i] = r.Float32()*2 - 1
	}
	return v
}

func TestRoundTrip(t *testing.T) {
	const dim, rows = 5, 3001
	vecs := randVecs(rows, dim)
	man := ManifestHash([]byte("manifest"))
	data := write(t, dim, rows, man, vecs)
	if int64(len(data)) != rows*dim*4+FooterSize {
		t.Fatalf("size %d", len(data))
	}
	f, err := Open(bytes.NewReader(data), int64(len(data)), "w/vectors.f32")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Check(dim, rows, man); err != nil {
		t.Fatal(err)
	}
	if err := f.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, 7*dim)
	if err := f.ReadRows(got, 100); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if got[i] != vecs[100*dim+i] {
			t.Fatalf("ReadRows value %d: %v, want %v", i, got[i], vecs[100*dim+i])
		}
	}
	// Gather: any order, repeats, neighbours coalesced, far rows apart.
	pos := []int64{3000, 5, 6, 5, 2000, 0, 7, 2999}
	seen := make([]bool, len(pos))
	reads, err := f.Gather(context.Background(), pos, func(j int, row []float32) {
		seen[j] = true
		for d := range row {
			if row[d] != vecs[int(pos[j])*dim+d] {
				t.Fatalf("Gather pos %d dim %d: %v, want %v", pos[j], d, row[d], vecs[int(pos[j])*dim+d])
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	for j, s := range seen {
		if !s {
			t.Fatalf("Gather skipped %d", j)
		}
	}
	// {0,5,6,7} (gaps ≤ MaxGap), {2000}, {2999,3000}
	if reads != 3 {
		t.Fatalf("Gather made %d reads, want 3", reads)
	}
	if _, err := f.Gather(context.Background(), []int64{rows}, func(int, []float32) {}); err == nil {
		t.Fatal("Gather past the end succeeded")
	}
}

func TestBadFiles(t *testing.T) {
	const dim, rows = 4, 100
	vecs := randVecs(rows, dim)
	man := ManifestHash([]byte("m"))
	good := write(t, dim, rows, man, vecs)
	flip := func(at int) []byte {
		b := bytes.Clone(good)
		b[at] ^= 1
		return b
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"truncated", good[:len(good)-4*dim], "no vectors-file footer"},
		{"truncated by a row with footer kept", append(bytes.Clone(good[:len(good)-FooterSize-4*dim]), good[len(good)-FooterSize:]...), "truncated or extended"},
		{"short", good[:10], "shorter than"},
		{"footer bit flip", flip(len(good) - 20), "footer checksum"},
		{"empty", nil, "shorter than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Open(bytes.NewReader(tc.data), int64(len(tc.data)), "wh/x/vectors.f32")
			if err == nil || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "wh/x/vectors.f32") {
				t.Fatalf("error %v, want ErrCorrupt naming the path and %q", err, tc.want)
			}
		})
	}
	t.Run("data bit flip", func(t *testing.T) {
		b := flip(17)
		f, err := Open(bytes.NewReader(b), int64(len(b)), "p")
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Verify(context.Background()); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "data checksum") {
			t.Fatalf("Verify: %v", err)
		}
	})
	t.Run("foreign", func(t *testing.T) {
		f, err := Open(bytes.NewReader(good), int64(len(good)), "p")
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Check(dim, rows, ManifestHash([]byte("other"))); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "another manifest") {
			t.Fatalf("Check: %v", err)
		}
		if err := f.Check(dim+1, rows, man); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Check: %v", err)
		}
	})
	t.Run("OpenFor", func(t *testing.T) {
		r := bytes.NewReader(good)
		if f, err := OpenFor(r, int64(len(good)), "p", dim, rows, man); err != nil || f.Rows != rows {
			t.Fatalf("OpenFor of the matching file: %v", err)
		}
		if _, err := OpenFor(r, int64(len(good)), "wh/p", dim, rows+1, man); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "wh/p") {
			t.Fatalf("OpenFor with another row count: %v", err)
		}
		if _, err := OpenFor(r, 10, "wh/p", dim, rows, man); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "shorter than") {
			t.Fatalf("OpenFor of a short file: %v", err)
		}
	})
	t.Run("writer row count", func(t *testing.T) {
		w := NewWriter(new(bytes.Buffer), dim, rows, man)
		if err := w.Write(vecs[:dim]); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err == nil {
			t.Fatal("Close with missing rows succeeded")
		}
		w = NewWriter(new(bytes.Buffer), dim, 1, man)
		if err := w.Write(vecs[:2*dim]); err == nil {
			t.Fatal("Write past the announced rows succeeded")
		}
	})
}

func TestStarts(t *testing.T) {
	m := &postings.Manifest{NList: 4, Rows: 9, RowGroups: []postings.Range{
		{CID: 0, Rows: 2}, {CID: 2, Rows: 3}, {CID: 2, Rows: 1}, {CID: 3, Rows: 3},
	}}
	got := Starts(m)
	want := []int64{0, 2, 2, 6, 9}
	if len(got) != len(want) {
		t.Fatalf("Starts %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Starts %v, want %v", got, want)
		}
	}
}

func FuzzOpen(f *testing.F) {
	var buf bytes.Buffer
	w := NewWriter(&buf, 2, 3, [32]byte{})
	_ = w.Write([]float32{1, 2, 3, 4, 5, 6})
	_ = w.Close()
	f.Add(buf.Bytes())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := Open(bytes.NewReader(b), int64(len(b)), "p")
		if err != nil {
			return
		}
		if file.DataSize()+FooterSize != int64(len(b)) {
			t.Fatalf("accepted a file of %d bytes for %d rows × %d", len(b), file.Rows, file.Dim)
		}
		_ = file.Verify(context.Background())
	})
}

// TestStream reads a file front to back in uneven pieces through chunks of
// several sizes and compares with the written rows; a flipped data bit
// fails the read that fetches the end of the data, naming the file.
func TestStream(t *testing.T) {
	const dim, rows = 3, 1001
	vecs := randVecs(rows, dim)
	data := write(t, dim, rows, ManifestHash(nil), vecs)
	for _, chunk := range []int{1, 12, 100, 4096, 1 << 20} {
		f, err := Open(bytes.NewReader(data), int64(len(data)), "s/vectors.f32")
		if err != nil {
			t.Fatal(err)
		}
		s := f.Stream(chunk)
		r := rand.New(rand.NewPCG(uint64(chunk), 3))
		for at := 0; at < rows; {
			n := min(rows-at, r.IntN(40))
			got := make([]float32, n*dim)
			if err := s.Read(got); err != nil {
				t.Fatalf("chunk %d: rows [%d, %d): %v", chunk, at, at+n, err)
			}
			if !slices.Equal(got, vecs[at*dim:(at+n)*dim]) {
				t.Fatalf("chunk %d: rows [%d, %d) differ", chunk, at, at+n)
			}
			at += n
		}
		if err := s.Read(make([]float32, dim)); err == nil {
			t.Fatalf("chunk %d: a read past the last row succeeded", chunk)
		}
	}
	for _, at := range []int{0, rows*dim*4 - 1} {
		bad := slices.Clone(data)
		bad[at] ^= 0x10
		f, err := Open(bytes.NewReader(bad), int64(len(bad)), "s/vectors.f32")
		if err != nil {
			t.Fatal(err)
		}
		s := f.Stream(4096)
		var rerr error
		for i := 0; i < rows && rerr == nil; i++ {
			rerr = s.Read(make([]float32, dim))
		}
		if !errors.Is(rerr, ErrCorrupt) || !strings.Contains(rerr.Error(), "s/vectors.f32") {
			t.Fatalf("bit %d flipped: %v, want ErrCorrupt naming the file", at, rerr)
		}
	}
	f, _ := Open(bytes.NewReader(data), int64(len(data)), "s/vectors.f32")
	if err := f.Stream(64).Read(make([]float32, dim+1)); err == nil {
		t.Fatal("a read of a partial row succeeded")
	}
}

// TestNameKnownToLayout: postings.IsInlineSideObject, which cannot import
// this package, recognises the vectors file of a version-1 table.
func TestNameKnownToLayout(t *testing.T) {
	if !postings.IsInlineSideObject(Name) {
		t.Fatalf("postings.IsInlineSideObject(%q) = false", Name)
	}
}
