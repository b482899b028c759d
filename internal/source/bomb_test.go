package source

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/parqdb/parqdb/internal/pagecodec"
	"github.com/parqdb/parqdb/internal/source/sourcetest"
	"github.com/parqdb/parqdb/storage"
)

// bombCodecs are the compressed codecs parquet-go writes.
var bombCodecs = []compress.Codec{&parquet.Snappy, &parquet.Gzip, &parquet.Brotli, &parquet.Zstd, &parquet.Lz4Raw}

// bombSource writes a compressible source with columns id, embedding (32
// floats) and text (1 KiB of one letter per row), one row group.
func bombSource(t *testing.T, codec compress.Codec) []byte {
	t.Helper()
	tab := &sourcetest.Table{
		Fields: []sourcetest.Field{
			sourcetest.F("id", parquet.Leaf(parquet.Int64Type)),
			sourcetest.F("embedding", sourcetest.VectorNode(sourcetest.List3, false, false)),
			sourcetest.F("text", parquet.String()),
		},
		Codec: codec,
	}
	for i := range 400 {
		vec := make([]float32, 32)
		for j := range vec {
			vec[j] = float32(i%7 + j)
		}
		tab.Rows = append(tab.Rows, []any{int64(i), vec, strings.Repeat("x", 1024)})
	}
	var buf bytes.Buffer
	if err := tab.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// rewritePage lets edit change the header and the body (in place) of the
// first data page of leaf column col in row group 0, and returns the file
// with the page rewritten, its CRC recomputed as a forger would. The
// header must keep its encoded length, so that no offset moves; edit is
// called with attempt = 0, 1, ... until it does.
func rewritePage(t *testing.T, data []byte, col int, edit func(attempt int, h *format.PageHeader, body []byte)) []byte {
	t.Helper()
	pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	off := pf.Metadata().RowGroups[0].Columns[col].MetaData.DataPageOffset
	proto := new(thrift.CompactProtocol)
	var h format.PageHeader
	if err := thrift.NewDecoder(proto.NewReader(bytes.NewReader(data[off:]))).Decode(&h); err != nil {
		t.Fatal(err)
	}
	enc, err := thrift.Marshal(proto, &h)
	if err != nil || !bytes.Equal(enc, data[off:off+int64(len(enc))]) {
		t.Fatalf("page header at %d does not re-encode to its bytes (%v)", off, err)
	}
	hl := int64(len(enc))
	for attempt := range 64 {
		out := bytes.Clone(data)
		nh := h
		body := out[off+hl : off+hl+int64(h.CompressedPageSize)]
		edit(attempt, &nh, body)
		if nh.CRC != 0 {
			nh.CRC = int32(crc32.ChecksumIEEE(body))
		}
		enc, err := thrift.Marshal(proto, &nh)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(enc)) == hl {
			copy(out[off:], enc)
			return out
		}
	}
	t.Fatal("no edit kept the page header's length")
	return nil
}

// levelBytes returns the uncompressed level bytes that lead a version 2
// data page.
func levelBytes(h *format.PageHeader) int32 {
	if !h.DataPageHeaderV2.Valid {
		return 0
	}
	return h.DataPageHeaderV2.V.RepetitionLevelsByteLength + h.DataPageHeaderV2.V.DefinitionLevelsByteLength
}

// lieAboutSize declares the page a quarter, a half, or a few bytes less
// of its values' real uncompressed size (the first that keeps the
// header's length).
func lieAboutSize(attempt int, h *format.PageHeader, _ []byte) {
	values := h.UncompressedPageSize - levelBytes(h)
	switch attempt {
	case 0:
		values /= 4
	case 1:
		values /= 2
	default:
		values -= int32(attempt - 1)
	}
	h.UncompressedPageSize = levelBytes(h) + values
}

// corruptBody overwrites the compressed body with bytes that no codec
// decodes (for LZ4_RAW: literal runs that overrun the block).
func corruptBody(attempt int, h *format.PageHeader, body []byte) {
	body = body[levelBytes(h):]
	for i := range body {
		body[i] = 0xff
	}
	if len(body) > 8 {
		body[len(body)-1] = byte(attempt)
	}
}

// heapBytes returns the bytes of live and unswept heap objects.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// withinMemory runs fn, aborting the whole test binary (a goroutine that
// decodes without bound cannot be stopped any other way) if the heap grows
// more than limit bytes above where it started.
func withinMemory(t *testing.T, limit uint64, fn func()) {
	t.Helper()
	base := heapBytes()
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if h := heapBytes(); h > base+limit {
					panic(fmt.Sprintf("%s: heap grew by %d MiB, limit %d MiB: decompression is not bounded", t.Name(), (h-base)>>20, limit>>20))
				}
			}
		}
	}()
	defer close(done)
	fn()
}

// TestCompressedPageBomb reads sources whose first embedding or text page
// lies about its uncompressed size, or whose LZ4_RAW page is corrupt, with
// every codec and every read path: each fails with ErrCorrupt naming the
// file, the column and the cause, and the heap stays within 64 MiB.
// Before pagecodec, a lying page was decoded in full and read as if it
// were fine, and a corrupt LZ4_RAW page grew the heap without bound.
func TestCompressedPageBomb(t *testing.T) {
	ctx := context.Background()
	for _, codec := range bombCodecs {
		clean := bombSource(t, codec)
		type bombCase struct {
			name string
			col  int // leaf column: 0 id, 1 embedding, 2 text
			edit func(int, *format.PageHeader, []byte)
		}
		cases := []bombCase{{"embedding lies", 1, lieAboutSize}, {"text lies", 2, lieAboutSize}}
		if codec == &parquet.Lz4Raw {
			cases = append(cases, bombCase{"embedding corrupt", 1, corruptBody}, bombCase{"text corrupt", 2, corruptBody})
		}
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/%s", codec, c.name), func(t *testing.T) {
				dir := t.TempDir()
				const key = "bomb.parquet"
				if err := os.WriteFile(filepath.Join(dir, key), rewritePage(t, clean, c.col, c.edit), 0o666); err != nil {
					t.Fatal(err)
				}
				b, err := storage.NewLocal(dir)
				if err != nil {
					t.Fatal(err)
				}
				withinMemory(t, 64<<20, func() {
					st, err := Open(ctx, b, key)
					if err != nil {
						t.Fatal(err)
					}
					defer st.Close()
					locs := []RowLoc{{0, 0}, {0, 399}}
					reads := map[string]error{}
					_, reads["ReadRows"] = st.ReadRows(ctx, locs, []string{"id", "embedding", "text"})
					l, err := st.Check(ctx, l2("embedding", "id"))
					switch {
					case c.col == 1 && err != nil:
						reads["Check"] = err // it reads the first vector
					case c.col == 1:
						reads["Scan"] = st.Scan(ctx, l, 0, func(*Batch) error { return nil })
						reads["ReadVectors"] = st.ReadVectors(ctx, l, locs, make([]float32, 2*l.Dim))
					case err != nil:
						t.Fatal(err)
					}
					for name, err := range reads {
						column := []string{"", "embedding", "text"}[c.col]
						switch {
						case err == nil:
							t.Errorf("%s: no error", name)
						case !errors.Is(err, ErrCorrupt) || !errors.Is(err, pagecodec.ErrOversize):
							t.Errorf("%s: %v, want ErrCorrupt and pagecodec.ErrOversize", name, err)
						case !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), column):
							t.Errorf("%s: %v does not name the file %q and the column %q", name, err, key, column)
						}
					}
				})
			})
		}
	}
}
