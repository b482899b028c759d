package query

import "github.com/parqdb/parqdb/filter"

// ExactPlanVectors returns how many float32 values of p's matching rows
// the exact plan holds contiguously (0 when none, or p was not used).
func ExactPlanVectors(ix *Index, p *filter.Predicate) int {
	e := ix.filters.lookup(p.String())
	if e == nil {
		return 0
	}
	return len(e.exactVecs)
}

// SetRefineSkip turns refine's skipping of candidates that cannot win on
// or off (on by default).
func SetRefineSkip(on bool) { noRefineSkip.Store(!on) }

// SetVectorsFile makes indexes opened afterwards use (on, the default) or
// ignore their vectors files.
func SetVectorsFile(on bool) { noVectorsFile = !on }

// VectorsFileOpen reports whether ix opened a vectors file.
func VectorsFileOpen(ix *Index) bool {
	ix.vfile.mu.Lock()
	defer ix.vfile.mu.Unlock()
	return ix.vfile.f != nil
}

// KeyIndexLoaded reports whether ix has built or read its key → row map.
func KeyIndexLoaded(ix *Index) bool { return ix.keyIndex != nil }

// PackedLists returns how many lists are packed for p (the list plan's
// packed per-predicate lists) and their bytes as charged.
func PackedLists(ix *Index, p *filter.Predicate) (lists int, bytes int64) {
	e := ix.filters.lookup(p.String())
	if e == nil {
		return 0, 0
	}
	for i := range e.packed {
		if e.packed[i].Load() != nil {
			lists++
		}
	}
	return lists, e.packedBytes.Load()
}

// SetMaxPackedBytes sets the bound on one predicate's packed lists and
// returns the previous one. Not safe while searches run.
func SetMaxPackedBytes(n int64) int64 {
	old := maxPackedBytes
	maxPackedBytes = n
	return old
}

// FilterCacheBytes returns the bytes ix's filter cache counts as held.
func FilterCacheBytes(ix *Index) int64 {
	return ix.filters.c.Bytes()
}

// SetRefineCap turns the scan-time cap of refine's candidates (refineCap)
// on or off (on by default).
func SetRefineCap(on bool) { noRefineCap.Store(!on) }

// SetFirstListBound turns the scan's bound on the first list on or off.
func SetFirstListBound(on bool) { noFirstListBound.Store(!on) }

// SetBlockedCodes forces the LVQ8 code layout of indexes opened next: 1
// blocked, 2 at stride, 0 the default (blockedCodes).
func SetBlockedCodes(v int32) { forceBlocked.Store(v) }

// SetListMajor forces SearchBatch's list-major scan on or off; Reset with
// ResetListMajor.
func SetListMajor(on bool) {
	if on {
		forceListMajor.Store(1)
	} else {
		forceListMajor.Store(2)
	}
}

// ResetListMajor lets SearchBatch choose its scan again.
func ResetListMajor() { forceListMajor.Store(0) }

// SetSourceCodes turns the source scan's use of the LVQ8 shadow on or off.
func SetSourceCodes(on bool) { noSourceCodes.Store(!on) }
