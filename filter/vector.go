package filter

import (
	"bytes"
	"math"
	"math/bits"
	"slices"
	"unsafe"
)

// vector holds one program column's values over the rows of a row group in
// typed form: ints for integer, date, timestamp and boolean columns (0/1),
// floats for float columns, data+offs for strings. A NULL row has its bit
// set in nulls and a zero value. Rows of pages that were not decoded hold
// zero values too; their result is masked out by the caller.
type vector struct {
	n      int
	is32   bool    // an INT32 column: values in i32, not ints
	uns    bool    // i32 holds unsigned values
	i32    []int32 // INT32 columns' values as stored (unsigned ones reinterpreted)
	ints   []int64
	floats []float64
	f32    []float32 // a FLOAT page's values, in a view of the page (see viewPage); nil otherwise
	data   []byte
	offs   []uint32 // len n+1 for strings
	nulls  []uint64 // nil while no row is NULL
}

func (v *vector) reset(typ colType, is32, unsigned bool) {
	v.n = 0
	v.is32, v.uns = is32, unsigned
	v.i32 = v.i32[:0]
	v.ints = v.ints[:0]
	v.floats = v.floats[:0]
	v.f32 = nil
	v.data = v.data[:0]
	v.offs = v.offs[:0]
	if typ == typeString {
		v.offs = append(v.offs, 0)
	}
	v.nulls = v.nulls[:0]
}

// appendInt appends an integer row value.
func (v *vector) appendInt(x int64) {
	if v.is32 {
		v.i32 = append(v.i32, int32(x))
	} else {
		v.ints = append(v.ints, x)
	}
}

// intAt returns row i's integer value.
func (v *vector) intAt(i int) int64 {
	switch {
	case !v.is32:
		return v.ints[i]
	case v.uns:
		return int64(uint32(v.i32[i]))
	}
	return int64(v.i32[i])
}

// u32 returns i32 as the unsigned values it holds.
func (v *vector) u32() []uint32 { return u32(v.i32) }

// u32 reinterprets xs as unsigned.
func u32(xs []int32) []uint32 {
	return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(xs))), len(xs))
}

// setNull marks row i NULL.
func (v *vector) setNull(i int) {
	w := i >> 6
	for len(v.nulls) <= w {
		v.nulls = append(v.nulls, 0)
	}
	v.nulls[w] |= 1 << (uint(i) & 63)
}

// str returns row i's string.
func (v *vector) str(i int) []byte { return v.data[v.offs[i]:v.offs[i+1]] }

// bitset is a set of rows of a batch, one bit per row.
type bitset []uint64

func words(n int) int { return (n + 63) >> 6 }

// tmask returns the mask of the valid bits of the last word for n rows.
func tailMask(n int) uint64 {
	if n&63 == 0 {
		return ^uint64(0)
	}
	return 1<<(uint(n)&63) - 1
}

// b2u converts a bool to 0 or 1 without a branch.
func b2u(b bool) uint64 {
	var x uint64
	if b {
		x = 1
	}
	return x
}

// valid returns the rows that are not NULL into dst.
func (v *vector) valid(dst bitset) {
	for w := range dst {
		var nl uint64
		if w < len(v.nulls) {
			nl = v.nulls[w]
		}
		dst[w] = ^nl
	}
	if len(dst) > 0 {
		dst[len(dst)-1] &= tailMask(v.n)
	}
}

// intElem is the element type of an integer vector.
type intElem interface{ ~int32 | ~uint32 | ~int64 }

// cmpInts sets dst to the rows x with x op lit (int64 compare). Every
// operator is one of two kernels, < and =, with the result inverted or the
// literal moved by one.
func cmpInts[T intElem](dst bitset, xs []T, op opCode, lit int64) {
	switch op {
	case opEq:
		eqInts(dst, xs, lit)
	case opNe:
		eqInts(dst, xs, lit)
		invert(dst, len(xs))
	case opLt:
		ltInts(dst, xs, lit)
	case opGe:
		ltInts(dst, xs, lit)
		invert(dst, len(xs))
	case opLe, opGt:
		if lit == math.MaxInt64 {
			fill(dst, len(xs))
		} else {
			ltInts(dst, xs, lit+1)
		}
		if op == opGt {
			invert(dst, len(xs))
		}
	}
}

