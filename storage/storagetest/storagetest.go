// Package storagetest is the acceptance suite for storage.Bucket
// implementations: every backend (local folder, S3) runs Run against a
// fresh bucket per subtest, so that they all keep the same contract.
package storagetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/parqdb/parqdb/location"
	"github.com/parqdb/parqdb/storage"
)

// BadKeys are keys every Bucket method must refuse, before any I/O, with an
// error wrapping location.ErrInvalid: each tries to escape the warehouse or
// is otherwise not a warehouse-relative object key.
var BadKeys = []string{
	"",                                     // empty
	"/etc/passwd",                          // absolute
	"/",                                    // the root
	"//host/share/x",                       // network path
	"..",                                   // parent
	"../x",                                 // parent prefix
	"a/../../x",                            // parent in the middle
	"a/..",                                 // parent at the end
	".",                                    // current folder
	"./a",                                  // current folder prefix
	"a/./b",                                // current folder in the middle
	"a//b",                                 // empty segment
	"a\\b",                                 // backslash
	"..\\x",                                // Windows parent
	"C:\\x",                                // Windows drive
	"C:/x",                                 // Windows drive, forward slash
	"c:x",                                  // drive-relative
	"\\\\host\\share\\x",                   // UNC path
	"s3://bucket/x",                        // scheme
	"file:///etc/passwd",                   // file URL
	"file:x",                               // opaque file URL
	"http://host/x",                        // web URL
	"a\x00b",                               // NUL
	"a\nb",                                 // control character
	"a\x7fb",                               // DEL
	"a\u0085b",                             // C1 control character (NEL)
	"\xff\xfe",                             // invalid UTF-8
	"folder/",                              // a folder, not an object
	strings.Repeat("k", location.MaxLen+1), // too long
}

// BadPrefixes are List prefixes every Bucket must refuse with an error
// wrapping location.ErrInvalid. The empty prefix (the whole bucket) and
// prefixes ending inside a segment or at a '/' are valid.
var BadPrefixes = []string{"/", "/a", "../", "a/../", "./", "a//", "a\\b", "s3://x/", "C:\\", "a\x00"}

// Run runs the acceptance suite. newBucket must return a new, empty bucket
// each time it is called; Run calls it once per subtest.
func Run(t *testing.T, newBucket func(t *testing.T) storage.Bucket) {
	tests := []struct {
		name string
		fn   func(t *testing.T, b storage.Bucket)
	}{
		{"InvalidKeys", testInvalidKeys},
		{"InvalidPrefixes", testInvalidPrefixes},
		{"NotFound", testNotFound},
		{"WriteRead", testWriteRead},
		{"EmptyObject", testEmptyObject},
		{"RangedReads", testRangedReads},
		{"ConcurrentReads", testConcurrentReads},
		{"NotVisibleBeforeClose", testNotVisibleBeforeClose},
		{"CreateAbort", testCreateAbort},
		{"LargeObject", testLargeObject},
		{"WriterAfterClose", testWriterAfterClose},
		{"Replace", testReplace},
		{"PutIfAbsent", testPutIfAbsent},
		{"PutIfAbsentRace", testPutIfAbsentRace},
		{"Delete", testDelete},
		{"List", testList},
		{"Stat", testStat},
		{"UnusualKeys", testUnusualKeys},
		{"CancelledContext", testCancelledContext},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, newBucket(t))
		})
	}
}

// pattern returns n reproducible pseudo-random bytes.
func pattern(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(r.Uint32())
	}
	return p
}

func write(t *testing.T, b storage.Bucket, key string, data []byte) {
	t.Helper()
	if err := storage.WriteAll(t.Context(), b, key, data); err != nil {
		t.Fatalf("WriteAll(%q): %v", key, err)
	}
}

func read(t *testing.T, b storage.Bucket, key string) []byte {
	t.Helper()
	data, err := storage.ReadAll(t.Context(), b, key)
	if err != nil {
		t.Fatalf("ReadAll(%q): %v", key, err)
	}
	return data
}

