package postings

import (
	"encoding/binary"
	"github.com/parqdb/parqdb/internal/keyenc"
	"io"
	"math/rand/v2"
	"testing"
)

// benchRows makes n lvq8 rows of dim 768 with int64 keys spread over
// groups cids; codes share one backing array.
func benchRows(n, cids int) (Schema, [][]Row) {
	s := Schema{Encoding: EncodingLVQ8, Dim: 768, Keys: []KeyType{{Name: "id", Kind: KindInt64}}}
	rng := rand.New(rand.NewPCG(1, 2))
	codes := make([]byte, n*768)
	for i := 0; i+8 <= len(codes); i += 8 {
		binary.LittleEndian.PutUint64(codes[i:], rng.Uint64())
	}
	out := make([][]Row, cids)
	for i := range n {
		cid := int32(i % cids)
		out[cid] = append(out[cid], Row{
			CID: cid, Key: keyenc.AppendInt64(nil, int64(i)), Offset: -1, Scale: 0.01,
			Code: codes[i*768 : (i+1)*768],
		})
	}
	return s, out
}

// BenchmarkWriteBucket writes 200k rows × 768-byte codes in 1,000 row
// groups (one CID each) to io.Discard.
func BenchmarkWriteBucket(b *testing.B) {
	const n, cids = 200_000, 1000
	s, rows := benchRows(n, cids)
	b.SetBytes(int64(n * 768))
	b.ResetTimer()
	for b.Loop() {
		bw, err := NewBucketWriter(io.Discard, s, 0, WriterOptions{})
		if err != nil {
			b.Fatal(err)
		}
		for cid, rs := range rows {
			if err := bw.WriteCID(int32(cid), rs); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := bw.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeRowGroup decodes one row group of 200 and one of 4,096
// lvq8 rows (768-byte codes) from its fetched bytes; MB/s is the range
// bytes decoded per second.
func BenchmarkDecodeRowGroup(b *testing.B) {
	for _, n := range []int{200, 4096} {
		b.Run(itoa(n), func(b *testing.B) {
			s, rows := benchRows(n, 1)
			data, fe := writeBucket(b, s, 0, map[int32][]Row{0: rows[0]}, WriterOptions{})
			rg := fe.Ranges[0]
			rg.File = 0
			buf := data[rg.Offset : rg.Offset+rg.Length]
			var batch Batch
			b.SetBytes(rg.Length)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				batch.Reset()
				if err := DecodeRowGroup(s, buf, rg, &batch); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkParseManifest parses a manifest of 4,096 CIDs in 64 files.
func BenchmarkParseManifest(b *testing.B) {
	m := &Manifest{Encoding: EncodingLVQ8, Dim: 768, KeyTypes: []KeyType{{Kind: KindInt64}}, NList: 4096}
	for f := range 64 {
		m.Files = append(m.Files, FileEntry{Path: "indexes/2f1c7f5e3c434a448f2acf560c4db8d1/701-00000000000000aa/ivf_postings/" + BucketFileName(int32(f), 0), Size: 1 << 30, Bucket: int32(f), Rows: 64 * 250, RowGroups: 64})
		for g := range 64 {
			m.RowGroups = append(m.RowGroups, Range{CID: int32(f*64 + g), File: int32(f), RowGroup: int32(g), Offset: 4 + int64(g)*250*800, Length: 250 * 800, Rows: 250, CRC32C: 0xDEADBEEF})
		}
	}
	m.Rows, m.CIDs = 4096*250, 4096
	data, err := m.Marshal()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := ParseManifest(data); err != nil {
			b.Fatal(err)
		}
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
