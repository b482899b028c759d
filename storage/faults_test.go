package storage_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/parqdb/parqdb/storage"
)

func TestWithFaults(t *testing.T) {
	ctx := t.Context()
	custom := errors.New("disk on fire")
	tests := []struct {
		name   string
		faults *storage.Faults
		check  func(t *testing.T, b storage.Bucket)
	}{
		{"second write fails", &storage.Faults{FailWrite: 2}, func(t *testing.T, b storage.Bucket) {
			w, err := b.Create(ctx, "w")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write([]byte("one")); err != nil {
				t.Fatalf("first write: %v", err)
			}
			if _, err := w.Write([]byte("two")); !errors.Is(err, storage.ErrInjected) {
				t.Fatalf("second write = %v, want ErrInjected", err)
			}
			if _, err := w.Write([]byte("three")); !errors.Is(err, storage.ErrInjected) {
				t.Fatalf("write after the fault = %v, want ErrInjected", err)
			}
			if err := w.Close(); err == nil {
				t.Fatal("Close after a failed write succeeded")
			}
			wantAbsent(t, b, "w")
			// The next writer works.
			if err := storage.WriteAll(ctx, b, "w2", []byte("x")); err != nil {
				t.Fatal(err)
			}
		}},
		{"first close fails", &storage.Faults{FailClose: 1, Err: custom}, func(t *testing.T, b storage.Bucket) {
			err := storage.WriteAll(ctx, b, "c", []byte("data"))
			if !errors.Is(err, custom) || !strings.Contains(err.Error(), `"c"`) {
				t.Fatalf("Close = %v, want the custom error naming the key", err)
			}
			wantAbsent(t, b, "c")
			if err := storage.WriteAll(ctx, b, "c", []byte("data")); err != nil {
				t.Fatalf("second Close: %v", err)
			}
		}},
		{"put fails", &storage.Faults{FailPut: 1}, func(t *testing.T, b storage.Bucket) {
			if err := b.PutIfAbsent(ctx, "p", []byte("x")); !errors.Is(err, storage.ErrInjected) {
				t.Fatalf("PutIfAbsent = %v", err)
			}
			wantAbsent(t, b, "p")
			if err := b.PutIfAbsent(ctx, "p", []byte("x")); err != nil {
				t.Fatal(err)
			}
		}},
		{"open fails", &storage.Faults{FailOpen: 1}, func(t *testing.T, b storage.Bucket) {
			if err := storage.WriteAll(ctx, b, "o", []byte("x")); err != nil {
				t.Fatal(err)
			}
			if _, err := storage.ReadAll(ctx, b, "o"); !errors.Is(err, storage.ErrInjected) {
				t.Fatalf("first open = %v", err)
			}
			if _, err := storage.ReadAll(ctx, b, "o"); err != nil {
				t.Fatalf("second open: %v", err)
			}
		}},
		{"reads fail and fall short", &storage.Faults{FailRead: 1, ShortRead: 3}, func(t *testing.T, b storage.Bucket) {
			if err := storage.WriteAll(ctx, b, "r", []byte("0123456789")); err != nil {
				t.Fatal(err)
			}
			o, err := b.Open(ctx, "r")
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			p := make([]byte, 8)
			if n, err := o.ReadAt(p, 0); n != 0 || !errors.Is(err, storage.ErrInjected) {
				t.Fatalf("read 1 = %d, %v; want 0, ErrInjected", n, err)
			}
			if n, err := o.ReadAt(p, 0); n != 8 || err != nil {
				t.Fatalf("read 2 = %d, %v", n, err)
			}
			if n, err := o.ReadAt(p, 1); n != 4 || err != io.ErrUnexpectedEOF || string(p[:n]) != "1234" {
				t.Fatalf("read 3 = %d %q, %v; want 4 bytes and io.ErrUnexpectedEOF", n, p[:n], err)
			}
			if n, err := o.ReadAt(p, 1); n != 8 || err != nil {
				t.Fatalf("read 4 = %d, %v", n, err)
			}
		}},
		{"no faults", &storage.Faults{}, func(t *testing.T, b storage.Bucket) {
			for range 5 {
				if err := storage.WriteAll(ctx, b, "n", []byte("x")); err != nil {
					t.Fatal(err)
				}
				if _, err := storage.ReadAll(ctx, b, "n"); err != nil {
					t.Fatal(err)
				}
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			local := newLocal(t)
			b := storage.WithFaults(local, tc.faults)
			if dir, ok := storage.IsLocal(b); !ok || dir != local.Dir() {
				t.Fatalf("IsLocal through WithFaults = %q, %v", dir, ok)
			}
			tc.check(t, b)
		})
	}
}

func wantAbsent(t *testing.T, b storage.Bucket, key string) {
	t.Helper()
	if _, err := b.Stat(t.Context(), key); !errors.Is(err, storage.ErrNotExist) {
		t.Fatalf("Stat(%q) = %v, want ErrNotExist", key, err)
	}
	if infos, err := b.List(t.Context(), ""); err != nil {
		t.Fatal(err)
	} else {
		for _, in := range infos {
			if in.Key == key {
				t.Fatalf("List shows %q", key)
			}
		}
	}
}
