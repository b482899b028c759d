package storage_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/parqdb/parqdb/storage"
)

// leftoverBucket is what gc uses of a bucket's unfinished writes.
type leftoverBucket interface {
	storage.Bucket
	ListLeftovers(ctx context.Context, prefix string) ([]storage.Leftover, error)
	RemoveLeftover(ctx context.Context, lo storage.Leftover) error
}

// TestLeftovers starts a write that is never closed nor aborted (a killed
// writer), on a local folder and on the S3 server (with more than one part,
// so a multipart upload is open), and checks that ListLeftovers finds it,
// that List never shows it, that finished writes are not leftovers and that
// RemoveLeftover removes it.
func TestLeftovers(t *testing.T) {
	for _, tc := range []struct {
		name string
		open func(t *testing.T) leftoverBucket
	}{
		{"local", func(t *testing.T) leftoverBucket { return newLocal(t) }},
		{"s3", func(t *testing.T) leftoverBucket { return newS3(t, "wh/") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			b := tc.open(t)
			if err := storage.WriteAll(ctx, b, "indexes/a/done.parquet", []byte("done")); err != nil {
				t.Fatal(err)
			}
			before := time.Now().Add(-time.Minute)
			w, err := b.Create(ctx, "indexes/a/killed.parquet")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write(bytes.Repeat([]byte{7}, storage.MinPartSize+1)); err != nil {
				t.Fatal(err)
			}
			// w is neither closed nor aborted: its writer was killed.
			los, err := b.ListLeftovers(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			if len(los) != 1 {
				t.Fatalf("ListLeftovers = %+v, want one", los)
			}
			lo := los[0]
			if lo.Started.Before(before) || lo.Started.After(time.Now().Add(time.Minute)) {
				t.Errorf("Started = %v, want about now", lo.Started)
			}
			if other, err := b.ListLeftovers(ctx, "metadata/"); err != nil || len(other) != 0 {
				t.Errorf("ListLeftovers(metadata/) = %v, %v; want none", other, err)
			}
			infos, err := b.List(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			if len(infos) != 1 || infos[0].Key != "indexes/a/done.parquet" {
				t.Fatalf("List = %+v, want only the finished object", infos)
			}
			if err := b.RemoveLeftover(ctx, storage.Leftover{Name: "indexes/a/done.parquet"}); !errors.Is(err, storage.ErrNotLeftover) {
				t.Fatalf("RemoveLeftover(a key) = %v, want ErrNotLeftover", err)
			}
			if err := b.RemoveLeftover(ctx, lo); err != nil {
				t.Fatal(err)
			}
			if los, err := b.ListLeftovers(ctx, ""); err != nil || len(los) != 0 {
				t.Fatalf("after RemoveLeftover: %+v, %v", los, err)
			}
			if data, err := storage.ReadAll(ctx, b, "indexes/a/done.parquet"); err != nil || string(data) != "done" {
				t.Fatalf("finished object after RemoveLeftover: %q, %v", data, err)
			}
			_ = w.Abort()
		})
	}
}
