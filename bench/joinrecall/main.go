// Command joinrecall checks the neighbours a kNN join (or `parqdb search
// --queries --format parquet`) wrote against an exact answer for a sample
// of its queries, and optionally compares two such outputs row for row.
//
//	joinrecall [-query query_id] [-key id] [-every 5000] [-k 10] [-gt GT.ivecs] [-same OTHER] OUT
//
// OUT is a Parquet file or a folder of them (files or folders starting
// with '_' or '.' are skipped, as readers of a join's output do). -query
// names the column holding the query's number (join: query_<key>; search:
// query) and -key the neighbour's key column, both INT64; with -gt, row j
// of GT (bench/groundtruth's output for the queries numbered 0, every,
// 2·every, …) is the exact answer of query j·every, and recall@k is the
// mean share of its k ids among the query's first k neighbours. -same
// compares OUT's (query, neighbour, _distance) triples with OTHER's
// (columns -other-query, -key, _distance), in order of distance per query.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/parqdb/parqdb/internal/ivecs"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "joinrecall:", err)
		os.Exit(1)
	}
}

type hit struct {
	key  int64
	dist float32
}

func run() error {
	qcol := flag.String("query", "query_id", "the INT64 column of the query's number")
	kcol := flag.String("key", "id", "the INT64 column of the neighbour's key")
	every := flag.Int64("every", 5000, "GT row j is the answer of query j·every")
	k := flag.Int("k", 10, "recall@k")
	gtPath := flag.String("gt", "", "exact answer (.ivecs)")
	same := flag.String("same", "", "another output to compare with")
	oqcol := flag.String("other-query", "query", "-same: OTHER's query column")
	flag.Parse()
	if flag.NArg() != 1 {
		return errors.New("usage: joinrecall [flags] OUT")
	}
	hits, err := readOutput(flag.Arg(0), *qcol, *kcol)
	if err != nil {
		return err
	}
	nrows := 0
	for _, h := range hits {
		nrows += len(h)
	}
	fmt.Printf("%s: %d queries, %d rows\n", flag.Arg(0), len(hits), nrows)
	if *gtPath != "" {
		gt, err := ivecs.Read(*gtPath)
		if err != nil {
			return err
		}
		var sum float64
		for j, want := range gt {
			q := int64(j) * *every
			got := hits[q]
			if len(got) < *k || len(want) < *k {
				return fmt.Errorf("query %d: %d neighbours, ground truth %d, want %d", q, len(got), len(want), *k)
			}
			in := map[int64]bool{}
			for _, id := range want[:*k] {
				in[int64(id)] = true
			}
			n := 0
			for _, h := range got[:*k] {
				if in[h.key] {
					n++
				}
			}
			sum += float64(n) / float64(*k)
		}
		fmt.Printf("recall@%d %.4f over %d sampled queries (every %d)\n", *k, sum/float64(len(gt)), len(gt), *every)
	}
	if *same != "" {
		other, err := readOutput(*same, *oqcol, *kcol)
		if err != nil {
			return err
		}
		if len(other) != len(hits) {
			return fmt.Errorf("%s: %d queries, %s: %d", flag.Arg(0), len(hits), *same, len(other))
		}
		for q, a := range hits {
			b := other[q]
			if len(a) != len(b) {
				return fmt.Errorf("query %d: %d neighbours in %s, %d in %s", q, len(a), flag.Arg(0), len(b), *same)
			}
			for i := range a {
				if a[i] != b[i] {
					return fmt.Errorf("query %d, neighbour %d: %v in %s, %v in %s", q, i, a[i], flag.Arg(0), b[i], *same)
				}
			}
		}
		fmt.Printf("same neighbours and distances as %s\n", *same)
	}
	return nil
}

// readOutput returns each query's neighbours, nearest first (ties by key).
func readOutput(loc, qcol, kcol string) (map[int64][]hit, error) {
	var files []string
	st, err := os.Stat(loc)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		err = filepath.WalkDir(loc, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			name := d.Name()
			if p != loc && (strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".")) {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.IsDir() && strings.HasSuffix(name, ".parquet") {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	} else {
		files = []string{loc}
	}
	out := map[int64][]hit{}
	for _, f := range files {
		if err := readFile(f, qcol, kcol, out); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
	}
	for _, h := range out {
		sort.Slice(h, func(i, j int) bool {
			if h[i].dist != h[j].dist {
				return h[i].dist < h[j].dist
			}
			return h[i].key < h[j].key
		})
	}
	return out, nil
}

func readFile(path, qcol, kcol string, out map[int64][]hit) error {
	fh, err := os.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return err
	}
	pf, err := parquet.OpenFile(fh, st.Size())
	if err != nil {
		return err
	}
	col := func(name string) (int, error) {
		c, ok := pf.Schema().Lookup(name)
		if !ok {
			return 0, fmt.Errorf("no column %q", name)
		}
		return c.ColumnIndex, nil
	}
	qi, err := col(qcol)
	if err != nil {
		return err
	}
	ki, err := col(kcol)
	if err != nil {
		return err
	}
	di, err := col("_distance")
	if err != nil {
		return err
	}
	buf := make([]parquet.Row, 4096)
	for _, rg := range pf.RowGroups() {
		rows := rg.Rows()
		for {
			n, err := rows.ReadRows(buf)
			for _, r := range buf[:n] {
				var q, key int64
				var d float32
				for _, v := range r {
					switch v.Column() {
					case qi:
						q = v.Int64()
					case ki:
						key = v.Int64()
					case di:
						d = v.Float()
					}
				}
				out[q] = append(out[q], hit{key, d})
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				rows.Close()
				return err
			}
		}
		rows.Close()
	}
	return nil
}
