// Package ivecs reads the .ivecs format of exact nearest-neighbour answers
// (the TEXMEX corpus format that FAISS's benchmarks use): per row a
// little-endian int32 count, then that many little-endian int32 values.
package ivecs

import (
	"encoding/binary"
	"fmt"
	"os"
)

// Read returns the rows of the .ivecs file at path. A truncated file, a
// negative count or a file of no rows is an error naming the path (and
// the row or byte).
func Read(path string) ([][]int32, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out [][]int32
	for off := 0; off < len(data); {
		if len(data)-off < 4 {
			return nil, fmt.Errorf("%s: truncated at byte %d", path, off)
		}
		n := int(int32(binary.LittleEndian.Uint32(data[off:])))
		off += 4
		if n < 0 || len(data)-off < 4*n {
			return nil, fmt.Errorf("%s: row %d: bad count %d or truncated", path, len(out), n)
		}
		row := make([]int32, n)
		for i := range row {
			row[i] = int32(binary.LittleEndian.Uint32(data[off+4*i:]))
		}
		off += 4 * n
		out = append(out, row)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no rows", path)
	}
	return out, nil
}
