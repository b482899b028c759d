package postings

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"
)

func TestCentroidsRoundTrip(t *testing.T) {
	const dim, c = 5, 70
	buckets := make([]int32, c)
	offs, scales := make([]float32, c), make([]float32, c)
	codes := make([]byte, c*dim)
	for i := range c {
		buckets[i] = int32(i / 30)
		offs[i] = float32(i) - 35
		scales[i] = float32(i) / 1000
		for j := range dim {
			codes[i*dim+j] = byte(i*7 + j)
		}
	}
	var buf bytes.Buffer
	if err := WriteCentroids(&buf, dim, buckets, offs, scales, codes); err != nil {
		t.Fatal(err)
	}
	b, o, s, cd, err := ReadCentroids(bytes.NewReader(buf.Bytes()), int64(buf.Len()), dim)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(b, buckets) || !slices.Equal(o, offs) || !slices.Equal(s, scales) || !bytes.Equal(cd, codes) {
		t.Fatal("centroids differ after round trip")
	}
	if err := CheckHierarchy(b, []int32{0, 30, 60, 70}); err != nil {
		t.Fatal(err)
	}
	if err := CheckHierarchy(b, []int32{0, 31, 60, 70}); err == nil {
		t.Fatal("CheckHierarchy accepted a wrong interval")
	}
	if _, _, _, _, err := ReadCentroids(bytes.NewReader(buf.Bytes()), int64(buf.Len()), dim+1); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("read with the wrong dimension: %v", err)
	}
}

// TestCentroidsInvalid writes files that break one §5 rule each (with a raw
// parquet-go writer, bypassing WriteCentroids' checks) and expects
// ReadCentroids to refuse them.
func TestCentroidsInvalid(t *testing.T) {
	const dim = 2
	type row struct {
		cid, bucket   int32
		offset, scale float32
		code          []byte
	}
	good := []row{{0, 0, 0, 1, []byte{1, 2}}, {1, 0, 0, 1, []byte{3, 4}}, {2, 1, 0, 1, []byte{5, 6}}}
	cases := map[string]func([]row) []row{
		"duplicate cid":     func(r []row) []row { r[1].cid = 0; return r },
		"cid out of range":  func(r []row) []row { r[2].cid = 3; return r },
		"negative cid":      func(r []row) []row { r[0].cid = -1; return r },
		"short code":        func(r []row) []row { r[1].code = []byte{1}; return r },
		"nan offset":        func(r []row) []row { r[1].offset = float32(math.NaN()); return r },
		"negative scale":    func(r []row) []row { r[1].scale = -1; return r },
		"bucket gap":        func(r []row) []row { r[2].bucket = 2; return r },
		"first bucket":      func(r []row) []row { r[0].bucket, r[1].bucket, r[2].bucket = 1, 1, 1; return r },
		"infinite recon":    func(r []row) []row { r[0].offset, r[0].scale = math.MaxFloat32, math.MaxFloat32; return r },
		"reordered (valid)": func(r []row) []row { r[0], r[2] = r[2], r[0]; return r },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			rows := mutate(slices.Clone(good))
			var buf bytes.Buffer
			w := parquet.NewGenericWriter[any](&buf, writerOptions(centroidsSchema)...)
			for _, r := range rows {
				if _, err := w.WriteRows([]parquet.Row{{
					parquet.Int32Value(r.cid).Level(0, 0, 0), parquet.Int32Value(r.bucket).Level(0, 0, 1),
					parquet.FloatValue(r.offset).Level(0, 0, 2), parquet.FloatValue(r.scale).Level(0, 0, 3),
					parquet.ByteArrayValue(r.code).Level(0, 0, 4),
				}}); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			_, _, _, _, err := ReadCentroids(bytes.NewReader(buf.Bytes()), int64(buf.Len()), dim)
			if name == "reordered (valid)" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("got %v, want ErrCorrupt", err)
			}
		})
	}
}

