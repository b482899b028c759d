package query

import (
	"testing"

	"github.com/parqdb/parqdb/internal/membudget"
)

// TestVecStoreSharedEviction checks that the blocks of a whole-store fill,
// which share one allocation, leave together: evicting the fill drops them
// all (their memory is freed only then) and releases all their bytes,
// while an ordinary block is evicted on its own and leaves the fill's
// blocks in place.
func TestVecStoreSharedEviction(t *testing.T) {
	for _, startAtOwn := range []bool{false, true} {
		b := membudget.New(1 << 20)
		s := newVecStore(1<<20, 6, 16, b)
		block := func(n int) int64 { return int64(n)*16*4 + listVecsOverhead }
		own := func() { s.put(4, make([]float32, 2*16)) } // a list read on demand
		if startAtOwn {
			own() // the oldest: the clock hand reaches it first
		}
		arena := make([]float32, 4*3*16)
		all := make([][]float32, 6)
		for cid := range 4 { // the fill's blocks: 3 rows of 16 each
			all[cid] = arena[cid*48 : (cid+1)*48 : (cid+1)*48]
		}
		if _, ok := s.c.Put(s.fillKey, &storeBlocks{all: all, where: make([]place, 12)}, 4*block(3)); !ok {
			t.Fatal("the fill was not stored")
		}
		s.full.Store(true)
		if !startAtOwn {
			own()
		}
		if got, want := s.bytes(), 4*block(3)+block(2); got != want || b.Used() != want {
			t.Fatalf("stored %d bytes (budget used %d), want %d", got, b.Used(), want)
		}
		before := b.Used()
		b.SetLimit(before - 1) // the budget asks for one byte back
		freed := before - b.Used()
		held := map[int32]bool{}
		for cid := range int32(6) {
			held[cid] = s.lookup(cid) != nil
		}
		if startAtOwn {
			if freed != block(2) || held[4] || !held[0] || !held[1] || !held[2] || !held[3] {
				t.Fatalf("hand at the own block: freed %d, held %v; want only block 4 (%d bytes) gone", freed, held, block(2))
			}
		} else if freed != 4*block(3) || !held[4] || held[0] || held[1] || held[2] || held[3] {
			t.Fatalf("hand at the fill: freed %d, held %v; want the four shared blocks (%d bytes) gone", freed, held, 4*block(3))
		}
		if s.bytes() != b.Used() {
			t.Fatalf("store charges %d bytes, the budget %d", s.bytes(), b.Used())
		}
	}
}
