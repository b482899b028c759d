package ivf

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"sync/atomic"

	"github.com/parqdb/parqdb/lvq"
)

// Centroids is one IVF centroid artifact of clustering profile 1 in memory:
// R dense root centroids, C = NList leaf centroids stored as LVQ8, and the
// mapping of every root to its contiguous leaf CID interval.
//
// The exported fields are exactly what the ivf_roots and ivf_centroids
// tables persist. A Centroids value must not be modified once it has been
// used by Leaf, NewAssigner or ExactNearest: those build a cache of
// decoded leaves on first use. Use it through a pointer (it must not be
// copied after first use). All methods are safe for concurrent use.
type Centroids struct {
	// Dim is the vector dimension D.
	Dim int
	// NList is the number of leaf centroids C.
	NList int
	// Roots holds R*Dim floats: root r is Roots[r*Dim:(r+1)*Dim]
	// (ivf_roots.centroid, cid_bucket r).
	Roots []float32
	// CIDOffsets holds R+1 offsets: root r owns the leaf CIDs
	// [CIDOffsets[r], CIDOffsets[r+1]) (ivf_roots.cid_begin, cid_end).
	CIDOffsets []int32
	// Offsets and Scales hold the LVQ8 offset and scale of every leaf,
	// indexed by CID.
	Offsets, Scales []float32
	// Codes holds NList*Dim LVQ8 codes: leaf cid is Codes[cid*Dim:(cid+1)*Dim].
	Codes []byte

	prep atomic.Pointer[prepared]
}

// prepared is the derived, read-only state built on first use.
type prepared struct {
	leaves     []float32 // NList*Dim LVQ8 reconstructions (lvq.Decode8)
	leafNormSq []float64 // ‖leaf‖², float64 sum of float64 squares
	rootOf     []int32   // per cid
	rootNormSq []float64
	// maxAbs is the largest |value| over roots and leaves.
	maxAbs float64
	// shadow[cid] reports that the reconstruction of cid equals
	// (element-wise, numerically) the reconstruction of a smaller cid, so
	// cid can never win an assignment (ties go to the smaller cid).
	shadow []bool
	// leafRootDist[cid] is ‖leaf − root(cid)‖ computed in float64 (relative
	// error far below 1e-12) and rootRadius[r] the maximum over r's leaves.
	leafRootDist []float64
	rootRadius   []float64
}

// NumRoots returns R, the number of root centroids (len(CIDOffsets)-1).
func (c *Centroids) NumRoots() int {
	if len(c.CIDOffsets) == 0 {
		return 0
	}
	return len(c.CIDOffsets) - 1
}

// RootOf returns the root whose interval contains cid, found by binary
// search in CIDOffsets, or -1 when cid is outside [0, NList).
func (c *Centroids) RootOf(cid int32) int32 {
	r := c.NumRoots()
	if cid < 0 || r == 0 || cid >= c.CIDOffsets[r] {
		return -1
	}
	// Smallest r with CIDOffsets[r+1] > cid.
	return int32(sort.Search(r, func(i int) bool { return c.CIDOffsets[i+1] > cid }))
}

// Root returns the dense centroid of root r (a sub-slice of Roots; the
// caller must not modify it).
func (c *Centroids) Root(r int) []float32 { return c.Roots[r*c.Dim : (r+1)*c.Dim] }

// Leaf returns the LVQ8 reconstruction of leaf cid, the vector that
// assignment and query routing (package query) measure distances to. The returned slice belongs to
// c's cache and must not be modified. Leaf panics if cid is out of range or
// c is invalid (see Validate).
func (c *Centroids) Leaf(cid int32) []float32 {
	p := c.prepared()
	return p.leaves[int(cid)*c.Dim : (int(cid)+1)*c.Dim]
}

// maxValidateErrors bounds how many individual problems Validate reports.
const maxValidateErrors = 16

