package filter

// The kernels below set dst (words(len(xs)) words) to the rows x of xs for
// which a comparison with lit holds. Each full word is built from eight
// groups of eight comparisons with constant shifts, so that the word stays
// in a register and the loop carries no per-element bounds check or
// variable shift: about twice as fast as the one-element loop, and cheaper
// per value than copying the page.

func ltInts[T intElem](dst bitset, xs []T, lit int64) {
	full := len(xs) >> 6
	for w := range full {
		c := xs[w<<6 : w<<6+64 : w<<6+64]
		var m uint64
		for j := 0; j < 64; j += 8 {
			q := c[j : j+8 : j+8]
			g := b2u(int64(q[0]) < lit) |
				b2u(int64(q[1]) < lit)<<1 |
				b2u(int64(q[2]) < lit)<<2 |
				b2u(int64(q[3]) < lit)<<3 |
				b2u(int64(q[4]) < lit)<<4 |
				b2u(int64(q[5]) < lit)<<5 |
				b2u(int64(q[6]) < lit)<<6 |
				b2u(int64(q[7]) < lit)<<7
			m |= g << uint(j)
		}
		dst[w] = m
	}
	if r := xs[full<<6:]; len(r) > 0 {
		var m uint64
		for j, x := range r {
			m |= b2u(int64(x) < lit) << uint(j&63)
		}
		dst[full] = m
	}
}

func eqInts[T intElem](dst bitset, xs []T, lit int64) {
	full := len(xs) >> 6
	for w := range full {
		c := xs[w<<6 : w<<6+64 : w<<6+64]
		var m uint64
		for j := 0; j < 64; j += 8 {
			q := c[j : j+8 : j+8]
			g := b2u(int64(q[0]) == lit) |
				b2u(int64(q[1]) == lit)<<1 |
				b2u(int64(q[2]) == lit)<<2 |
				b2u(int64(q[3]) == lit)<<3 |
				b2u(int64(q[4]) == lit)<<4 |
				b2u(int64(q[5]) == lit)<<5 |
				b2u(int64(q[6]) == lit)<<6 |
				b2u(int64(q[7]) == lit)<<7
			m |= g << uint(j)
		}
		dst[w] = m
	}
	if r := xs[full<<6:]; len(r) > 0 {
		var m uint64
		for j, x := range r {
			m |= b2u(int64(x) == lit) << uint(j&63)
		}
		dst[full] = m
	}
}

func ltFloats[T floatElem](dst bitset, xs []T, lit float64) {
	full := len(xs) >> 6
	for w := range full {
		c := xs[w<<6 : w<<6+64 : w<<6+64]
		var m uint64
		for j := 0; j < 64; j += 8 {
			q := c[j : j+8 : j+8]
			g := b2u(float64(q[0]) < lit) |
				b2u(float64(q[1]) < lit)<<1 |
				b2u(float64(q[2]) < lit)<<2 |
				b2u(float64(q[3]) < lit)<<3 |
				b2u(float64(q[4]) < lit)<<4 |
				b2u(float64(q[5]) < lit)<<5 |
				b2u(float64(q[6]) < lit)<<6 |
				b2u(float64(q[7]) < lit)<<7
			m |= g << uint(j)
		}
		dst[w] = m
	}
	if r := xs[full<<6:]; len(r) > 0 {
		var m uint64
		for j, x := range r {
			m |= b2u(float64(x) < lit) << uint(j&63)
		}
		dst[full] = m
	}
}

func leFloats[T floatElem](dst bitset, xs []T, lit float64) {
	full := len(xs) >> 6
	for w := range full {
		c := xs[w<<6 : w<<6+64 : w<<6+64]
		var m uint64
		for j := 0; j < 64; j += 8 {
			q := c[j : j+8 : j+8]
			g := b2u(float64(q[0]) <= lit) |
				b2u(float64(q[1]) <= lit)<<1 |
				b2u(float64(q[2]) <= lit)<<2 |
				b2u(float64(q[3]) <= lit)<<3 |
				b2u(float64(q[4]) <= lit)<<4 |
				b2u(float64(q[5]) <= lit)<<5 |
				b2u(float64(q[6]) <= lit)<<6 |
				b2u(float64(q[7]) <= lit)<<7
			m |= g << uint(j)
		}
		dst[w] = m
	}
	if r := xs[full<<6:]; len(r) > 0 {
		var m uint64
		for j, x := range r {
			m |= b2u(float64(x) <= lit) << uint(j&63)
		}
		dst[full] = m
	}
}

