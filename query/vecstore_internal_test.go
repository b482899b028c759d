package query

import "testing"

// TestVecStoreEvictionAndAccounting: blocks within the budget stay; a put
// over it evicts by CLOCK (a block read since the hand passed gets a
// second chance); the charged bytes are the stored blocks' and never
// exceed the budget; a block larger than the budget is not stored; a
// disabled store stores nothing.
func TestVecStoreEvictionAndAccounting(t *testing.T) {
	const dim = 8
	blk := func(rows int) []float32 { return make([]float32, rows*dim) }
	one := int64(10*dim*4 + listVecsOverhead)
	s := newVecStore(3*one, 10, dim, nil)
	for cid := int32(0); cid < 3; cid++ {
		s.put(cid, blk(10))
	}
	if got := s.bytes(); got != 3*one {
		t.Fatalf("charged %d bytes, want %d", got, 3*one)
	}
	if s.get(0) == nil || s.get(2) == nil {
		t.Fatal("blocks within the budget were evicted")
	}
	s.put(5, blk(10)) // 0 and 2 were read: 1 goes
	if s.get(1) != nil || s.get(5) == nil || s.get(0) == nil || s.get(2) == nil {
		t.Fatal("CLOCK evicted the wrong block")
	}
	if got := s.bytes(); got != 3*one {
		t.Fatalf("after eviction charged %d bytes, want %d", got, 3*one)
	}
	first := s.get(5)
	if got := s.put(5, blk(10)); &got[0] != &first[0] {
		t.Fatal("put replaced a stored block")
	}
	if v := s.put(7, blk(40)); v == nil || s.get(7) != nil || s.bytes() != 3*one {
		t.Fatal("a block over the whole budget was stored")
	}
	if st := s.c.Stats(); st.Hits == 0 || st.Misses == 0 {
		t.Fatalf("hits %d misses %d", st.Hits, st.Misses)
	}
	off := newVecStore(-1, 10, dim, nil)
	off.put(3, blk(1))
	if off.get(3) != nil || off.bytes() != 0 {
		t.Fatal("a disabled store kept a block")
	}
	if off.fits(1, 1, 1<<40) || !s.fits(1, 1, 1<<40) || s.fits(1000, 10, 1<<40) || s.fits(1, 1, 10) {
		t.Fatal("fits")
	}
}