func keys(t *testing.T, b storage.Bucket, prefix string) []string {
	t.Helper()
	infos, err := b.List(t.Context(), prefix)
	if err != nil {
		t.Fatalf("List(%q): %v", prefix, err)
	}
	ks := []string{}
	for _, in := range infos {
		ks = append(ks, in.Key)
	}
	return ks
}

func wantNotExist(t *testing.T, what string, err error, key string) {
	t.Helper()
	if !errors.Is(err, storage.ErrNotExist) {
		t.Fatalf("%s: got %v, want an error wrapping storage.ErrNotExist", what, err)
	}
	if !strings.Contains(err.Error(), key) {
		t.Errorf("%s: error %q does not name the key %q", what, err, key)
	}
}

func wantInvalid(t *testing.T, what string, err error, key string) {
	t.Helper()
	if !errors.Is(err, location.ErrInvalid) {
		t.Errorf("%s: got %v, want an error wrapping location.ErrInvalid", what, err)
		return
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("%q", key)) {
		t.Errorf("%s: error %q does not name the key", what, err)
	}
}

func testInvalidKeys(t *testing.T, b storage.Bucket) {
	ctx := t.Context()
	for _, key := range BadKeys {
		t.Run(fmt.Sprintf("%q", key), func(t *testing.T) {
			_, err := b.Open(ctx, key)
			wantInvalid(t, "Open", err, key)
			_, err = b.Stat(ctx, key)
			wantInvalid(t, "Stat", err, key)
			w, err := b.Create(ctx, key)
			if w != nil {
				_ = w.Abort()
			}
			wantInvalid(t, "Create", err, key)
			wantInvalid(t, "PutIfAbsent", b.PutIfAbsent(ctx, key, []byte("x")), key)
			wantInvalid(t, "Delete", b.Delete(ctx, key), key)
		})
	}
	if ks := keys(t, b, ""); len(ks) != 0 {
		t.Errorf("after refused writes the bucket holds %q", ks)
	}
}

func testInvalidPrefixes(t *testing.T, b storage.Bucket) {
	for _, p := range BadPrefixes {
		_, err := b.List(t.Context(), p)
		wantInvalid(t, fmt.Sprintf("List(%q)", p), err, p)
	}
}

func testNotFound(t *testing.T, b storage.Bucket) {
	ctx := t.Context()
	const key = "missing/object.bin"
	_, err := b.Open(ctx, key)
	wantNotExist(t, "Open", err, key)
	_, err = b.Stat(ctx, key)
	wantNotExist(t, "Stat", err, key)
	_, err = storage.ReadAll(ctx, b, key)
	wantNotExist(t, "ReadAll", err, key)

	// A "folder" holding objects is not an object.
	write(t, b, "dir/obj.bin", []byte("x"))
	_, err = b.Open(ctx, "dir")
	wantNotExist(t, "Open(folder)", err, "dir")
	_, err = b.Stat(ctx, "dir")
	wantNotExist(t, "Stat(folder)", err, "dir")
	// Below an object is nothing.
	_, err = b.Open(ctx, "dir/obj.bin/x")
	wantNotExist(t, "Open(below an object)", err, "dir/obj.bin/x")
}

