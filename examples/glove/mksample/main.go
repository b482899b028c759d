// Command mksample converts the GloVe 6B 50d sample (the 10,000 most
// frequent words, one "word v1 … v50" line each) into the Parquet file
// examples/glove/glove-10k.parquet that ParqDB's quick start indexes.
//
//	go run ./examples/glove/mksample ../shared/datasets/glove-6B-50d-10k/glove.6B.50d.10k.zip examples/glove/glove-10k.parquet
package main

import (
	"archive/zip"
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// Word is one row of the sample: the word (the key), its frequency rank and
// its 50-dimensional GloVe embedding.
type Word struct {
	Word      string    `parquet:"word"`
	Rank      int32     `parquet:"rank"`
	Embedding []float32 `parquet:"embedding,list"`
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: mksample GLOVE.zip OUT.parquet")
		os.Exit(2)
	}
	if err := convert(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "mksample:", err)
		os.Exit(1)
	}
}

func convert(in, out string) error {
	zr, err := zip.OpenReader(in)
	if err != nil {
		return err
	}
	defer zr.Close()
	if len(zr.File) != 1 {
		return fmt.Errorf("%s: want one file, found %d", in, len(zr.File))
	}
	f, err := zr.File[0].Open()
	if err != nil {
		return err
	}
	defer f.Close()
	var rows []Word
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		if len(fields) != 51 {
			return fmt.Errorf("%s line %d: want 51 fields, found %d", in, line, len(fields))
		}
		w := Word{Word: fields[0], Rank: int32(line), Embedding: make([]float32, 50)}
		for i, s := range fields[1:] {
			v, err := strconv.ParseFloat(s, 32)
			if err != nil {
				return fmt.Errorf("%s line %d: %w", in, line, err)
			}
			w.Embedding[i] = float32(v)
		}
		rows = append(rows, w)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	tmp := out + ".tmp"
	o, err := os.Create(tmp)
	if err != nil {
		return err
	}
	w := parquet.NewGenericWriter[Word](o, parquet.Compression(&parquet.Zstd), parquet.MaxRowsPerRowGroup(2500))
	if _, err := w.Write(rows); err != nil {
		o.Close()
		return err
	}
	if err := w.Close(); err != nil {
		o.Close()
		return err
	}
	if err := o.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, out)
}
