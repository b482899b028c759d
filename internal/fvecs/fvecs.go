// Package fvecs reads the .fvecs format of vectors (the TEXMEX corpus format
// that FAISS's benchmarks use): per vector a little-endian int32 dimension,
// then that many little-endian float32 values.
package fvecs

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
)

// Read returns up to max vectors of the .fvecs file at path (all of them when
// max ≤ 0), their values in one backing array. A truncated file, a dimension
// below 1 or a file of no vectors is an error naming the path and the vector
// or byte. Vectors may differ in dimension; callers that need one check it.
func Read(path string, max int) ([][]float32, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out, err := Parse(data, max)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// Parse is Read over the bytes of a file.
func Parse(data []byte, max int) ([][]float32, error) {
	var out [][]float32
	flat := make([]float32, 0, len(data)/4) // every vector's values, one allocation
	for off := 0; off < len(data) && (max <= 0 || len(out) < max); {
		if len(data)-off < 4 {
			return nil, fmt.Errorf("vector %d: truncated at byte %d", len(out), off)
		}
		d := int64(int32(binary.LittleEndian.Uint32(data[off:])))
		off += 4
		if d < 1 || int64(len(data)-off) < 4*d {
			return nil, fmt.Errorf("vector %d: dimension %d does not fit the file (%d bytes left)", len(out), d, len(data)-off)
		}
		lo := len(flat)
		for i := range int(d) {
			flat = append(flat, math.Float32frombits(binary.LittleEndian.Uint32(data[off+4*i:])))
		}
		off += 4 * int(d)
		out = append(out, flat[lo:len(flat):len(flat)])
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no vectors")
	}
	return out, nil
}

// Append appends v to dst in the .fvecs format.
func Append(dst []byte, v []float32) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(v)))
	for _, x := range v {
		dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(x))
	}
	return dst
}
