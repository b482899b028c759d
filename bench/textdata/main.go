// Command textdata writes the text-embedding benchmark set made by
// textdata.py as Parquet for ParqDB:
//
//	/usr/bin/python3 bench/textdata/textdata.py Translation-en OUTDIR   # vectors, queries, ground truth
//	go run ./bench/textdata OUTDIR                                      # OUTDIR/text-base.parquet
//
// text-base.parquet has columns id (int64, the key; the row number in
// text-base.fvecs, which text-gt.ivecs uses), text (the document, cut to 256
// bytes at a rune boundary) and vec (list<float>, L2-normalised: use metric
// cosine). See textdata.py for the corpus and the embedding.
package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"
)

// Row is one document and its embedding.
type Row struct {
	ID   int64     `parquet:"id"`
	Text string    `parquet:"text"`
	Vec  []float32 `parquet:"vec,list"`
}

const snippet = 256

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: textdata OUTDIR (after bench/textdata/textdata.py wrote OUTDIR/text-base.fvecs and text-base.tsv)")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "textdata:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	vecPath, tsvPath := filepath.Join(dir, "text-base.fvecs"), filepath.Join(dir, "text-base.tsv")
	vf, err := os.Open(vecPath)
	if err != nil {
		return fmt.Errorf("%w (run bench/textdata/textdata.py first)", err)
	}
	defer vf.Close()
	tf, err := os.Open(tsvPath)
	if err != nil {
		return fmt.Errorf("%w (run bench/textdata/textdata.py first)", err)
	}
	defer tf.Close()
	out := filepath.Join(dir, "text-base.parquet")
	pf, err := os.Create(out)
	if err != nil {
		return err
	}
	defer pf.Close()
	w := parquet.NewGenericWriter[Row](pf, parquet.Compression(&parquet.Snappy), parquet.MaxRowsPerRowGroup(65536))
	vr := bufio.NewReaderSize(vf, 1<<20)
	ts := bufio.NewScanner(tf)
	ts.Buffer(make([]byte, 1<<20), 1<<24)
	batch := make([]Row, 0, 4096)
	var n int64
	for ; ; n++ {
		vec, err := readFvec(vr)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%s vector %d: %w", vecPath, n, err)
		}
		if !ts.Scan() {
			return fmt.Errorf("%s: %d lines, but %s has more vectors", tsvPath, n, vecPath)
		}
		id, text, ok := strings.Cut(ts.Text(), "\t")
		if want := strconv.FormatInt(n, 10); !ok || id != want {
			return fmt.Errorf("%s line %d: id %q, want %s", tsvPath, n+1, id, want)
		}
		batch = append(batch, Row{ID: n, Text: cut(text, snippet), Vec: vec})
		if len(batch) == cap(batch) {
			if _, err := w.Write(batch); err != nil {
				return fmt.Errorf("write %s: %w", out, err)
			}
			batch = batch[:0]
		}
	}
	if ts.Scan() {
		return fmt.Errorf("%s: more lines than the %d vectors of %s", tsvPath, n, vecPath)
	}
	if _, err := w.Write(batch); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	fmt.Fprintf(os.Stderr, "textdata: wrote %d rows to %s\n", n, out)
	return pf.Close()
}

// readFvec reads one .fvecs record (int32 dimension, then float32s).
func readFvec(r io.Reader) ([]float32, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	d := int(int32(binary.LittleEndian.Uint32(hdr[:])))
	if d <= 0 || d > 1<<16 {
		return nil, fmt.Errorf("dimension %d out of range", d)
	}
	buf := make([]byte, 4*d)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, io.ErrUnexpectedEOF
	}
	v := make([]float32, d)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:]))
	}
	return v, nil
}

// cut returns s cut to at most n bytes at a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
