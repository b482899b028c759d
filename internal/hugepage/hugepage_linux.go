package hugepage

import (
	"syscall"
	"unsafe"
)

// advise asks for huge pages over s's whole huge pages (s starts on a
// Size boundary); an error (huge pages unsupported) leaves ordinary pages.
func advise(s []float32) {
	n := (4 * len(s)) &^ (Size - 1)
	if n == 0 {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), n)
	_ = syscall.Madvise(b, syscall.MADV_HUGEPAGE)
}
