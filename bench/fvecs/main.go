// Command fvecs writes a Parquet source's canonical vectors (converted to
// float32 and, for -metric cosine, normalised, exactly as an index reads
// them) as a base .fvecs for the FAISS peer, and every n-th row of them as
// a query .fvecs, in source order. Deterministic: the same source gives the
// same bytes.
//
//	fvecs [-metric cosine] [-every 10] [-first 0] [-keys KEYS.txt] SOURCE VECTOR_FIELD KEY_FIELD BASE.fvecs QUERIES.fvecs
//
// -keys also writes each base row's key, one per line in the same order
// (bench/frontier/recheck.py maps search results back to rows with it).
//
// e.g. the GloVe sample's base and 1,000 queries (rows 0, 10, 20, …):
//
//	go run ./bench/fvecs -metric cosine examples/glove/glove-10k.parquet embedding word gd/glove-base.fvecs gd/glove-q1k.fvecs
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/parqdb/parqdb/internal/fvecs"
	"github.com/parqdb/parqdb/internal/source"
	"github.com/parqdb/parqdb/metadata"
)

func main() {
	metric := flag.String("metric", metadata.MetricL2Squared, "l2_squared or cosine (cosine normalises every row)")
	every := flag.Int("every", 10, "write every n-th row as a query")
	first := flag.Int("first", 0, "row number of the first query")
	keys := flag.String("keys", "", "also write each base row's key to this file, one per line")
	flag.Parse()
	if flag.NArg() != 5 || *every < 1 || *first < 0 {
		fmt.Fprintln(os.Stderr, "usage: fvecs [-metric cosine] [-every 10] [-first 0] [-keys KEYS.txt] SOURCE VECTOR_FIELD KEY_FIELD BASE.fvecs QUERIES.fvecs")
		os.Exit(2)
	}
	a := flag.Args()
	if err := run(a[0], a[1], a[2], a[3], a[4], *keys, *metric, *every, *first); err != nil {
		fmt.Fprintln(os.Stderr, "fvecs:", err)
		os.Exit(1)
	}
}

func run(src, field, key, basePath, qPath, keysPath, metric string, every, first int) error {
	ctx := context.Background()
	t, _, err := source.OpenLocation(ctx, src)
	if err != nil {
		return err
	}
	l, err := t.Check(ctx, source.Binding{VectorField: field, KeyFields: []string{key}, Metric: metric})
	if err != nil {
		return err
	}
	bf, err := os.Create(basePath)
	if err != nil {
		return err
	}
	defer bf.Close()
	qf, err := os.Create(qPath)
	if err != nil {
		return err
	}
	defer qf.Close()
	bw, qw := bufio.NewWriter(bf), bufio.NewWriter(qf)
	kw := bufio.NewWriter(io.Discard)
	if keysPath != "" {
		kf, err := os.Create(keysPath)
		if err != nil {
			return err
		}
		defer kf.Close()
		kw = bufio.NewWriter(kf)
	}
	var row, nq int64
	var rec []byte
	put := func(w *bufio.Writer, v []float32) error {
		rec = fvecs.Append(rec[:0], v)
		_, err := w.Write(rec)
		return err
	}
	err = t.Scan(ctx, l, 0, func(b *source.Batch) error {
		for i := 0; i < b.N; i++ {
			v := b.Vector(i)
			if err := put(bw, v); err != nil {
				return err
			}
			k := b.Key(i)[0]
			if _, err := fmt.Fprintln(kw, k.String()); err != nil {
				return err
			}
			if row >= int64(first) && (row-int64(first))%int64(every) == 0 {
				if err := put(qw, v); err != nil {
					return err
				}
				nq++
			}
			row++
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := errors.Join(bw.Flush(), qw.Flush(), kw.Flush()); err != nil {
		return err
	}
	if err := errors.Join(bf.Close(), qf.Close()); err != nil {
		return err
	}
	fmt.Printf("%s: %d rows; %s: %d queries\n", basePath, row, qPath, nq)
	return nil
}
