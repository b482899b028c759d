package postings

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// testKeyValue makes the i-th distinct key value of kind k (deterministic,
// covering negatives, zeros inside byte strings and empty strings).
func testKeyValue(k KeyType, i int) parquet.Value {
	switch k.Kind {
	case KindBool:
		return parquet.BooleanValue(i%2 == 1)
	case KindInt32, KindDate:
		return parquet.Int32Value(int32(i*7919 - 500000))
	case KindInt64:
		return parquet.Int64Value(int64(i)*1_000_000_007 - 1<<40)
	case KindBinary:
		return parquet.ByteArrayValue([]byte{byte(i), 0, byte(i >> 8), 0xFF})
	case KindString:
		if i == 0 {
			return parquet.ByteArrayValue([]byte{})
		}
		return parquet.ByteArrayValue([]byte(fmt.Sprintf("doc-%d", i)))
	default:
		b := make([]byte, k.FixedLen)
		for j := range b {
			b[j] = byte(i >> (8 * (j % 4)))
		}
		return parquet.FixedLenByteArrayValue(b)
	}
}

// testRows makes rows for cids with counts[cid] rows each; keys are unique
// per row (a running counter spread over the key fields).
func testRows(t testing.TB, s Schema, counts map[int32]int, seed uint64) map[int32][]Row {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	out := map[int32][]Row{}
	n := 0
	cids := make([]int32, 0, len(counts))
	for c := range counts {
		cids = append(cids, c)
	}
	slices.Sort(cids)
	for _, cid := range cids {
		for range counts[cid] {
			vals := make([]parquet.Value, len(s.Keys))
			for j, k := range s.Keys {
				// for bools, the last field varies too; uniqueness comes from the other fields
				vals[j] = testKeyValue(k, n+j)
			}
			key, err := s.AppendKey(nil, vals)
			if err != nil {
				t.Fatal(err)
			}
			r := Row{CID: cid, Key: key}
			if s.HasCodes() {
				r.Offset = rng.Float32()*2 - 1
				r.Scale = rng.Float32() / 100
				r.Code = make([]byte, s.CodeLen())
				for j := range r.Code {
					r.Code[j] = byte(rng.IntN(256))
				}
				if s.Encoding == EncodingLVQ4 && s.Dim%2 == 1 {
					r.Code[len(r.Code)-1] &= 0x0F
				}
			}
			out[cid] = append(out[cid], r)
			n++
		}
	}
	return out
}

// writeBucket writes rows (by cid) into one file and returns its bytes and
// entry.
func writeBucket(t testing.TB, s Schema, bucket int32, rows map[int32][]Row, opts WriterOptions) ([]byte, FileEntry) {
	t.Helper()
	var buf bytes.Buffer
	bw, err := NewBucketWriter(&buf, s, bucket, opts)
	if err != nil {
		t.Fatal(err)
	}
	cids := make([]int32, 0, len(rows))
	for c := range rows {
		cids = append(cids, c)
	}
	slices.Sort(cids)
	for _, c := range cids {
		if err := bw.WriteCID(c, rows[c]); err != nil {
			t.Fatal(err)
		}
	}
	fe, err := bw.Close()
	if err != nil {
		t.Fatal(err)
	}
	if fe.Size != int64(buf.Len()) {
		t.Fatalf("entry size %d, wrote %d", fe.Size, buf.Len())
	}
	return buf.Bytes(), fe
}

func rowsEqual(a, b Row) bool {
	return a.CID == b.CID && bytes.Equal(a.Key, b.Key) && a.Offset == b.Offset && a.Scale == b.Scale && bytes.Equal(a.Code, b.Code)
}