func gtFloats[T floatElem](dst bitset, xs []T, lit float64) {
	full := len(xs) >> 6
	for w := range full {
		c := xs[w<<6 : w<<6+64 : w<<6+64]
		var m uint64
		for j := 0; j < 64; j += 8 {
			q := c[j : j+8 : j+8]
			g := b2u(float64(q[0]) > lit) |
				b2u(float64(q[1]) > lit)<<1 |
				b2u(float64(q[2]) > lit)<<2 |
				b2u(float64(q[3]) > lit)<<3 |
				b2u(float64(q[4]) > lit)<<4 |
				b2u(float64(q[5]) > lit)<<5 |
				b2u(float64(q[6]) > lit)<<6 |
				b2u(float64(q[7]) > lit)<<7
			m |= g << uint(j)
		}
		dst[w] = m
	}
	if r := xs[full<<6:]; len(r) > 0 {
		var m uint64
		for j, x := range r {
			m |= b2u(float64(x) > lit) << uint(j&63)
		}
		dst[full] = m
	}
}

func geFloats[T floatElem](dst bitset, xs []T, lit float64) {
	full := len(xs) >> 6
	for w := range full {
		c := xs[w<<6 : w<<6+64 : w<<6+64]
		var m uint64
		for j := 0; j < 64; j += 8 {
			q := c[j : j+8 : j+8]
			g := b2u(float64(q[0]) >= lit) |
				b2u(float64(q[1]) >= lit)<<1 |
				b2u(float64(q[2]) >= lit)<<2 |
				b2u(float64(q[3]) >= lit)<<3 |
				b2u(float64(q[4]) >= lit)<<4 |
				b2u(float64(q[5]) >= lit)<<5 |
				b2u(float64(q[6]) >= lit)<<6 |
				b2u(float64(q[7]) >= lit)<<7
			m |= g << uint(j)
		}
		dst[w] = m
	}
	if r := xs[full<<6:]; len(r) > 0 {
		var m uint64
		for j, x := range r {
			m |= b2u(float64(x) >= lit) << uint(j&63)
		}
		dst[full] = m
	}
}

func eqFloats[T floatElem](dst bitset, xs []T, lit float64) {
	full := len(xs) >> 6
	for w := range full {
		c := xs[w<<6 : w<<6+64 : w<<6+64]
		var m uint64
		for j := 0; j < 64; j += 8 {
			q := c[j : j+8 : j+8]
			g := b2u(float64(q[0]) == lit) |
				b2u(float64(q[1]) == lit)<<1 |
				b2u(float64(q[2]) == lit)<<2 |
				b2u(float64(q[3]) == lit)<<3 |
				b2u(float64(q[4]) == lit)<<4 |
				b2u(float64(q[5]) == lit)<<5 |
				b2u(float64(q[6]) == lit)<<6 |
				b2u(float64(q[7]) == lit)<<7
			m |= g << uint(j)
		}
		dst[w] = m
	}
	if r := xs[full<<6:]; len(r) > 0 {
		var m uint64
		for j, x := range r {
			m |= b2u(float64(x) == lit) << uint(j&63)
		}
		dst[full] = m
	}
}

// inBit is 1 when x−lo is in [0, 64) and that bit of mask is set.
func inBit[T intElem](x T, lo int64, mask uint64) uint64 {
	d := uint64(int64(x) - lo)
	return (mask >> (d & 63)) & b2u(d < 64)
}

// inIntsMask sets dst to the rows x with x−lo in [0, 64) and bit x−lo of
// mask set: an IN list whose values span less than 64, one pass, no branch.
func inIntsMask[T intElem](dst bitset, xs []T, lo int64, mask uint64) {
	full := len(xs) >> 6
	for w := range full {
		c := xs[w<<6 : w<<6+64 : w<<6+64]
		var m uint64
		for j := 0; j < 64; j += 8 {
			q := c[j : j+8 : j+8]
			g := inBit(q[0], lo, mask) |
				inBit(q[1], lo, mask)<<1 |
				inBit(q[2], lo, mask)<<2 |
				inBit(q[3], lo, mask)<<3 |
				inBit(q[4], lo, mask)<<4 |
				inBit(q[5], lo, mask)<<5 |
				inBit(q[6], lo, mask)<<6 |
				inBit(q[7], lo, mask)<<7
			m |= g << uint(j)
		}
		dst[w] = m
	}
	if r := xs[full<<6:]; len(r) > 0 {
		var m uint64
		for j, x := range r {
			m |= inBit(x, lo, mask) << uint(j&63)
		}
		dst[full] = m
	}
}
