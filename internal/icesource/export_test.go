package icesource

import "github.com/RoaringBitmap/roaring/v2"

// ResetDeleteCache empties the process-wide cache of resolved deletes, so
// that a benchmark measures an uncached open.
func ResetDeleteCache() {
	deleteCache.Lock()
	defer deleteCache.Unlock()
	deleteCache.m, deleteCache.order = map[string]map[string]*roaring.Bitmap{}, nil
}
