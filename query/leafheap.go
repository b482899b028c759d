package query

// The one binary heap of leaves (leafDist, ordered by lessLeaf), in two
// directions: routing keeps the nprobe best in a worst-first heap (the
// root is the leaf to drop), the filtered search pops leaves nearest first
// from a nearest-first heap.

// heapifyNearest orders h as a nearest-first heap.
func heapifyNearest(h []leafDist) {
	for i := len(h)/2 - 1; i >= 0; i-- {
		siftDownLeaf(h, i, true)
	}
}

// popNearest removes the nearest leaf from the nearest-first heap h.
func popNearest(h []leafDist) (int32, []leafDist) {
	cid := h[0].cid
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	siftDownLeaf(h, 0, true)
	return cid, h
}

// siftUpLeaf restores the worst-first heap order above i.
func siftUpLeaf(h []leafDist, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !lessLeaf(h[p], h[i]) {
			return
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
}

// siftDownLeaf restores the heap order below i: nearest-first when
// nearest, else worst-first.
func siftDownLeaf(h []leafDist, i int, nearest bool) {
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h) && aboveLeaf(h[l], h[m], nearest) {
			m = l
		}
		if r < len(h) && aboveLeaf(h[r], h[m], nearest) {
			m = r
		}
		if m == i {
			return
		}
		h[m], h[i] = h[i], h[m]
		i = m
	}
}

// aboveLeaf reports whether a belongs above b in the heap.
func aboveLeaf(a, b leafDist, nearest bool) bool {
	if nearest {
		return lessLeaf(a, b)
	}
	return lessLeaf(b, a)
}

// cmpLeaf is lessLeaf's order as a comparison (slices.SortFunc).
func cmpLeaf(a, b leafDist) int {
	switch {
	case lessLeaf(a, b):
		return -1
	case lessLeaf(b, a):
		return 1
	}
	return 0
}