// Validate checks the invariants of ivf-index-schema §5 and reports every
// violation it finds (up to a bound) in one error wrapping
// ErrInvalidCentroids; each message names the field and index:
//   - Dim ≥ 1, 1 ≤ NList ≤ 2147483647, R = len(CIDOffsets)-1 ≥ 1, R ≤ NList;
//   - CIDOffsets[0] = 0, CIDOffsets[R] = NList, strictly increasing (so
//     every root owns a non-empty contiguous interval);
//   - len(Roots) = R*Dim, len(Offsets) = len(Scales) = NList,
//     len(Codes) = NList*Dim;
//   - every root element and offset is finite, every scale finite and ≥ 0,
//     and every LVQ8 reconstruction offset + scale*code is finite.
func (c *Centroids) Validate() error {
	var errs []error
	add := func(format string, args ...any) {
		if len(errs) < maxValidateErrors {
			errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidCentroids}, args...)...))
		}
	}
	if c.Dim < 1 {
		add("dimension %d < 1", c.Dim)
	}
	if c.NList < 1 || c.NList > math.MaxInt32 {
		add("nlist %d outside [1, 2147483647]", c.NList)
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	r := len(c.CIDOffsets) - 1
	switch {
	case r < 1:
		add("cid_offsets has %d entries, want at least 2", len(c.CIDOffsets))
	case r > c.NList:
		add("%d roots exceed nlist %d", r, c.NList)
	default:
		if c.CIDOffsets[0] != 0 {
			add("cid_offsets[0] = %d, want 0", c.CIDOffsets[0])
		}
		if int(c.CIDOffsets[r]) != c.NList {
			add("cid_offsets[%d] = %d, want nlist %d", r, c.CIDOffsets[r], c.NList)
		}
		for i := 0; i < r; i++ {
			if c.CIDOffsets[i+1] <= c.CIDOffsets[i] {
				add("cid_offsets[%d] = %d not above cid_offsets[%d] = %d (root %d is empty or reversed)",
					i+1, c.CIDOffsets[i+1], i, c.CIDOffsets[i], i)
			}
		}
		if len(c.Roots) != r*c.Dim {
			add("roots has %d floats, want %d roots × dimension %d", len(c.Roots), r, c.Dim)
		} else {
			for i, v := range c.Roots {
				if !finite32(v) {
					add("root %d element %d = %v is not finite", i/c.Dim, i%c.Dim, v)
				}
			}
		}
	}
	if len(c.Offsets) != c.NList {
		add("offsets has %d entries, want nlist %d", len(c.Offsets), c.NList)
	}
	if len(c.Scales) != c.NList {
		add("scales has %d entries, want nlist %d", len(c.Scales), c.NList)
	}
	if len(c.Codes) != c.NList*c.Dim {
		add("codes has %d bytes, want nlist %d × dimension %d", len(c.Codes), c.NList, c.Dim)
	}
	if len(c.Offsets) == c.NList && len(c.Scales) == c.NList && len(c.Codes) == c.NList*c.Dim {
		for cid := 0; cid < c.NList; cid++ {
			off, sc := c.Offsets[cid], c.Scales[cid]
			switch {
			case !finite32(off):
				add("leaf %d offset %v is not finite", cid, off)
			case !finite32(sc) || sc < 0:
				add("leaf %d scale %v is not finite and non-negative", cid, sc)
			default:
				var maxCode byte
				for _, b := range c.Codes[cid*c.Dim : (cid+1)*c.Dim] {
					maxCode = max(maxCode, b)
				}
				if v := float32(float64(off) + float64(sc)*float64(maxCode)); !finite32(v) {
					add("leaf %d reconstruction offset + scale*%d = %v is not finite", cid, maxCode, v)
				}
			}
		}
	}
	return errors.Join(errs...)
}

// prepared returns the derived state, building it on first use. Concurrent
// first uses may build it twice; one result wins and both are identical.
// It panics if c is invalid: callers validate first (Train output and
// tables read by package postings are validated).
func (c *Centroids) prepared() *prepared {
	if p := c.prep.Load(); p != nil {
		return p
	}
	if err := c.Validate(); err != nil {
		panic(fmt.Sprintf("ivf: Centroids used before validation: %v", err))
	}
	p := buildPrepared(c)
	if c.prep.CompareAndSwap(nil, p) {
		return p
	}
	return c.prep.Load()
}

