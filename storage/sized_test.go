package storage_test

import (
	"context"
	"errors"
	"testing"

	"github.com/parqdb/parqdb/storage"
)

// TestOpenSizedLocal checks the lazy fallback: OpenSized sends nothing,
// the first read opens the object, and a missing object or one of another
// size is reported by that read.
func TestOpenSizedLocal(t *testing.T) {
	ctx := context.Background()
	b, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := storage.WriteAll(ctx, b, "a/x.bin", []byte("hello world")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		key  string
		size int64
		want error // nil: the read succeeds
	}{
		{"right size", "a/x.bin", 11, nil},
		{"other size", "a/x.bin", 12, storage.ErrChanged},
		{"missing", "a/y.bin", 11, storage.ErrNotExist},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cb, stats := storage.WithStats(b)
			o, err := storage.OpenSized(ctx, cb, c.key, c.size)
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			if n := stats.Snapshot().Requests; n != 0 {
				t.Fatalf("OpenSized sent %d requests, want 0", n)
			}
			if o.Size() != c.size {
				t.Fatalf("Size() = %d, want %d", o.Size(), c.size)
			}
			buf := make([]byte, 5)
			_, err = o.ReadAt(buf, 6)
			if c.want == nil {
				if err != nil || string(buf) != "world" {
					t.Fatalf("read %q, %v; want \"world\"", buf, err)
				}
			} else if !errors.Is(err, c.want) {
				t.Fatalf("read error %v, want %v", err, c.want)
			}
			if n := stats.Snapshot().Requests; n != 1 {
				t.Fatalf("%d requests after one read, want 1", n)
			}
		})
	}
	if _, err := storage.OpenSized(ctx, b, "../escape", 1); err == nil {
		t.Fatal("OpenSized accepted a key outside the bucket")
	}
}