func testWriteRead(t *testing.T, b storage.Bucket) {
	ctx := t.Context()
	data := pattern(1, 100_003)
	w, err := b.Create(ctx, "t/obj.bin")
	if err != nil {
		t.Fatal(err)
	}
	for rest := data; len(rest) > 0; {
		k := min(len(rest), 7_919)
		n, err := w.Write(rest[:k])
		if err != nil || n != k {
			t.Fatalf("Write: %d, %v; want %d, nil", n, err, k)
		}
		rest = rest[k:]
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	o, err := b.Open(ctx, "t/obj.bin")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if o.Size() != int64(len(data)) {
		t.Fatalf("Size = %d, want %d", o.Size(), len(data))
	}
	got := make([]byte, len(data))
	if n, err := o.ReadAt(got, 0); n != len(data) || (err != nil && err != io.EOF) {
		t.Fatalf("ReadAt(all) = %d, %v", n, err)
	}
	if !bytes.Equal(got, data) {
		t.Fatal("read bytes differ from written bytes")
	}
}

func testEmptyObject(t *testing.T, b storage.Bucket) {
	ctx := t.Context()
	write(t, b, "empty", nil)
	info, err := b.Stat(ctx, "empty")
	if err != nil || info.Size != 0 {
		t.Fatalf("Stat = %+v, %v; want size 0", info, err)
	}
	o, err := b.Open(ctx, "empty")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if o.Size() != 0 {
		t.Fatalf("Size = %d", o.Size())
	}
	if n, err := o.ReadAt(make([]byte, 4), 0); n != 0 || err != io.EOF {
		t.Fatalf("ReadAt = %d, %v; want 0, io.EOF", n, err)
	}
	if got := read(t, b, "empty"); len(got) != 0 {
		t.Fatalf("ReadAll = %d bytes", len(got))
	}
}

func testRangedReads(t *testing.T, b storage.Bucket) {
	const size = 1000
	data := pattern(2, size)
	write(t, b, "ranged.bin", data)
	o, err := b.Open(t.Context(), "ranged.bin")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	tests := []struct {
		name    string
		off     int64
		len     int
		wantN   int
		wantEOF bool // io.EOF required; otherwise nil (or io.EOF when the read ends at the end)
	}{
		{"first byte", 0, 1, 1, false},
		{"head", 0, 100, 100, false},
		{"middle", 123, 456, 456, false},
		{"last byte", size - 1, 1, 1, false},
		{"whole", 0, size, size, false},
		{"tail exactly", size - 10, 10, 10, false},
		{"across the end", size - 5, 10, 5, true},
		{"longer than the object", 0, size + 1, size, true},
		{"at the end", size, 1, 0, true},
		{"past the end", size + 100, 8, 0, true},
		{"empty buffer", 10, 0, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := make([]byte, tc.len)
			n, err := o.ReadAt(p, tc.off)
			if n != tc.wantN {
				t.Fatalf("ReadAt(len %d, off %d) n = %d, want %d (err %v)", tc.len, tc.off, n, tc.wantN, err)
			}
			endsAtEnd := tc.off+int64(tc.len) == size
			switch {
			case tc.wantEOF && err != io.EOF:
				t.Fatalf("err = %v, want io.EOF", err)
			case !tc.wantEOF && err != nil && !(err == io.EOF && endsAtEnd):
				t.Fatalf("err = %v, want nil", err)
			}
			if n > 0 && !bytes.Equal(p[:n], data[tc.off:tc.off+int64(n)]) {
				t.Fatal("wrong bytes")
			}
		})
	}
	t.Run("negative offset", func(t *testing.T) {
		n, err := o.ReadAt(make([]byte, 4), -1)
		if n != 0 || err == nil || err == io.EOF {
			t.Fatalf("ReadAt(off -1) = %d, %v; want 0 and an error other than io.EOF", n, err)
		}
	})
}

