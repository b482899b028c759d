package postings

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
)

// TestCompressedTablesRefused writes centroid and root tables with every
// compressed codec: the profile allows only UNCOMPRESSED, so the readers
// refuse them from the footer, naming the table, column and codec, before
// any page reaches a decompressor (a tampered index table cannot become a
// decompression bomb; internal/pagecodec bounds the decoders as well).
func TestCompressedTablesRefused(t *testing.T) {
	codecs := []compress.Codec{&parquet.Snappy, &parquet.Gzip, &parquet.Brotli, &parquet.Zstd, &parquet.Lz4Raw}
	for _, codec := range codecs {
		t.Run(codec.String(), func(t *testing.T) {
			// the centroids schema with every leaf compressed by codec
			leaf := func(name string, n parquet.Node) parquet.Field {
				return &namedField{Node: parquet.Compressed(parquet.Encoded(n, &parquet.Plain), codec), name: name}
			}
			schema := parquet.NewSchema("ivf_centroids", orderedGroup{
				leaf("cid", parquet.Int(32)), leaf("cid_bucket", parquet.Int(32)),
				leaf("offset", parquet.Leaf(parquet.FloatType)), leaf("scale", parquet.Leaf(parquet.FloatType)),
				leaf("code", parquet.Leaf(parquet.ByteArrayType)),
			})
			var buf bytes.Buffer
			w := parquet.NewGenericWriter[any](&buf, writerOptions(schema)...)
			if _, err := w.WriteRows([]parquet.Row{{
				parquet.Int32Value(0).Level(0, 0, 0), parquet.Int32Value(0).Level(0, 0, 1),
				parquet.FloatValue(0).Level(0, 0, 2), parquet.FloatValue(1).Level(0, 0, 3),
				parquet.ByteArrayValue(bytes.Repeat([]byte{7}, 4096)).Level(0, 0, 4),
			}}); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			_, _, _, _, err := ReadCentroids(bytes.NewReader(buf.Bytes()), int64(buf.Len()), 4096)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), codec.String()) || !strings.Contains(err.Error(), "column cid") {
				t.Errorf("centroids: %v, want ErrCorrupt naming column cid and %s", err, codec)
			}

			buf.Reset()
			// the roots schema's list leaf takes the default codec
			w = parquet.NewGenericWriter[any](&buf, append(writerOptions(rootsSchema), parquet.Compression(codec))...)
			row := parquet.Row{parquet.Int32Value(0).Level(0, 0, 0), parquet.Int32Value(0).Level(0, 0, 1), parquet.Int32Value(1).Level(0, 0, 2)}
			for j := range 3 {
				row = append(row, parquet.FloatValue(float32(j)).Level(min(j, 1), 1, 3))
			}
			if _, err := w.WriteRows([]parquet.Row{row}); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			_, _, err = ReadRoots(bytes.NewReader(buf.Bytes()), int64(buf.Len()), 3)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), codec.String()) {
				t.Errorf("roots: %v, want ErrCorrupt naming %s", err, codec)
			}
		})
	}
}
