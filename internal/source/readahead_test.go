package source

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// countingReaderAt counts the ReadAt calls on a byte slice and fails
// reads at or past failAt (when > 0).
type countingReaderAt struct {
	data   []byte
	calls  int
	failAt int64
}

var errRead = errors.New("read failed")

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	c.calls++
	if c.failAt > 0 && off+int64(len(p)) > c.failAt {
		return 0, errRead
	}
	return bytes.NewReader(c.data).ReadAt(p, off)
}

func TestReadAhead(t *testing.T) {
	data := make([]byte, 10_000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	type read struct {
		off, n int64
	}
	for _, tc := range []struct {
		name      string
		lo, hi    int64
		reads     []read // in order, each checked against data
		wantCalls int
		wantErr   error // of the last read
	}{
		{"forward in small reads", 100, 5100, []read{{100, 300}, {400, 700}, {1100, 1000}, {2100, 3000}}, 5, nil},
		{"one read across blocks", 0, 10_000, []read{{0, 4500}}, 5, nil},
		{"back within the block is served", 0, 10_000, []read{{0, 500}, {200, 300}}, 1, nil},
		{"behind the block fetches again", 0, 10_000, []read{{1500, 100}, {100, 100}}, 2, nil},
		{"past the range: EOF", 0, 3000, []read{{2500, 1000}}, 1, io.EOF},
		{"past the object: short block, then EOF", 9500, 20_000, []read{{9500, 1000}}, 1, io.EOF},
		{"a failed read", 0, 10_000, []read{{6500, 100}}, 1, errRead},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &countingReaderAt{data: data}
			if tc.wantErr == errRead {
				r.failAt = 6000
			}
			a := &readAhead{r: r, hi: tc.hi, off: tc.lo, block: 1000}
			var err error
			for i, rd := range tc.reads {
				p := make([]byte, rd.n)
				var n int
				n, err = a.ReadAt(p, rd.off)
				if i < len(tc.reads)-1 && err != nil {
					t.Fatalf("read %d: %v", i, err)
				}
				end := min(rd.off+int64(n), int64(len(data)))
				if !bytes.Equal(p[:n], data[rd.off:end]) {
					t.Fatalf("read %d at %d: wrong bytes", i, rd.off)
				}
				if err == nil && int64(n) != rd.n {
					t.Fatalf("read %d: %d bytes and no error, want %d", i, n, rd.n)
				}
			}
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("last read: %v, want %v", err, tc.wantErr)
			}
			if r.calls != tc.wantCalls {
				t.Fatalf("%d reads of the object, want %d", r.calls, tc.wantCalls)
			}
		})
	}
}
