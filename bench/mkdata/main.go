// Command mkdata prepares benchmark datasets as Parquet (for ParqDB) and
// .fvecs (for FAISS and for `parqdb search --queries`):
//
//	mkdata fashion OUTDIR            Fashion-MNIST (Debian dataset-fashion-mnist): 60,000 train + 10,000 test × 784
//	mkdata fashion-payload OUTDIR    the 60,000 training rows with a second payload column, name
//	                                 (the class name, string): OUTDIR/fashion-payload.parquet, for
//	                                 joined-search benchmarks (docs/benchmarks.md, "Joined results")
//	mkdata synth -n N -d D OUTDIR    a seeded Gaussian mixture: N base vectors + 1,000 queries
//	                                 (-zstd-page-bytes B: zstd pages of ≈ B bytes;
//	                                 -no-page-index: no offset index, as pyarrow)
//	mkdata mixture -n N -d D OUTDIR  a seeded Gaussian mixture with unequal cluster sizes and
//	                                 spreads, streamed into several Parquet files in OUTDIR/base
//	                                 (10M × 96: ~4 GB) + 1,000 queries; -normalize scales
//	                                 every row to unit length (for --metric cosine; files
//	                                 named mixture-NxD-unit; 10M × 384: ~15 GB of Parquet)
//
// Parquet files have columns id (int64, the key), label (int32) and vec
// (list<float>).
package main

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/parquet-go/parquet-go"

	"github.com/parqdb/parqdb/internal/fvecs"
	"github.com/parqdb/parqdb/internal/source/sourcetest"
)

// Row is one benchmark vector.
type Row struct {
	ID    int64     `parquet:"id"`
	Label int32     `parquet:"label"`
	Vec   []float32 `parquet:"vec,list"`
}

const fashionDir = "/usr/share/datasets/fashion-mnist"

// zstdPageBytes, when > 0, makes writeStream write zstd pages of about
// that many bytes (synth -zstd-page-bytes) instead of Snappy ones.
var zstdPageBytes int

// noPageIndex makes writeStream leave the page index out of the footer
// (synth -no-page-index).
var noPageIndex bool

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "mkdata:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) < 1 {
		return errors.New("usage: mkdata fashion OUTDIR | mkdata fashion-payload OUTDIR | mkdata synth [-n N] [-d D] [-clusters K] [-seed S] OUTDIR | mkdata mixture [-n N] [-d D] [-clusters K] [-files F] [-seed S] [-fvecs=false] [-normalize] OUTDIR")
	}
	switch args[0] {
	case "fashion":
		if len(args) != 2 {
			return errors.New("usage: mkdata fashion OUTDIR")
		}
		return fashion(args[1])
	case "fashion-payload":
		if len(args) != 2 {
			return errors.New("usage: mkdata fashion-payload OUTDIR")
		}
		return fashionPayload(args[1])
	case "synth":
		fs := flag.NewFlagSet("synth", flag.ContinueOnError)
		n := fs.Int("n", 1_000_000, "base vectors")
		d := fs.Int("d", 128, "dimension")
		k := fs.Int("clusters", 1000, "mixture components")
		q := fs.Int("queries", 1000, "query vectors")
		seed := fs.Uint64("seed", 1, "seed")
		fs.IntVar(&zstdPageBytes, "zstd-page-bytes", 0, "write zstd pages of about this many bytes (0: Snappy, parquet-go's default page size)")
		fs.BoolVar(&noPageIndex, "no-page-index", false, "write no column or offset index (as pyarrow by default)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if fs.NArg() != 1 {
			return errors.New("synth: want OUTDIR")
		}
		return synth(fs.Arg(0), *n, *d, *k, *q, *seed)
	case "mixture":
		fs := flag.NewFlagSet("mixture", flag.ContinueOnError)
		var m mixture
		fs.Int64Var(&m.n, "n", 10_000_000, "base vectors")
		fs.IntVar(&m.d, "d", 96, "dimension")
		fs.IntVar(&m.k, "clusters", 2000, "mixture components")
		fs.IntVar(&m.files, "files", 10, "Parquet files the base vectors are split into")
		fs.IntVar(&m.q, "queries", 1000, "query vectors")
		fs.Uint64Var(&m.seed, "seed", 1, "seed")
		fs.BoolVar(&m.fvecs, "fvecs", true, "also write the base vectors as one .fvecs file (for FAISS)")
		fs.BoolVar(&m.normalize, "normalize", false, "scale every vector to unit length (a cosine dataset)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if fs.NArg() != 1 {
			return errors.New("mixture: want OUTDIR")
		}
		return m.write(fs.Arg(0))
	}
	return fmt.Errorf("unknown dataset %q", args[0])
}