// invert flips the first n bits of dst.
func invert(dst bitset, n int) {
	for w := range dst {
		dst[w] = ^dst[w]
	}
	if len(dst) > 0 {
		dst[len(dst)-1] &= tailMask(n)
	}
}

// fill sets the first n bits of dst.
func fill(dst bitset, n int) {
	for w := range dst {
		dst[w] = ^uint64(0)
	}
	if len(dst) > 0 {
		dst[len(dst)-1] &= tailMask(n)
	}
}

// inInts sets dst to the rows x equal to one of lits, in one pass.
func inInts[T intElem](dst bitset, xs []T, lits []int64) {
	for w := range dst {
		base := w << 6
		var m uint64
		for j, x := range xs[base:min(base+64, len(xs))] {
			y := int64(x)
			var hit uint64 // no branch per element: the outcome is data-dependent
			for _, l := range lits {
				hit |= b2u(y == l)
			}
			m |= hit << uint(j)
		}
		dst[w] = m
	}
}

// floatElem is the element type of a float vector.
type floatElem interface{ ~float32 | ~float64 }

// cmpFloats sets dst to the rows x with x op lit; NaN compares as Go's
// operators do, which is cmpResult's rule (only != is true).
func cmpFloats[T floatElem](dst bitset, xs []T, op opCode, lit float64) {
	switch op {
	case opEq:
		eqFloats(dst, xs, lit)
	case opNe:
		eqFloats(dst, xs, lit)
		invert(dst, len(xs))
	case opLt:
		ltFloats(dst, xs, lit)
	case opLe:
		leFloats(dst, xs, lit)
	case opGt:
		gtFloats(dst, xs, lit)
	default:
		geFloats(dst, xs, lit)
	}
}

// cmpIntsAsFloats compares integer rows with a float literal.
func cmpIntsAsFloats[T intElem](dst bitset, xs []T, op opCode, lit float64) {
	for w := range dst {
		base := w << 6
		var m uint64
		for j, x := range xs[base:min(base+64, len(xs))] {
			m |= b2u(cmpResultCode(op, compareFloat(float64(x), lit))) << uint(j)
		}
		dst[w] = m
	}
}

func compareFloat(x, v float64) int {
	switch {
	case x < v:
		return -1
	case x > v:
		return 1
	case x == v:
		return 0
	}
	return 2
}

func cmpResultCode(op opCode, c int) bool {
	if c == 2 {
		return op == opNe
	}
	switch op {
	case opEq:
		return c == 0
	case opNe:
		return c != 0
	case opLt:
		return c < 0
	case opLe:
		return c <= 0
	case opGt:
		return c > 0
	}
	return c >= 0
}

// cmpStrings sets dst to the rows s with s op lit (byte-wise).
func cmpStrings(dst bitset, v *vector, op opCode, lit []byte) {
	for w := range dst {
		base := w << 6
		end := min(base+64, v.n)
		var m uint64
		for i := base; i < end; i++ {
			m |= b2u(cmpResultCode(op, bytes.Compare(v.str(i), lit))) << uint(i-base)
		}
		dst[w] = m
	}
}

// cmpVector sets dst to the non-NULL rows of v for which `x op lit` is
// true (lit not NULL).
func cmpVector(dst bitset, col column, v *vector, op opCode, lit value) {
	switch {
	case col.typ == typeString:
		cmpStrings(dst, v, op, lit.s)
	case col.typ == typeFloat && v.f32 != nil:
		cmpFloats(dst, v.f32, op, lit.f)
	case col.typ == typeFloat:
		cmpFloats(dst, v.floats, op, lit.f)
	case lit.isF:
		switch {
		case !v.is32:
			cmpIntsAsFloats(dst, v.ints, op, lit.f)
		case v.uns:
			cmpIntsAsFloats(dst, v.u32(), op, lit.f)
		default:
			cmpIntsAsFloats(dst, v.i32, op, lit.f)
		}
	default:
		if v.is32 {
			cmpI32(dst, v.i32, v.uns, op, lit.i)
		} else {
			cmpInts(dst, v.ints, op, lit.i)
		}
	}
	andNot(dst, v.nulls)
}