// Prepare validates c and builds its cache of decoded leaves. Calling it is
// optional (first use does the same) but turns an invalid value into an
// error instead of a panic at first use.
func (c *Centroids) Prepare() error {
	if c.prep.Load() != nil {
		return nil
	}
	if err := c.Validate(); err != nil {
		return err
	}
	c.prepared()
	return nil
}

func buildPrepared(c *Centroids) *prepared {
	d, nl, r := c.Dim, c.NList, c.NumRoots()
	p := &prepared{
		leaves:       make([]float32, nl*d),
		leafNormSq:   make([]float64, nl),
		rootOf:       make([]int32, nl),
		rootNormSq:   make([]float64, r),
		shadow:       make([]bool, nl),
		leafRootDist: make([]float64, nl),
		rootRadius:   make([]float64, r),
	}
	for cid := 0; cid < nl; cid++ {
		leaf := p.leaves[cid*d : (cid+1)*d]
		lvq.Decode8(leaf, c.Codes[cid*d:(cid+1)*d], c.Offsets[cid], c.Scales[cid])
		p.leafNormSq[cid] = normSq64(leaf)
		for _, v := range leaf {
			p.maxAbs = max(p.maxAbs, math.Abs(float64(v)))
		}
	}
	for ri := 0; ri < r; ri++ {
		root := c.Root(ri)
		p.rootNormSq[ri] = normSq64(root)
		for _, v := range root {
			p.maxAbs = max(p.maxAbs, math.Abs(float64(v)))
		}
		for cid := c.CIDOffsets[ri]; cid < c.CIDOffsets[ri+1]; cid++ {
			p.rootOf[cid] = int32(ri)
			dist := math.Sqrt(l2Sq64(p.leaves[int(cid)*d:(int(cid)+1)*d], root))
			p.leafRootDist[cid] = dist
			p.rootRadius[ri] = max(p.rootRadius[ri], dist)
		}
	}
	markShadows(p.leaves, d, p.shadow)
	return p
}

// markShadows sets shadow[j] for every leaf whose reconstruction equals,
// element by element (numerically: +0 equals -0), that of a smaller cid.
func markShadows(leaves []float32, d int, shadow []bool) {
	n := len(shadow)
	first := make(map[uint64][]int32, n)
	for j := 0; j < n; j++ {
		v := leaves[j*d : (j+1)*d]
		h := hashVec(v)
		dup := false
		for _, k := range first[h] {
			if equalVec(leaves[int(k)*d:(int(k)+1)*d], v) {
				dup = true
				break
			}
		}
		if dup {
			shadow[j] = true
			continue
		}
		first[h] = append(first[h], int32(j))
	}
}

func hashVec(v []float32) uint64 {
	const prime = 1099511628211
	h := uint64(14695981039346656037)
	for _, x := range v {
		if x == 0 {
			x = 0 // +0 and -0 hash alike
		}
		h = (h ^ uint64(math.Float32bits(x))) * prime
	}
	return h
}

func equalVec(a, b []float32) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func finite32(v float32) bool { return !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) }

// normSq64 returns Σ v_i² summed sequentially in float64.
func normSq64(v []float32) float64 {
	var s float64
	for _, x := range v {
		f := float64(x)
		s += f * f
	}
	return s
}

// l2Sq64 returns Σ (a_i − b_i)² summed sequentially in float64. For float32
// inputs no intermediate overflows or underflows, and the result has
// relative error at most γ(D+1) = (D+1)u/(1-(D+1)u), u = 2^-53 (see
// docs/ivf.md).
func l2Sq64(a, b []float32) float64 {
	b = b[:len(a)]
	var s float64
	for i, x := range a {
		d := float64(x) - float64(b[i])
		s += d * d
	}
	return s
}