func fashion(out string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, part := range []struct{ images, labels, name string }{
		{"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "fashion-train"},
		{"t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz", "fashion-test"},
	} {
		imgs, dim, err := readIDX(filepath.Join(fashionDir, part.images))
		if err != nil {
			return err
		}
		labels, _, err := readIDX(filepath.Join(fashionDir, part.labels))
		if err != nil {
			return err
		}
		n := len(labels)
		rows := make([]Row, n)
		for i := range rows {
			v := make([]float32, dim)
			for j := range v {
				v[j] = float32(imgs[i*dim+j])
			}
			rows[i] = Row{ID: int64(i), Label: int32(labels[i]), Vec: v}
		}
		if err := writeAll(out, part.name, rows); err != nil {
			return err
		}
	}
	return nil
}

// PayloadRow is a Fashion-MNIST row with the class name as a second
// payload column.
type PayloadRow struct {
	ID    int64     `parquet:"id"`
	Label int32     `parquet:"label"`
	Name  string    `parquet:"name"`
	Vec   []float32 `parquet:"vec,list"`
}

// fashionClasses are Fashion-MNIST's class names by label.
var fashionClasses = [10]string{"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
	"Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"}

// fashionPayload writes OUT/fashion-payload.parquet: the training rows of
// fashion (same ids, labels and vectors, so fashion-test.fvecs queries
// it) plus the class name.
func fashionPayload(out string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	imgs, dim, err := readIDX(filepath.Join(fashionDir, "train-images-idx3-ubyte.gz"))
	if err != nil {
		return err
	}
	labels, _, err := readIDX(filepath.Join(fashionDir, "train-labels-idx1-ubyte.gz"))
	if err != nil {
		return err
	}
	rows := make([]PayloadRow, len(labels))
	for i := range rows {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(imgs[i*dim+j])
		}
		l := labels[i]
		if int(l) >= len(fashionClasses) {
			return fmt.Errorf("train-labels-idx1-ubyte.gz: row %d: label %d is not a Fashion-MNIST class (0-9)", i, l)
		}
		rows[i] = PayloadRow{ID: int64(i), Label: int32(l), Name: fashionClasses[l], Vec: v}
	}
	pf, err := os.Create(filepath.Join(out, "fashion-payload.parquet"))
	if err != nil {
		return err
	}
	defer pf.Close()
	w := parquet.NewGenericWriter[PayloadRow](pf, parquet.Compression(&parquet.Snappy), parquet.MaxRowsPerRowGroup(65536))
	if _, err := w.Write(rows); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return pf.Close()
}

// readIDX reads a gzipped IDX file of unsigned bytes; dim is the product of
// all dimensions after the first.
func readIDX(path string) ([]byte, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("%w (install Debian's dataset-fashion-mnist)", err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	var hdr [4]byte
	if _, err := io.ReadFull(z, hdr[:]); err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	if hdr[2] != 0x08 {
		return nil, 0, fmt.Errorf("%s: not an unsigned-byte IDX file", path)
	}
	ndim := int(hdr[3])
	dims := make([]uint32, ndim)
	if err := binary.Read(z, binary.BigEndian, dims); err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	dim := 1
	for _, d := range dims[1:] {
		dim *= int(d)
	}
	data, err := io.ReadAll(z)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) != int(dims[0])*dim {
		return nil, 0, fmt.Errorf("%s: %d bytes, want %d", path, len(data), int(dims[0])*dim)
	}
	return data, dim, nil
}

func synth(out string, n, d, k, q int, seed uint64) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	centers := make([]float32, k*d)
	for i := range centers {
		centers[i] = float32(rng.NormFloat64())
	}
	gen := func(i int64) Row {
		c := rng.IntN(k)
		v := make([]float32, d)
		for j := range v {
			v[j] = centers[c*d+j] + 0.35*float32(rng.NormFloat64())
		}
		return Row{ID: i, Label: int32(c), Vec: v}
	}
	name := fmt.Sprintf("synth-%dx%d", n, d)
	if err := writeStream(out, name, int64(n), gen); err != nil {
		return err
	}
	return writeStream(out, name+"-queries", int64(q), gen)
}

func writeAll(out, name string, rows []Row) error {
	return writeStream(out, name, int64(len(rows)), func(i int64) Row { return rows[i] })
}

// writeStream writes OUT/NAME.parquet and OUT/NAME.fvecs from a row generator.
func writeStream(out, name string, n int64, gen func(int64) Row) error {
	pf, err := os.Create(filepath.Join(out, name+".parquet"))
	if err != nil {
		return err
	}
	defer pf.Close()
	ff, err := os.Create(filepath.Join(out, name+".fvecs"))
	if err != nil {
		return err
	}
	defer ff.Close()
	fw := bufio.NewWriterSize(ff, 1<<20)
	opts := []parquet.WriterOption{parquet.Compression(&parquet.Snappy), parquet.MaxRowsPerRowGroup(65536)}
	if zstdPageBytes > 0 {
		opts = append(opts, parquet.Compression(&parquet.Zstd), parquet.PageBufferSize(zstdPageBytes))
	}
	w := parquet.NewGenericWriter[Row](pf, opts...)
	batch := make([]Row, 0, 4096)
	flush := func() error {
		if _, err := w.Write(batch); err != nil {
			return err
		}
		batch = batch[:0]
		return nil
	}
	var rec []byte
	for i := int64(0); i < n; i++ {
		r := gen(i)
		rec = fvecs.Append(rec[:0], r.Vec)
		fw.Write(rec)
		batch = append(batch, r)
		if len(batch) == cap(batch) {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	if err := fw.Flush(); err != nil {
		return err
	}
	if err := ff.Close(); err != nil {
		return err
	}
	if err := pf.Close(); err != nil {
		return err
	}
	if noPageIndex {
		return stripPageIndex(filepath.Join(out, name+".parquet"))
	}
	return nil
}

// stripPageIndex rewrites the footer of the Parquet file at path so that
// it names no column or offset index (sourcetest.StripPageIndex).
func stripPageIndex(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, err := sourcetest.StripPageIndex(data)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, out, 0o644)
}
