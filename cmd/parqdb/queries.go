package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/parqdb/parqdb/internal/fvecs"
	"github.com/parqdb/parqdb/query/rowjson"
	"github.com/parquet-go/parquet-go"
)

// parseVector parses a JSON array of numbers.
func parseVector(s string) ([]float32, error) {
	var xs []float64
	if err := json.Unmarshal([]byte(s), &xs); err != nil {
		return nil, fmt.Errorf("--vector: want a JSON array of numbers like [0.1, 2, -3e-2]: %v", err)
	}
	if p := rowjson.NullElement([]byte(s)); p != nil {
		return nil, fmt.Errorf("--vector: value %d is null; every value must be a number", p[0])
	}
	if len(xs) == 0 {
		return nil, errors.New("--vector: the array is empty")
	}
	out := make([]float32, len(xs))
	for i, x := range xs {
		f := float32(x)
		if math.IsInf(float64(f), 0) {
			return nil, fmt.Errorf("--vector: value %d (%g) overflows float32", i, x)
		}
		out[i] = f
	}
	return out, nil
}

// queryFormats lists the --queries formats, for errors.
const queryFormats = ".fvecs, .npy (2-D float32/float64), .jsonl (one JSON array of numbers per line) or .parquet (with --query-column)"

// readQueries reads query vectors from a .fvecs, .npy, .jsonl or Parquet
// file (the last needs column; with column, any other extension is read as
// Parquet). Queries are numbered from 0 in input order, in errors as in
// the output.
func readQueries(path, column string) ([][]float32, error) {
	ext := strings.ToLower(filepath.Ext(path))
	if column != "" && ext != ".parquet" && ext != ".parq" {
		switch ext {
		case ".fvecs", ".npy", ".jsonl", ".ndjson":
			return nil, usagef("--queries %s: --query-column goes with a Parquet file, not %s", path, ext)
		}
		return readParquetVectors(path, column)
	}
	switch ext {
	case ".fvecs":
		return fvecs.Read(path, 0)
	case ".npy":
		return readNpy(path)
	case ".jsonl", ".ndjson":
		return readJSONLines(path)
	case ".parquet", ".parq":
		if column == "" {
			return nil, usagef("--queries %s: a Parquet query file needs --query-column naming its vector column", path)
		}
		return readParquetVectors(path, column)
	}
	if ext == "" {
		return nil, usagef("--queries %s: the file name has no extension; give one of %s", path, queryFormats)
	}
	return nil, usagef("--queries %s: unknown extension %q; give one of %s", path, ext, queryFormats)
}

// maxJSONLine is the longest line of a .jsonl query file: a vector of a
// million float64 values in their longest form fits.
const maxJSONLine = 64 << 20

// readJSONLines reads one JSON array of numbers per line (blank lines are
// skipped); an error names the line (from 1, as editors count) and the
// query (from 0).
func readJSONLines(path string) ([][]float32, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out [][]float32
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxJSONLine)
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		var xs []float64
		if err := json.Unmarshal(text, &xs); err != nil {
			return nil, fmt.Errorf("%s: line %d (query %d): want a JSON array of numbers like [0.1, 2, -3e-2]: %v", path, line, len(out), err)
		}
		if p := rowjson.NullElement(text); p != nil {
			return nil, fmt.Errorf("%s: line %d (query %d): value %d is null; every value must be a number", path, line, len(out), p[0])
		}
		if len(xs) == 0 {
			return nil, fmt.Errorf("%s: line %d (query %d): the array is empty", path, line, len(out))
		}
		if len(out) > 0 && len(xs) != len(out[0]) {
			return nil, fmt.Errorf("%s: line %d (query %d): %d values, the first query has %d", path, line, len(out), len(xs), len(out[0]))
		}
		v := make([]float32, len(xs))
		for i, x := range xs {
			v[i] = float32(x)
			if math.IsInf(float64(v[i]), 0) {
				return nil, fmt.Errorf("%s: line %d (query %d): value %d (%g) overflows float32", path, line, len(out), i, x)
			}
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%s: line %d (query %d) is longer than %d MiB, the longest line a .jsonl query file may have", path, line+1, len(out), maxJSONLine>>20)
		}
		return nil, fmt.Errorf("%s: line %d (query %d): %w", path, line+1, len(out), err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no vectors", path)
	}
	return out, nil
}

// readParquetVectors reads the list<float|double> column of a Parquet file,
// whatever its list shape, one vector per row.
func readParquetVectors(path, column string) ([][]float32, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	pf, err := parquet.OpenFile(f, fi.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	leaf := -1
	var leafPath []string
	for i, p := range pf.Schema().Columns() {
		if len(p) > 0 && p[0] == column {
			if leaf >= 0 {
				return nil, fmt.Errorf("%s: column %q is not a list of numbers", path, column)
			}
			leaf, leafPath = i, p
		}
	}
	if leaf < 0 {
		return nil, fmt.Errorf("%s: no column %q", path, column)
	}
	// A null element is a null at one definition level below the leaf's
	// greatest (an optional element in a present list); lower levels are
	// a null or empty list.
	lc, _ := pf.Schema().Lookup(leafPath...)
	nullElem := -1
	if lc.Node != nil && lc.Node.Optional() {
		nullElem = lc.MaxDefinitionLevel - 1
	}
	var out [][]float32
	buf := make([]parquet.Value, 4096)
	for _, rg := range pf.RowGroups() {
		pages := rg.ColumnChunks()[leaf].Pages()
		var cur []float32
		started := false
		for {
			p, err := pages.ReadPage()
			if err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				pages.Close()
				return nil, fmt.Errorf("%s: column %q: %w", path, column, err)
			}
			vr := p.Values()
			for {
				n, err := vr.ReadValues(buf)
				for _, v := range buf[:n] {
					if v.RepetitionLevel() == 0 {
						if started {
							out = append(out, cur)
						}
						cur, started = nil, true
					}
					if v.IsNull() {
						if v.DefinitionLevel() == nullElem {
							pages.Close()
							return nil, fmt.Errorf("%s: row %d (query %d): column %q element %d is null; every value must be a number", path, len(out), len(out), column, len(cur))
						}
						continue
					}
					switch v.Kind() {
					case parquet.Float:
						cur = append(cur, v.Float())
					case parquet.Double:
						cur = append(cur, float32(v.Double()))
					default:
						pages.Close()
						return nil, fmt.Errorf("%s: column %q holds %v, not float or double", path, column, v.Kind())
					}
				}
				if err != nil {
					break
				}
			}
			parquet.Release(p)
		}
		pages.Close()
		if started {
			out = append(out, cur)
		}
	}
	for i, v := range out {
		if len(v) == 0 {
			return nil, fmt.Errorf("%s: row %d (query %d): column %q is null or empty", path, i, i, column)
		}
	}
	return out, nil
}
