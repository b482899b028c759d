package main

import (
	"errors"
	"sync"
	"testing"

	"github.com/parqdb/parqdb/query"
)

type closer struct{ closed int }

func (c *closer) Close() error { c.closed++; return nil }

// TestHandles: a handle names its object until released; a released
// handle names nothing, even when its slot holds a new object; release
// closes a Closer once; lookups of the wrong type fail.
func TestHandles(t *testing.T) {
	n0 := openHandles()
	c := &closer{}
	h := newHandle(c)
	if got, err := lookup[*closer](h, "closer"); err != nil || got != c {
		t.Fatalf("lookup(%d) = %v, %v", h, got, err)
	}
	if _, err := lookup[*task](h, "task"); !errors.Is(err, query.ErrBadQuery) {
		t.Fatalf("lookup of the wrong type: %v", err)
	}
	if !release(h) || c.closed != 1 {
		t.Fatalf("release: closed %d", c.closed)
	}
	if release(h) || c.closed != 1 {
		t.Fatalf("a second release: closed %d", c.closed)
	}
	h2 := newHandle(&closer{}) // takes the freed slot
	if h2 == h {
		t.Fatalf("a new object got the released handle %d", h)
	}
	if _, err := lookup[*closer](h, "closer"); err == nil {
		t.Fatalf("the released handle %d names the slot's new object", h)
	}
	for _, bad := range []int64{0, -1, h2 + 1<<40, 1<<31 - 1} {
		if _, err := lookup[*closer](bad, "closer"); err == nil {
			t.Errorf("handle %d: found", bad)
		}
	}
	release(h2)
	if n := openHandles(); n != n0 {
		t.Fatalf("%d handles open, want %d", n, n0)
	}
}

// TestHandlesConcurrent registers, looks up and releases from several
// goroutines while the table grows (run with -race).
func TestHandlesConcurrent(t *testing.T) {
	n0 := openHandles()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []int64
			for i := range 2000 {
				v := &closer{closed: g*10000 + i}
				h := newHandle(v)
				mine = append(mine, h)
				if got, err := lookup[*closer](h, "closer"); err != nil || got != v {
					t.Errorf("lookup(%d) = %v, %v", h, got, err)
					return
				}
				if i%3 == 0 {
					release(mine[0])
					mine = mine[1:]
				}
			}
			for _, h := range mine {
				if !release(h) {
					t.Errorf("release(%d): not open", h)
				}
			}
		}()
	}
	wg.Wait()
	if n := openHandles(); n != n0 {
		t.Fatalf("%d handles open, want %d", n, n0)
	}
}

// TestReleaseMany releases a mix of open, released, unknown and repeated
// handles in one call: each open one is forgotten and its Closer closed
// once; the others change nothing.
func TestReleaseMany(t *testing.T) {
	n0 := openHandles()
	a, b := &closer{}, &closer{}
	ha, hb := newHandle(a), newHandle(b)
	hr := newResult1(&query.Result{})
	gone := newHandle(&closer{})
	release(gone)
	keep := &closer{}
	hk := newHandle(keep)
	releaseMany([]int64{ha, gone, 0, -5, hb, ha, hr})
	if a.closed != 1 || b.closed != 1 {
		t.Fatalf("closed %d and %d times, want once each", a.closed, b.closed)
	}
	for _, h := range []int64{ha, hb, hr} {
		if _, ok := get(h); ok {
			t.Errorf("handle %d still open", h)
		}
	}
	if got, err := lookup[*closer](hk, "closer"); err != nil || got != keep || keep.closed != 0 {
		t.Fatalf("an unlisted handle: %v, %v, closed %d", got, err, keep.closed)
	}
	release(hk)
	if n := openHandles(); n != n0 {
		t.Fatalf("%d handles open, want %d", n, n0)
	}
}

// TestResultHandle: a result registered with its own entry is found by
// its handle and holds the one query's result.
func TestResultHandle(t *testing.T) {
	r := &query.Result{}
	h := newResult1(r)
	got, err := lookup[*result](h, "result")
	if err != nil || len(got.rs) != 1 || got.rs[0] != r {
		t.Fatalf("lookup(%d) = %+v, %v", h, got, err)
	}
	if !release(h) {
		t.Fatal("release: not open")
	}
	if _, err := lookup[*result](h, "result"); err == nil {
		t.Fatal("a released result is found")
	}
}
