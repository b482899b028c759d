// Command groundtruth writes the exact k nearest neighbours (l2) of each
// query as .ivecs (0-based base row numbers), streaming the base .fvecs in
// blocks so that memory does not grow with its size; for
// `parqdb bench --ground-truth` when the source is too large for its
// in-memory brute force. Rows are numbered in file order, which is the
// source order of bench/mkdata's Parquet parts.
//
//	groundtruth [-k 10] [-queries N] [-workers W] BASE.fvecs QUERIES.fvecs OUT.ivecs
package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"sync"

	"github.com/parqdb/parqdb/internal/vecmath"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "groundtruth:", err)
		os.Exit(1)
	}
}

type nb struct {
	d  float32
	id int32
}

func run() error {
	k := flag.Int("k", 10, "neighbours per query")
	nq := flag.Int("queries", 0, "use only the first N queries (0: all)")
	workers := flag.Int("workers", 2, "goroutines")
	flag.Parse()
	if flag.NArg() != 3 || *k < 1 || *workers < 1 {
		return errors.New("usage: groundtruth [-k 10] [-queries N] [-workers W] BASE.fvecs QUERIES.fvecs OUT.ivecs")
	}
	qs, dim, err := readAll(flag.Arg(1))
	if err != nil {
		return err
	}
	if *nq > 0 && *nq*dim < len(qs) {
		qs = qs[:*nq*dim]
	}
	n := len(qs) / dim
	best := make([][]nb, n)
	f, err := os.Open(flag.Arg(0))
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 4<<20)
	const block = 65536
	rec := make([]byte, 4+4*dim)
	rows := make([]float32, block*dim)
	dist := make([][]float32, *workers)
	for w := range dist {
		dist[w] = make([]float32, block)
	}
	var base int32
	for {
		m := 0
		for ; m < block; m++ {
			if _, err := io.ReadFull(r, rec); err == io.EOF {
				break
			} else if err != nil {
				return fmt.Errorf("%s: row %d: %w", flag.Arg(0), int(base)+m, err)
			}
			if d := int(binary.LittleEndian.Uint32(rec)); d != dim {
				return fmt.Errorf("%s: row %d has dimension %d, queries %d", flag.Arg(0), int(base)+m, d, dim)
			}
			for j := 0; j < dim; j++ {
				rows[m*dim+j] = math.Float32frombits(binary.LittleEndian.Uint32(rec[4+4*j:]))
			}
		}
		if m == 0 {
			break
		}
		var wg sync.WaitGroup
		for w := 0; w < *workers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				out := dist[w][:m]
				for q := w; q < n; q += *workers {
					vecmath.L2SqBatch(qs[q*dim:(q+1)*dim], rows[:m*dim], dim, out)
					b := best[q]
					for i, d := range out {
						if len(b) < *k || d < b[len(b)-1].d {
							j := sort.Search(len(b), func(j int) bool { return b[j].d > d })
							if len(b) < *k {
								b = append(b, nb{})
							}
							copy(b[j+1:], b[j:len(b)-1])
							b[j] = nb{d, base + int32(i)}
						}
					}
					best[q] = b
				}
			}(w)
		}
		wg.Wait()
		base += int32(m)
		if base%(1<<20) < block {
			fmt.Fprintf(os.Stderr, "groundtruth: %d rows\n", base)
		}
	}
	out, err := os.Create(flag.Arg(2))
	if err != nil {
		return err
	}
	defer out.Close()
	w := bufio.NewWriter(out)
	for _, b := range best {
		binary.Write(w, binary.LittleEndian, int32(len(b)))
		for _, e := range b {
			binary.Write(w, binary.LittleEndian, e.id)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return out.Close()
}

func readAll(path string) ([]float32, int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	if len(data) < 4 {
		return nil, 0, fmt.Errorf("%s: empty", path)
	}
	dim := int(binary.LittleEndian.Uint32(data))
	if dim < 1 || len(data)%(4+4*dim) != 0 {
		return nil, 0, fmt.Errorf("%s: not an .fvecs file of dimension %d", path, dim)
	}
	n := len(data) / (4 + 4*dim)
	v := make([]float32, 0, n*dim)
	for i := 0; i < n; i++ {
		row := data[i*(4+4*dim):]
		if int(binary.LittleEndian.Uint32(row)) != dim {
			return nil, 0, fmt.Errorf("%s: row %d: dimension differs", path, i)
		}
		for j := 0; j < dim; j++ {
			v = append(v, math.Float32frombits(binary.LittleEndian.Uint32(row[4+4*j:])))
		}
	}
	return v, dim, nil
}
