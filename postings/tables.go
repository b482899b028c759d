package postings

import (
	"fmt"
	"io"
	"math"

	"github.com/parquet-go/parquet-go"
)

// WriteCentroids writes the ivf_centroids table (ivf-index-schema §5) of C =
// len(cidBucket) leaf centroids to w: row i has cid i, cid_bucket
// cidBucket[i], offset offsets[i], scale scales[i] and the LVQ8 code
// codes[i*dim:(i+1)*dim]. Rows are written in ascending cid order in row
// groups of at most 65,536 rows. It checks every §5 rule it can see (see
// CheckCentroids) before writing anything.
func WriteCentroids(w io.Writer, dim int, cidBucket []int32, offsets, scales []float32, codes []byte) error {
	if err := CheckCentroids(dim, cidBucket, offsets, scales, codes); err != nil {
		return err
	}
	pw := parquet.NewGenericWriter[any](w, writerOptions(centroidsSchema)...)
	rows := make([]parquet.Row, 0, 256)
	vals := make([]parquet.Value, 0, 256*5)
	flush := func() error {
		if _, err := pw.WriteRows(rows); err != nil {
			return fmt.Errorf("ivf_centroids: write: %w", err)
		}
		rows, vals = rows[:0], vals[:0]
		return nil
	}
	for i := range cidBucket {
		start := len(vals)
		vals = append(vals,
			parquet.Int32Value(int32(i)).Level(0, 0, 0),
			parquet.Int32Value(cidBucket[i]).Level(0, 0, 1),
			parquet.FloatValue(offsets[i]).Level(0, 0, 2),
			parquet.FloatValue(scales[i]).Level(0, 0, 3),
			parquet.ByteArrayValue(codes[i*dim:(i+1)*dim]).Level(0, 0, 4))
		rows = append(rows, vals[start:len(vals):len(vals)])
		if len(rows) == cap(rows) {
			if err := flush(); err != nil {
				return err
			}
		}
		if (i+1)%maxRowsPerGroup == 0 {
			if err := flush(); err != nil {
				return err
			}
			if err := pw.Flush(); err != nil {
				return fmt.Errorf("ivf_centroids: flush: %w", err)
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	if err := pw.Close(); err != nil {
		return fmt.Errorf("ivf_centroids: close: %w", err)
	}
	return nil
}

// CheckCentroids checks leaf centroids against ivf-index-schema §5 as far as
// they can be checked without the roots: C ≥ 1 and every slice of length C
// (codes C·dim); cid_bucket starts at 0 and steps by 0 or 1 from one cid to
// the next (roots own adjacent, non-empty, ascending intervals); offsets and
// scales finite and scales non-negative, and every reconstruction
// offset + scale·code finite. The error names the first bad cid.
func CheckCentroids(dim int, cidBucket []int32, offsets, scales []float32, codes []byte) error {
	const table = "ivf_centroids"
	c := len(cidBucket)
	switch {
	case dim < 1 || dim > MaxDim:
		return errorf(ErrCorrupt, table, "dimension %d out of range", dim)
	case c == 0:
		return errorf(ErrCorrupt, table, "no rows")
	case c > math.MaxInt32:
		return errorf(ErrCorrupt, table, "%d rows exceed the int cid range", c)
	case len(offsets) != c || len(scales) != c:
		return errorf(ErrCorrupt, table, "%d cid_bucket, %d offset and %d scale values", c, len(offsets), len(scales))
	case len(codes) != c*dim:
		return errorf(ErrCorrupt, table, "%d code bytes, want %d", len(codes), c*dim)
	}
	for i := range c {
		where := fmt.Sprintf("%s cid %d", table, i)
		if i == 0 && cidBucket[0] != 0 {
			return errorf(ErrCorrupt, where, "cid_bucket %d, want 0", cidBucket[0])
		}
		if i > 0 && cidBucket[i] != cidBucket[i-1] && cidBucket[i] != cidBucket[i-1]+1 {
			return errorf(ErrCorrupt, where, "cid_bucket %d after %d", cidBucket[i], cidBucket[i-1])
		}
		if err := checkLVQ(offsets[i], scales[i], codes[i*dim:(i+1)*dim], 255); err != nil {
			return errorf(ErrCorrupt, where, "%v", err)
		}
	}
	return nil
}

// checkLVQ checks offset, scale and the reconstructions of code (§7). For
// LVQ4 maxCode is 15 and code holds nibbles.
func checkLVQ(offset, scale float32, code []byte, maxCode int) error {
	if !finite(offset) {
		return fmt.Errorf("offset %v not finite", offset)
	}
	if !finite(scale) || scale < 0 {
		return fmt.Errorf("scale %v not finite and non-negative", scale)
	}
	// x̂ = offset + scale·code is monotone in code, so it is finite for
	// every code when it is finite at the largest. Try max_code first (the
	// largest code of any LVQ-encoded vector with upper > offset) and scan
	// for the largest code present only when that fails.
	recon := func(c int) bool { return finite(float32(float64(offset) + float64(scale)*float64(c))) }
	if recon(maxCode) {
		return nil
	}
	hi := 0
	for _, b := range code {
		if maxCode == 255 {
			hi = max(hi, int(b))
		} else {
			hi = max(hi, int(b&0x0F), int(b>>4))
		}
	}
	if !recon(hi) {
		return fmt.Errorf("reconstruction offset + scale·%d not finite", hi)
	}
	return nil
}

func finite(f float32) bool { return !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0) }

// ReadCentroids reads an ivf_centroids table written by any profile-
// conforming writer and returns its columns indexed by cid. It checks the
// file against the profile (column names, types, PLAIN, uncompressed) and
// every §5 rule CheckCentroids lists, plus: C = number of rows, every cid
// unique and in [0, C), code exactly dim bytes. Row order in the file is
// free.
func ReadCentroids(r io.ReaderAt, size int64, dim int) (cidBucket []int32, offsets, scales []float32, codes []byte, err error) {
	const table = "ivf_centroids"
	if dim < 1 || dim > MaxDim {
		return nil, nil, nil, nil, errorf(ErrCorrupt, table, "dimension %d out of range", dim)
	}
	rr := &recordingReader{r: r, size: size}
	f, err := openTable(rr, size, table, centroidsLeaves)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	n := f.NumRows()
	if n < 1 || n > math.MaxInt32 || n*int64(dim) > int64(size)*2+1024 {
		return nil, nil, nil, nil, errorf(ErrCorrupt, table, "%d rows", n)
	}
	c := int(n)
	cidBucket = make([]int32, c)
	offsets = make([]float32, c)
	scales = make([]float32, c)
	codes = make([]byte, c*dim)
	seen := make([]bool, c)
	row := 0
	err = readRows(f, rr, func(_ int, r parquet.Row) error {
		where := fmt.Sprintf("%s row %d", table, row)
		row++
		if len(r) != 5 {
			return errorf(ErrCorrupt, where, "%d values, want 5", len(r))
		}
		cid := r[0].Int32()
		if cid < 0 || int(cid) >= c {
			return errorf(ErrCorrupt, where, "cid %d out of range [0, %d)", cid, c)
		}
		if seen[cid] {
			return errorf(ErrCorrupt, where, "duplicate cid %d", cid)
		}
		seen[cid] = true
		code := r[4].ByteArray()
		if len(code) != dim {
			return errorf(ErrCorrupt, where, "code of %d bytes, want %d", len(code), dim)
		}
		cidBucket[cid] = r[1].Int32()
		offsets[cid] = r[2].Float()
		scales[cid] = r[3].Float()
		copy(codes[int(cid)*dim:], code)
		return nil
	})
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if row != c {
		return nil, nil, nil, nil, errorf(ErrCorrupt, table, "read %d rows, footer says %d", row, c)
	}
	if err := CheckCentroids(dim, cidBucket, offsets, scales, codes); err != nil {
		return nil, nil, nil, nil, err
	}
	return cidBucket, offsets, scales, codes, nil
}

// WriteRoots writes the ivf_roots table (ivf-index-schema §5, clarification
// 12): R = len(offsets)-1 rows in ascending cid_bucket order 0…R-1, row r
// with cid_begin offsets[r], cid_end offsets[r+1] and centroid
// roots[r*dim:(r+1)*dim]. It checks the table first (see CheckRoots).
func WriteRoots(w io.Writer, dim int, offsets []int32, roots []float32) error {
	if err := CheckRoots(dim, offsets, roots); err != nil {
		return err
	}
	pw := parquet.NewGenericWriter[any](w, writerOptions(rootsSchema)...)
	var row parquet.Row
	for r := range len(offsets) - 1 {
		row = append(row[:0],
			parquet.Int32Value(int32(r)).Level(0, 0, 0),
			parquet.Int32Value(offsets[r]).Level(0, 0, 1),
			parquet.Int32Value(offsets[r+1]).Level(0, 0, 2))
		for j, v := range roots[r*dim : (r+1)*dim] {
			rep := 1
			if j == 0 {
				rep = 0
			}
			row = append(row, parquet.FloatValue(v).Level(rep, 1, 3))
		}
		if _, err := pw.WriteRows([]parquet.Row{row}); err != nil {
			return fmt.Errorf("ivf_roots: write: %w", err)
		}
	}
	if err := pw.Close(); err != nil {
		return fmt.Errorf("ivf_roots: close: %w", err)
	}
	return nil
}

// CheckRoots checks root offsets and centroids (§5): R ≥ 1 roots,
// offsets[0] = 0, strictly increasing offsets (non-empty adjacent
// intervals), len(roots) = R·dim and every element finite. The number of
// leaves C is offsets[R].
func CheckRoots(dim int, offsets []int32, roots []float32) error {
	const table = "ivf_roots"
	switch {
	case dim < 1 || dim > MaxDim:
		return errorf(ErrCorrupt, table, "dimension %d out of range", dim)
	case len(offsets) < 2:
		return errorf(ErrCorrupt, table, "%d offsets: need at least one root", len(offsets))
	case offsets[0] != 0:
		return errorf(ErrCorrupt, table+" cid_bucket 0", "cid_begin %d, want 0", offsets[0])
	case len(roots) != (len(offsets)-1)*dim:
		return errorf(ErrCorrupt, table, "%d centroid values, want %d", len(roots), (len(offsets)-1)*dim)
	}
	for r := 1; r < len(offsets); r++ {
		if offsets[r] <= offsets[r-1] {
			return errorf(ErrCorrupt, fmt.Sprintf("%s cid_bucket %d", table, r-1), "empty or reversed interval [%d, %d)", offsets[r-1], offsets[r])
		}
	}
	for i, v := range roots {
		if !finite(v) {
			return errorf(ErrCorrupt, fmt.Sprintf("%s cid_bucket %d centroid[%d]", table, i/dim, i%dim), "%v not finite", v)
		}
	}
	return nil
}

// ReadRoots reads an ivf_roots table and returns the R+1 offsets (offsets[r]
// = cid_begin of root r, offsets[R] = C) and the R·dim root centroids. It
// checks the profile and clarification 12: rows in ascending cid_bucket
// order with ids 0…R-1, each cid_begin equal to the previous cid_end,
// exactly dim finite elements per centroid.
func ReadRoots(r io.ReaderAt, size int64, dim int) (offsets []int32, roots []float32, err error) {
	const table = "ivf_roots"
	if dim < 1 || dim > MaxDim {
		return nil, nil, errorf(ErrCorrupt, table, "dimension %d out of range", dim)
	}
	rr := &recordingReader{r: r, size: size}
	f, err := openTable(rr, size, table, rootsLeaves)
	if err != nil {
		return nil, nil, err
	}
	n := f.NumRows()
	if n < 1 || n > math.MaxInt32 || n*int64(dim) > size*8+1024 {
		return nil, nil, errorf(ErrCorrupt, table, "%d rows", n)
	}
	offsets = make([]int32, 0, n+1)
	roots = make([]float32, 0, n*int64(dim))
	row := 0
	err = readRows(f, rr, func(_ int, r parquet.Row) error {
		where := fmt.Sprintf("%s row %d", table, row)
		if len(r) != 3+dim {
			return errorf(ErrCorrupt, where, "%d values, want %d (centroid of %d elements)", len(r), 3+dim, dim)
		}
		if got := r[0].Int32(); got != int32(row) {
			return errorf(ErrCorrupt, where, "cid_bucket %d, want %d", got, row)
		}
		begin, end := r[1].Int32(), r[2].Int32()
		if row == 0 {
			offsets = append(offsets, begin)
		} else if begin != offsets[row] {
			return errorf(ErrCorrupt, where, "cid_begin %d, want previous cid_end %d", begin, offsets[row])
		}
		offsets = append(offsets, end)
		for _, v := range r[3:] {
			if v.IsNull() || v.Column() != 3 {
				return errorf(ErrCorrupt, where, "centroid has a null or misplaced element")
			}
			roots = append(roots, v.Float())
		}
		row++
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if err := CheckRoots(dim, offsets, roots); err != nil {
		return nil, nil, err
	}
	return offsets, roots, nil
}

// CheckHierarchy checks that leaf cid_bucket values agree with the root
// intervals: C = offsets[R] and cidBucket[cid] = r exactly when offsets[r] ≤
// cid < offsets[r+1].
func CheckHierarchy(cidBucket []int32, offsets []int32) error {
	if len(offsets) < 2 {
		return errorf(ErrCorrupt, "ivf_roots", "%d offsets: need at least one root", len(offsets))
	}
	if int(offsets[len(offsets)-1]) != len(cidBucket) || offsets[0] != 0 {
		return errorf(ErrCorrupt, "ivf_roots", "roots cover %d leaves, ivf_centroids has %d", offsets[len(offsets)-1], len(cidBucket))
	}
	for r := range len(offsets) - 1 {
		for cid := offsets[r]; cid < offsets[r+1]; cid++ {
			if cidBucket[cid] != int32(r) {
				return errorf(ErrCorrupt, fmt.Sprintf("ivf_centroids cid %d", cid), "cid_bucket %d, but root %d owns [%d, %d)", cidBucket[cid], r, offsets[r], offsets[r+1])
			}
		}
	}
	return nil
}