func TestRootsRoundTripAndInvalid(t *testing.T) {
	const dim = 3
	offsets := []int32{0, 2, 5, 9}
	roots := []float32{1, 2, 3, 4, 5, 6, 7, 8, -9}
	var buf bytes.Buffer
	if err := WriteRoots(&buf, dim, offsets, roots); err != nil {
		t.Fatal(err)
	}
	o, r, err := ReadRoots(bytes.NewReader(buf.Bytes()), int64(buf.Len()), dim)
	if err != nil || !slices.Equal(o, offsets) || !slices.Equal(r, roots) {
		t.Fatalf("round trip: %v %v %v", o, r, err)
	}
	if _, _, err := ReadRoots(bytes.NewReader(buf.Bytes()), int64(buf.Len()), 2); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("read with dimension 2: %v", err)
	}
	type row struct {
		bucket, begin, end int32
		centroid           []float32
	}
	good := []row{{0, 0, 2, []float32{1, 2, 3}}, {1, 2, 5, []float32{4, 5, 6}}}
	cases := map[string]func([]row) []row{
		"bucket order":   func(r []row) []row { r[0], r[1] = r[1], r[0]; return r },
		"gap":            func(r []row) []row { r[1].begin = 3; return r },
		"empty interval": func(r []row) []row { r[1].begin, r[1].end = 2, 2; return r },
		"first begin":    func(r []row) []row { r[0].begin = 1; return r },
		"short centroid": func(r []row) []row { r[1].centroid = r[1].centroid[:2]; return r },
		"nan centroid":   func(r []row) []row { r[1].centroid = []float32{1, float32(math.NaN()), 2}; return r },
		"empty centroid": func(r []row) []row { r[1].centroid = nil; return r },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			rows := mutate(slices.Clone(good))
			var buf bytes.Buffer
			w := parquet.NewGenericWriter[any](&buf, writerOptions(rootsSchema)...)
			for _, r := range rows {
				pr := parquet.Row{parquet.Int32Value(r.bucket).Level(0, 0, 0), parquet.Int32Value(r.begin).Level(0, 0, 1), parquet.Int32Value(r.end).Level(0, 0, 2)}
				for j, v := range r.centroid {
					rep := 1
					if j == 0 {
						rep = 0
					}
					pr = append(pr, parquet.FloatValue(v).Level(rep, 1, 3))
				}
				if len(r.centroid) == 0 {
					pr = append(pr, parquet.NullValue().Level(0, 0, 3))
				}
				if _, err := w.WriteRows([]parquet.Row{pr}); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if _, _, err := ReadRoots(bytes.NewReader(buf.Bytes()), int64(buf.Len()), dim); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("got %v, want ErrCorrupt", err)
			}
		})
	}
}

// TestTablesRefuseOtherSchemas: a postings file is not a centroids table,
// a dictionary-encoded or compressed centroids file is refused, and bytes
// that are not Parquet are refused with ErrCorrupt.
func TestTablesRefuseOtherSchemas(t *testing.T) {
	_, data, _ := fixture(t)
	if _, _, _, _, err := ReadCentroids(bytes.NewReader(data), int64(len(data)), 5); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("postings as centroids: %v", err)
	}
	if _, _, err := ReadRoots(bytes.NewReader(data), int64(len(data)), 5); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("postings as roots: %v", err)
	}
	junk := []byte("PAR1 this is not parquet PAR1")
	if _, _, _, _, err := ReadCentroids(bytes.NewReader(junk), int64(len(junk)), 5); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("junk: %v", err)
	}
	type cent struct {
		CID       int32   `parquet:"cid"`
		CIDBucket int32   `parquet:"cid_bucket"`
		Offset    float32 `parquet:"offset"`
		Scale     float32 `parquet:"scale"`
		Code      []byte  `parquet:"code,dict"`
	}
	var buf bytes.Buffer
	if err := parquet.Write(&buf, []cent{{0, 0, 0, 1, []byte{1, 2}}}); err != nil {
		t.Fatal(err)
	}
	if _, _, _, _, err := ReadCentroids(bytes.NewReader(buf.Bytes()), int64(buf.Len()), 2); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("dictionary-encoded code: %v", err)
	}
	type centZ struct {
		CID       int32   `parquet:"cid"`
		CIDBucket int32   `parquet:"cid_bucket"`
		Offset    float32 `parquet:"offset"`
		Scale     float32 `parquet:"scale"`
		Code      []byte  `parquet:"code,zstd"`
	}
	buf.Reset()
	if err := parquet.Write(&buf, []centZ{{0, 0, 0, 1, []byte{1, 2}}}); err != nil {
		t.Fatal(err)
	}
	if _, _, _, _, err := ReadCentroids(bytes.NewReader(buf.Bytes()), int64(buf.Len()), 2); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("zstd code: %v", err)
	}
}