func testConcurrentReads(t *testing.T, b storage.Bucket) {
	const size = 64 << 10
	data := pattern(3, size)
	write(t, b, "concurrent.bin", data)
	o, err := b.Open(t.Context(), "concurrent.bin")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for g := range errs {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for range 20 {
				off := r.IntN(size)
				p := make([]byte, 1+r.IntN(4096))
				n, err := o.ReadAt(p, int64(off))
				if err != nil && err != io.EOF {
					errs[g] = err
					return
				}
				if !bytes.Equal(p[:n], data[off:off+n]) || (n < len(p) && off+n != size) {
					errs[g] = fmt.Errorf("ReadAt(len %d, off %d): wrong bytes or short read (%d)", len(p), off, n)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

func testNotVisibleBeforeClose(t *testing.T, b storage.Bucket) {
	ctx := t.Context()
	w, err := b.Create(ctx, "pending/obj.bin")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if _, err := w.Write(pattern(4, 10_000)); err != nil {
		t.Fatal(err)
	}
	_, err = b.Stat(ctx, "pending/obj.bin")
	wantNotExist(t, "Stat before Close", err, "pending/obj.bin")
	if ks := keys(t, b, ""); len(ks) != 0 {
		t.Fatalf("before Close the bucket lists %q", ks)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if ks := keys(t, b, ""); !slices.Equal(ks, []string{"pending/obj.bin"}) {
		t.Fatalf("after Close the bucket lists %q", ks)
	}
}

func testCreateAbort(t *testing.T, b storage.Bucket) {
	ctx := t.Context()
	w, err := b.Create(ctx, "aborted/obj.bin")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(pattern(5, 50_000)); err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(); err != nil {
		t.Fatalf("Abort: %v", err)
	}
	_, err = b.Stat(ctx, "aborted/obj.bin")
	wantNotExist(t, "Stat after Abort", err, "aborted/obj.bin")
	if ks := keys(t, b, ""); len(ks) != 0 {
		t.Fatalf("after Abort the bucket lists %q", ks)
	}
	if _, err := w.Write([]byte("x")); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("Write after Abort = %v, want ErrClosed", err)
	}
	if err := w.Close(); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("Close after Abort = %v, want ErrClosed", err)
	}
	// Aborting a replacement keeps the old object.
	write(t, b, "kept.bin", []byte("old"))
	w, err = b.Create(ctx, "kept.bin")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("new")); err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if got := read(t, b, "kept.bin"); string(got) != "old" {
		t.Fatalf("after an aborted replacement the object holds %q", got)
	}
}

// largeSize is above storage.MinPartSize twice over, so that an S3 bucket
// with the minimum part size writes it in three parts.
const largeSize = 2*storage.MinPartSize + 12345

func testLargeObject(t *testing.T, b storage.Bucket) {
	ctx := t.Context()
	data := pattern(6, largeSize)
	writeChunks := func(key string) storage.Writer {
		w, err := b.Create(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		for rest := data; len(rest) > 0; {
			k := min(len(rest), 1<<20+1)
			if _, err := w.Write(rest[:k]); err != nil {
				t.Fatal(err)
			}
			rest = rest[k:]
		}
		return w
	}
	w := writeChunks("large/aborted.bin")
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if ks := keys(t, b, ""); len(ks) != 0 {
		t.Fatalf("after Abort the bucket lists %q", ks)
	}
	w = writeChunks("large/obj.bin")
	if _, err := b.Stat(ctx, "large/obj.bin"); !errors.Is(err, storage.ErrNotExist) {
		t.Fatalf("Stat before Close = %v, want ErrNotExist", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := read(t, b, "large/obj.bin"); !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes, differing from the %d written", len(got), len(data))
	}
}

func testWriterAfterClose(t *testing.T, b storage.Bucket) {
	ctx := t.Context()
	w, err := b.Create(ctx, "closed.bin")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("data")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("more")); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("Write after Close = %v, want ErrClosed", err)
	}
	if err := w.Close(); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("second Close = %v, want ErrClosed", err)
	}
	if err := w.Abort(); err != nil {
		t.Errorf("Abort after Close = %v, want nil", err)
	}
	if got := read(t, b, "closed.bin"); string(got) != "data" {
		t.Fatalf("object holds %q, want %q", got, "data")
	}
}

func testReplace(t *testing.T, b storage.Bucket) {
	write(t, b, "replaced.bin", []byte("first version"))
	write(t, b, "replaced.bin", []byte("second"))
	if got := read(t, b, "replaced.bin"); string(got) != "second" {
		t.Fatalf("got %q", got)
	}
	if ks := keys(t, b, ""); !slices.Equal(ks, []string{"replaced.bin"}) {
		t.Fatalf("bucket lists %q", ks)
	}
}

func testPutIfAbsent(t *testing.T, b storage.Bucket) {
	ctx := t.Context()
	const key = "commit/v1.json"
	if err := b.PutIfAbsent(ctx, key, []byte("one")); err != nil {
		t.Fatalf("first PutIfAbsent: %v", err)
	}
	err := b.PutIfAbsent(ctx, key, []byte("two"))
	if !errors.Is(err, storage.ErrExist) {
		t.Fatalf("second PutIfAbsent = %v, want ErrExist", err)
	}
	if !strings.Contains(err.Error(), key) {
		t.Errorf("error %q does not name the key", err)
	}
	if got := read(t, b, key); string(got) != "one" {
		t.Fatalf("object holds %q after a lost PutIfAbsent", got)
	}
	// An object written by Create counts as present.
	write(t, b, "commit/v2.json", []byte("created"))
	if err := b.PutIfAbsent(ctx, "commit/v2.json", []byte("x")); !errors.Is(err, storage.ErrExist) {
		t.Fatalf("PutIfAbsent over a created object = %v, want ErrExist", err)
	}
	// After Delete the key is free again.
	if err := b.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	if err := b.PutIfAbsent(ctx, key, []byte("three")); err != nil {
		t.Fatalf("PutIfAbsent after Delete: %v", err)
	}
	if got := read(t, b, key); string(got) != "three" {
		t.Fatalf("object holds %q", got)
	}
	// Empty data is an object too.
	if err := b.PutIfAbsent(ctx, "commit/empty", nil); err != nil {
		t.Fatal(err)
	}
	if err := b.PutIfAbsent(ctx, "commit/empty", nil); !errors.Is(err, storage.ErrExist) {
		t.Fatalf("second empty PutIfAbsent = %v, want ErrExist", err)
	}
	if ks := keys(t, b, ""); !slices.Equal(ks, []string{"commit/empty", "commit/v1.json", "commit/v2.json"}) {
		t.Fatalf("bucket lists %q", ks)
	}
}

// Writers is the number of goroutines racing in PutIfAbsentRace.
const Writers = 16

func testPutIfAbsentRace(t *testing.T, b storage.Bucket) {
	ctx := t.Context()
	for round := range 4 {
		key := fmt.Sprintf("race/%d.json", round)
		start := make(chan struct{})
		errs := make([]error, Writers)
		var wg sync.WaitGroup
		for i := range Writers {
			wg.Go(func() {
				<-start
				errs[i] = b.PutIfAbsent(ctx, key, raceData(round, i))
			})
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil:
				if winner >= 0 {
					t.Fatalf("round %d: writers %d and %d both won", round, winner, i)
				}
				winner = i
			case !errors.Is(err, storage.ErrExist):
				t.Fatalf("round %d: writer %d: %v, want nil or ErrExist", round, i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no writer won", round)
		}
		if got := read(t, b, key); !bytes.Equal(got, raceData(round, winner)) {
			t.Fatalf("round %d: object is not the winner's (%d) data", round, winner)
		}
	}
}

func raceData(round, writer int) []byte {
	return append([]byte(fmt.Sprintf(`{"round":%d,"writer":%d}`, round, writer)), pattern(uint64(round*100+writer), 4096)...)
}

func testDelete(t *testing.T, b storage.Bucket) {
	ctx := t.Context()
	write(t, b, "del/a.bin", []byte("a"))
	write(t, b, "del/b.bin", []byte("b"))
	if err := b.Delete(ctx, "del/a.bin"); err != nil {
		t.Fatal(err)
	}
	_, err := b.Stat(ctx, "del/a.bin")
	wantNotExist(t, "Stat after Delete", err, "del/a.bin")
	if err := b.Delete(ctx, "del/a.bin"); err != nil {
		t.Fatalf("deleting a deleted object: %v", err)
	}
	if err := b.Delete(ctx, "never/existed.bin"); err != nil {
		t.Fatalf("deleting a missing object: %v", err)
	}
	// Deleting a "folder" removes no object below it.
	if err := b.Delete(ctx, "del"); err != nil {
		t.Fatalf("deleting a folder name: %v", err)
	}
	if ks := keys(t, b, ""); !slices.Equal(ks, []string{"del/b.bin"}) {
		t.Fatalf("bucket lists %q, want only del/b.bin", ks)
	}
}

func testList(t *testing.T, b storage.Bucket) {
	ctx := t.Context()
	all := []string{
		"data/a-1.bin", "data/a.bin", "data/a/b.bin", "data/a/c/d.bin", "data/b.bin",
		"data2/x.bin", "meta/v1.json", "top.bin", "z/ü %2e%2e.bin",
	}
	// Write in reverse order so that creation order is not key order; the
	// object at all[i] has i+1 bytes.
	for i, k := range slices.Backward(all) {
		write(t, b, k, pattern(uint64(i), i+1))
	}
	tests := []struct {
		prefix string
		want   []string
	}{
		{"", all},
		{"data/", all[:5]},
		{"data", all[:6]},
		{"data/a", all[:4]},
		{"data/a/", all[2:4]},
		{"data/a/c/d.bin", all[3:4]},
		{"top", []string{"top.bin"}},
		{"z/ü", []string{"z/ü %2e%2e.bin"}},
		{"nothing/", nil},
		{"data/a/c/d.bin/", nil},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%q", tc.prefix), func(t *testing.T) {
			infos, err := b.List(ctx, tc.prefix)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, in := range infos {
				got = append(got, in.Key)
				i := slices.Index(all, in.Key)
				if want := int64(i + 1); i < 0 || in.Size != want {
					t.Errorf("%s: size %d, want %d", in.Key, in.Size, want)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("List(%q) = %q, want %q", tc.prefix, got, tc.want)
			}
		})
	}
}

func testStat(t *testing.T, b storage.Bucket) {
	ctx := t.Context()
	write(t, b, "stat/obj.bin", pattern(7, 321))
	info, err := b.Stat(ctx, "stat/obj.bin")
	if err != nil {
		t.Fatal(err)
	}
	if info.Key != "stat/obj.bin" || info.Size != 321 || info.ModTime.IsZero() || info.ETag == "" {
		t.Fatalf("Stat = %+v", info)
	}
	listed, err := b.List(ctx, "stat/")
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) != 1 || listed[0].Size != info.Size || listed[0].ETag != info.ETag {
		t.Fatalf("List = %+v, Stat = %+v: want the same object", listed, info)
	}
	write(t, b, "stat/obj.bin", pattern(8, 654))
	again, err := b.Stat(ctx, "stat/obj.bin")
	if err != nil {
		t.Fatal(err)
	}
	if again.Size != 654 || again.ETag == info.ETag {
		t.Fatalf("after replacing: Stat = %+v, before %+v; want new size and ETag", again, info)
	}
}