// cmpI32 is cmpInts for INT32 values (unsigned ones when uns), with the
// vector kernel for the full words where the platform has one.
func cmpI32(dst bitset, xs []int32, uns bool, op opCode, lit int64) {
	lo, hi := int64(math.MinInt32), int64(math.MaxInt32)
	var bias int32
	if uns {
		lo, hi, bias = 0, math.MaxUint32, math.MinInt32
	}
	// x op lit is x < l or x = l, inverted when inv.
	eq := op == opEq || op == opNe
	inv := op == opNe || op == opGe || op == opGt
	l := lit
	if op == opLe || op == opGt {
		if l == math.MaxInt64 {
			fill(dst, len(xs))
			if inv {
				invert(dst, len(xs))
			}
			return
		}
		l++
	}
	switch {
	case eq && (l < lo || l > hi), !eq && l <= lo:
		clear(dst)
	case !eq && l > hi:
		fill(dst, len(xs))
	default:
		done := cmpInt32Fast(dst, xs, int32(uint32(l))^bias, bias, eq)
		rest, d := xs[done:], dst[done>>6:]
		switch {
		case uns && eq:
			eqInts(d, u32(rest), l)
		case uns:
			ltInts(d, u32(rest), l)
		case eq:
			eqInts(d, rest, l)
		default:
			ltInts(d, rest, l)
		}
	}
	if inv {
		invert(dst, len(xs))
	}
}

// inVector sets dst to the non-NULL rows of an integer vector equal to one
// of lits.
func inVector(dst, tmp bitset, v *vector, lits []int64) {
	if v.is32 && useAVX2 && len(lits) <= 4 {
		// One vector pass per literal beats the one-pass scalar test.
		cmpI32(dst, v.i32, v.uns, opEq, lits[0])
		for _, l := range lits[1:] {
			cmpI32(tmp, v.i32, v.uns, opEq, l)
			for w := range dst {
				dst[w] |= tmp[w]
			}
		}
		andNot(dst, v.nulls)
		return
	}
	lo, hi := lits[0], lits[0]
	for _, l := range lits {
		lo, hi = min(lo, l), max(hi, l)
	}
	if hi-lo >= 0 && hi-lo < 64 {
		var mask uint64
		for _, l := range lits {
			mask |= 1 << uint(l-lo)
		}
		switch {
		case !v.is32:
			inIntsMask(dst, v.ints, lo, mask)
		case v.uns:
			inIntsMask(dst, v.u32(), lo, mask)
		default:
			inIntsMask(dst, v.i32, lo, mask)
		}
		andNot(dst, v.nulls)
		return
	}
	switch {
	case !v.is32:
		inInts(dst, v.ints, lits)
	case v.uns:
		inInts(dst, v.u32(), lits)
	default:
		inInts(dst, v.i32, lits)
	}
	andNot(dst, v.nulls)
}

func andNot(dst, b bitset) {
	for w := range min(len(dst), len(b)) {
		dst[w] &^= b[w]
	}
}

// likeVector sets dst to the non-NULL rows whose string has the prefix (or
// equals it, when exact).
func likeVector(dst bitset, v *vector, prefix []byte, exact bool) {
	for w := range dst {
		base := w << 6
		end := min(base+64, v.n)
		var m uint64
		for i := base; i < end; i++ {
			s := v.str(i)
			var r bool
			if exact {
				r = bytes.Equal(s, prefix)
			} else {
				r = bytes.HasPrefix(s, prefix)
			}
			m |= b2u(r) << uint(i-base)
		}
		dst[w] = m
	}
	andNot(dst, v.nulls)
}

// batch is the scratch of a vectorised evaluation: the columns' vectors
// and a stack of bitsets.
type batch struct {
	n     int
	vecs  []vector   // unused by evalVec: DecodeRowGroup's vectors
	lb    []leafBits // per leaf, its result (Scratch.lb)
	valid []bitset   // per column, the rows not NULL (Scratch.valid)
	free  []bitset
}

