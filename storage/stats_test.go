package storage_test

import (
	"io"
	"testing"

	"github.com/parqdb/parqdb/storage"
)

func TestWithStats(t *testing.T) {
	ctx := t.Context()
	local := newLocal(t)
	b, stats := storage.WithStats(local)
	if dir, ok := storage.IsLocal(b); !ok || dir != local.Dir() {
		t.Fatalf("IsLocal through WithStats = %q, %v", dir, ok)
	}
	if b.String() != local.String() {
		t.Errorf("String = %q", b.String())
	}
	steps := []struct {
		name          string
		do            func(t *testing.T)
		requests, got int64
	}{
		{"create and close", func(t *testing.T) {
			if err := storage.WriteAll(ctx, b, "k", []byte("0123456789")); err != nil {
				t.Fatal(err)
			}
		}, 1, 0},
		{"aborted create", func(t *testing.T) {
			w, err := b.Create(ctx, "aborted")
			if err != nil {
				t.Fatal(err)
			}
			_ = w.Abort()
		}, 0, 0},
		{"stat", func(t *testing.T) { _, _ = b.Stat(ctx, "k") }, 1, 0},
		{"list", func(t *testing.T) { _, _ = b.List(ctx, "") }, 1, 0},
		{"put", func(t *testing.T) { _ = b.PutIfAbsent(ctx, "p", []byte("x")) }, 1, 0},
		{"delete", func(t *testing.T) { _ = b.Delete(ctx, "p") }, 1, 0},
		{"reads", func(t *testing.T) {
			o, err := b.Open(ctx, "k")
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			p := make([]byte, 4)
			if n, err := o.ReadAt(p, 2); n != 4 || err != nil { // counted, 4 bytes
				t.Fatalf("ReadAt = %d, %v", n, err)
			}
			if n, err := o.ReadAt(p, 8); n != 2 || err != io.EOF { // counted, 2 bytes
				t.Fatalf("ReadAt = %d, %v", n, err)
			}
			_, _ = o.ReadAt(p, 10)    // at the end: no request
			_, _ = o.ReadAt(p[:0], 0) // empty: no request
		}, 3, 6}, // Open + 2 reads
		{"refused keys", func(t *testing.T) {
			_, _ = b.Open(ctx, "../x")
			_, _ = b.Stat(ctx, "/x")
			_ = b.PutIfAbsent(ctx, "a//b", nil)
			_, _ = b.List(ctx, "../")
		}, 0, 0},
	}
	for _, st := range steps {
		before := stats.Snapshot()
		st.do(t)
		after := stats.Snapshot()
		if d := after.Requests - before.Requests; d != st.requests {
			t.Errorf("%s: %d requests, want %d", st.name, d, st.requests)
		}
		if d := after.BytesRead - before.BytesRead; d != st.got {
			t.Errorf("%s: %d bytes read, want %d", st.name, d, st.got)
		}
	}
}
