//go:build purego || !amd64

package filter

// cmpInt32Fast has no vector kernel on this platform: it does nothing.
func cmpInt32Fast(dst bitset, xs []int32, lit, bias int32, eq bool) int { return 0 }

const useAVX2 = false
