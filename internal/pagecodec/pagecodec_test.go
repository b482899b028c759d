package pagecodec

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/format"
)

// originals are parquet-go's own codecs, used here to encode.
var originals = []compress.Codec{&parquet.Snappy, &parquet.Gzip, &parquet.Brotli, &parquet.Zstd, &parquet.Lz4Raw}

// installed reports whether the bounded decoder for code is the one
// parquet-go uses.
func installed(code format.CompressionCodec) bool {
	_, ok := parquet.LookupCompressionCodec(code).(*bounded)
	return ok
}

// TestInstalled checks that parquet-go looks up the bounded decoder for
// every compressed codec it supports; it fails when a parquet-go upgrade
// moves the codec table that init replaces.
func TestInstalled(t *testing.T) {
	for _, c := range originals {
		if !installed(c.CompressionCodec()) {
			t.Errorf("%s: parquet-go does not use the bounded decoder", c)
		}
	}
	if installed(format.Uncompressed) {
		t.Errorf("UNCOMPRESSED is wrapped; it decompresses nothing")
	}
}

// payload returns n bytes that compress well but not trivially.
func payload(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = "abcdefgh"[r.IntN(8)]
	}
	return b
}

// TestDecode decodes pages of every codec with a declared size that is
// right, too small, and (for a 32 MiB page that claims 4 KiB) far too
// small, and corrupt pages: the right size round-trips into the caller's
// buffer, the others fail with ErrOversize (or a decode error) without
// allocating more than the declared size.
func TestDecode(t *testing.T) {
	small, big := payload(64<<10), bytes.Repeat([]byte("z"), 32<<20)
	for _, orig := range originals {
		codec := parquet.LookupCompressionCodec(orig.CompressionCodec())
		encSmall, err := orig.Encode(nil, small)
		if err != nil {
			t.Fatal(err)
		}
		encBig, err := orig.Encode(nil, big)
		if err != nil {
			t.Fatal(err)
		}
		corrupt := bytes.Repeat([]byte{0xff}, len(encSmall))
		for _, c := range []struct {
			name     string
			src      []byte
			declared int
			want     []byte // nil: an error
			oversize bool   // the error is ErrOversize
		}{
			{"exact", encSmall, len(small), small, false},
			{"one byte short", encSmall, len(small) - 1, nil, true},
			{"half", encSmall, len(small) / 2, nil, true},
			{"32 MiB claims 4 KiB", encBig, 4 << 10, nil, true},
			{"corrupt", corrupt, len(small), nil, false},
		} {
			t.Run(orig.String()+"/"+c.name, func(t *testing.T) {
				dst := make([]byte, c.declared)
				var ms0, ms1 runtime.MemStats
				runtime.ReadMemStats(&ms0)
				got, err := codec.Decode(dst, c.src)
				runtime.ReadMemStats(&ms1)
				// Decoder state comes on top: brotli's ring buffer is
				// as large as the stream's window (at most 16 MiB).
				state := uint64(1 << 20)
				if orig == &parquet.Brotli {
					state += 16 << 20
				}
				if alloc := ms1.TotalAlloc - ms0.TotalAlloc; alloc > uint64(c.declared)+state {
					t.Errorf("allocated %d bytes for a page of %d", alloc, c.declared)
				}
				if c.want != nil {
					if err != nil || !bytes.Equal(got, c.want) {
						t.Fatalf("got %d bytes, %v; want %d bytes", len(got), err, len(c.want))
					}
					if &got[0] != &dst[0] {
						t.Errorf("decoded into a new buffer, not the caller's")
					}
					return
				}
				if err == nil {
					t.Fatalf("no error; got %d bytes", len(got))
				}
				if c.oversize && !errors.Is(err, ErrOversize) {
					t.Errorf("%v, want ErrOversize", err)
				}
			})
		}
	}
}

// TestUndeclared checks that a caller that gives no size is bounded by
// MaxUndeclared.
func TestUndeclared(t *testing.T) {
	big := make([]byte, MaxUndeclared+1)
	for _, orig := range []compress.Codec{&parquet.Gzip, &parquet.Zstd} {
		enc, err := orig.Encode(nil, big)
		if err != nil {
			t.Fatal(err)
		}
		codec := parquet.LookupCompressionCodec(orig.CompressionCodec())
		if _, err := codec.Decode(nil, enc); !errors.Is(err, ErrOversize) {
			t.Errorf("%s: %v, want ErrOversize", orig, err)
		}
		if got, err := codec.Decode(nil, enc[:0]); err == nil && len(got) != 0 {
			t.Errorf("%s: empty input gave %d bytes", orig, len(got))
		}
	}
}

// TestConcurrent decodes with every codec from many goroutines at once, as
// parquet-go does when row groups are read in parallel (run with -race):
// the pooled readers and the shared zstd decoder must not mix inputs.
func TestConcurrent(t *testing.T) {
	src := payload(256 << 10)
	var wg sync.WaitGroup
	for _, orig := range originals {
		enc, err := orig.Encode(nil, src)
		if err != nil {
			t.Fatal(err)
		}
		codec := parquet.LookupCompressionCodec(orig.CompressionCodec())
		for g := range 4 {
			wg.Go(func() {
				for i := range 8 {
					declared := len(src)
					if (g+i)%2 == 1 {
						declared-- // every other call fails
					}
					got, err := codec.Decode(make([]byte, declared), enc)
					switch {
					case declared == len(src) && (err != nil || !bytes.Equal(got, src)):
						t.Errorf("%s: %d bytes, %v", orig, len(got), err)
					case declared < len(src) && !errors.Is(err, ErrOversize):
						t.Errorf("%s: short page: %v", orig, err)
					}
				}
			})
		}
	}
	wg.Wait()
}