// UnusualKeys are valid keys with characters that need care in paths and
// URLs. Percent signs are literal: no layer decodes them.
var UnusualKeys = []string{
	"with space/file name.bin",
	"ü/日本語.bin",
	"emoji/🙂.bin",
	"pct/%2e%2e",
	"pct/%2F%00",
	"dots/..../x",
	"dots/.hidden",
	"dots/...",
	"punct/a+b=c&d?e#f;g,h@i!j'k(l)~m$n.bin",
	"tilde/~",
}

func testUnusualKeys(t *testing.T, b storage.Bucket) {
	ctx := t.Context()
	for i, key := range UnusualKeys {
		t.Run(fmt.Sprintf("%q", key), func(t *testing.T) {
			if err := location.Check(key); err != nil {
				t.Fatalf("test key is invalid: %v", err)
			}
			data := pattern(uint64(i), 10+i)
			if err := b.PutIfAbsent(ctx, key, data); err != nil {
				t.Fatal(err)
			}
			if got := read(t, b, key); !bytes.Equal(got, data) {
				t.Fatal("read back different bytes")
			}
			if ks := keys(t, b, key); !slices.Equal(ks, []string{key}) {
				t.Fatalf("List(%q) = %q", key, ks)
			}
			if err := b.Delete(ctx, key); err != nil {
				t.Fatal(err)
			}
			if _, err := b.Stat(ctx, key); !errors.Is(err, storage.ErrNotExist) {
				t.Fatalf("Stat after Delete = %v", err)
			}
		})
	}
}

func testCancelledContext(t *testing.T, b storage.Bucket) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context = %v, want context.Canceled", what, err)
		}
	}
	_, err := b.Open(ctx, "x")
	check("Open", err)
	_, err = b.Stat(ctx, "x")
	check("Stat", err)
	check("PutIfAbsent", b.PutIfAbsent(ctx, "x", []byte("x")))
	_, err = b.List(ctx, "")
	check("List", err)
	if ks := keys(t, b, ""); len(ks) != 0 {
		t.Fatalf("bucket lists %q", ks)
	}
}