func (b *batch) get() bitset {
	nw := words(b.n)
	if k := len(b.free); k > 0 {
		s := b.free[k-1]
		b.free = b.free[:k-1]
		if cap(s) >= nw {
			return s[:nw]
		}
	}
	return make(bitset, nw)
}

func (b *batch) put(s ...bitset) { b.free = append(b.free, s...) }

// evalVec computes the rows for which node e is true (t) and false (f);
// rows in neither are unknown.
func (p *Program) evalVec(b *batch, e eval) (t, f bitset) {
	switch e := e.(type) {
	case *andEval:
		lt, lf := p.evalVec(b, e.l)
		rt, rf := p.evalVec(b, e.r)
		for w := range lt {
			lt[w] &= rt[w]
			lf[w] |= rf[w]
		}
		b.put(rt, rf)
		return lt, lf
	case *orEval:
		lt, lf := p.evalVec(b, e.l)
		rt, rf := p.evalVec(b, e.r)
		for w := range lt {
			lt[w] |= rt[w]
			lf[w] &= rf[w]
		}
		b.put(rt, rf)
		return lt, lf
	case *notEval:
		t, f := p.evalVec(b, e.x)
		return f, t
	case *nullEval:
		t, f = b.get(), b.get()
		copy(f, b.valid[e.c]) // valid rows: IS NULL is false there
		for w := range t {
			t[w] = ^f[w]
		}
		t[len(t)-1] &= tailMask(b.n)
		if e.not {
			t, f = f, t
		}
		return t, f
	case *cmpEval:
		t, f = b.get(), b.get()
		if e.v.null {
			clear(t)
			clear(f)
			return t, f
		}
		copy(t, b.lb[e.li][0])
		b.falseOf(e.c, t, f)
		return t, f
	case *inEval:
		t, f = b.get(), b.get()
		copy(t, b.lb[e.li][0])
		if e.hasNull {
			clear(f) // no element equal: unknown
		} else {
			b.falseOf(e.c, t, f)
		}
		if e.not {
			t, f = f, t
		}
		return t, f
	case *betweenEval:
		var gt, gf, lt, lf bitset
		gt, gf, lt, lf = b.get(), b.get(), b.get(), b.get()
		copy(gt, b.lb[e.li][0])
		copy(lt, b.lb[e.li][1])
		if e.lo.null {
			clear(gf)
		} else {
			b.falseOf(e.c, gt, gf)
		}
		if e.hi.null {
			clear(lf)
		} else {
			b.falseOf(e.c, lt, lf)
		}
		for w := range gt {
			gt[w] &= lt[w]
			gf[w] |= lf[w]
		}
		b.put(lt, lf)
		if e.not {
			gt, gf = gf, gt
		}
		return gt, gf
	case *likeEval:
		t, f = b.get(), b.get()
		copy(t, b.lb[e.li][0])
		b.falseOf(e.c, t, f)
		if e.not {
			t, f = f, t
		}
		return t, f
	}
	// Unreachable: every node type is handled above.
	t, f = b.get(), b.get()
	clear(t)
	clear(f)
	return t, f
}

// falseOf sets f to the non-NULL rows of column c not in t.
func (b *batch) falseOf(c int, t, f bitset) {
	v := b.valid[c]
	for w := range f {
		f[w] = v[w] &^ t[w]
	}
}

// appendSet appends base+i for every bit i set in s, growing dst once.
func appendSet(dst []uint32, s bitset, base uint32) []uint32 {
	n := 0
	for _, x := range s {
		n += bits.OnesCount64(x)
	}
	dst = slices.Grow(dst, n)
	out := dst[len(dst) : len(dst)+n]
	k := 0
	for w, x := range s {
		for x != 0 && k < len(out) {
			out[k] = base + uint32(w<<6+bits.TrailingZeros64(x))
			k++
			x &= x - 1
		}
	}
	return dst[:len(dst)+n]
}
