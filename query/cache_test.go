package query

import (
	"testing"

	"github.com/parqdb/parqdb/postings"
)

func TestCacheBudgetAndSecondChance(t *testing.T) {
	mk := func(cid int32) *list {
		return &list{cid: cid, batch: postings.Batch{CIDs: make([]int32, 100), Codes: make([]byte, 1000)}}
	}
	one := mk(0).bytes()
	c := newCache(3*one, 10, nil)
	for cid := int32(0); cid < 3; cid++ {
		c.put(mk(cid))
	}
	if c.get(0) == nil || c.get(2) == nil {
		t.Fatal("lists within the budget were evicted")
	}
	// 0 and 2 were read: 1 goes first.
	c.put(mk(5))
	if c.get(1) != nil || c.get(5) == nil || c.get(0) == nil {
		t.Fatalf("CLOCK evicted the wrong list: 1=%v 5=%v 0=%v", c.get(1) != nil, c.get(5) != nil, c.get(0) != nil)
	}
	if c.c.Bytes() > c.budget {
		t.Fatalf("size %d over budget %d", c.c.Bytes(), c.budget)
	}
	// A second put of a cached CID returns the cached list.
	first := c.get(5)
	if got := c.put(mk(5)); got != first {
		t.Fatal("put replaced a cached list")
	}
	// Disabled cache.
	off := newCache(-1, 10, nil)
	l := mk(3)
	if off.put(l) != l || off.get(3) != nil {
		t.Fatal("a disabled cache kept a list")
	}
}
