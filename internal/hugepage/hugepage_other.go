//go:build !linux

package hugepage

// advise does nothing: there is no portable huge page hint.
func advise([]float32) {}
