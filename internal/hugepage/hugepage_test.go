package hugepage

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// TestFloat32s checks the contract at sizes around MinBytes: length and
// capacity n, zeroed, writable to the end, and from MinBytes on aligned to
// Size.
func TestFloat32s(t *testing.T) {
	for _, n := range []int{0, 1, 1000, MinBytes/4 - 1, MinBytes / 4, MinBytes/4 + 1, 3*Size/4 + 17} {
		s := Float32s(n)
		if len(s) != n || cap(s) != n {
			t.Fatalf("n=%d: len %d cap %d", n, len(s), cap(s))
		}
		for i, v := range s {
			if v != 0 {
				t.Fatalf("n=%d: value %d is %v", n, i, v)
			}
		}
		for i := range s {
			s[i] = float32(i)
		}
		if 4*n >= MinBytes {
			if p := uintptr(unsafe.Pointer(unsafe.SliceData(s))); p%Size != 0 {
				t.Fatalf("n=%d: starts at %#x, not on a %d boundary", n, p, Size)
			}
		}
	}
}

// TestFloat32sAdvised checks, on Linux with transparent huge pages in
// "madvise" or "always" mode, that the kernel counts the allocation's
// mapping as eligible for huge pages (/proc/self/smaps, THPeligible).
func TestFloat32sAdvised(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("huge page hints are Linux only")
	}
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || !strings.Contains(string(mode), "[madvise]") && !strings.Contains(string(mode), "[always]") {
		t.Skipf("transparent huge pages not in madvise or always mode (%q, %v)", mode, err)
	}
	s := Float32s(4 * Size / 4)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x", &lo, &hi); n == 2 && strings.Count(strings.Fields(line)[0], "-") == 1 {
			in = lo <= p && p < hi
			continue
		}
		if in && strings.HasPrefix(line, "THPeligible:") {
			if strings.TrimSpace(strings.TrimPrefix(line, "THPeligible:")) != "1" {
				t.Fatalf("mapping of %#x: %s", p, line)
			}
			runtime.KeepAlive(s)
			return
		}
	}
	t.Fatalf("mapping of %#x not found in /proc/self/smaps", p)
}
