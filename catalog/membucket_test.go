package catalog_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/parqdb/parqdb/location"
	"github.com/parqdb/parqdb/storage"
)

// memBucket is an in-memory storage.Bucket for tests of the protocol
// itself. With lag > 0 its List leaves out the lag most recently written
// objects, like an object store whose listings trail its writes, except
// the first version of a warehouse catalog entry: a store whose listing
// misses new names makes List miss them (documented), while Load, Create,
// Commit and Drop must stay exact whatever the listing misses.
type memBucket struct {
	mu    sync.Mutex
	objs  map[string][]byte
	order []string // keys in write order
	lag   int
}

func newMemBucket(lag int) *memBucket { return &memBucket{objs: map[string][]byte{}, lag: lag} }

func (b *memBucket) String() string { return fmt.Sprintf("mem(lag %d)", b.lag) }

type memObject struct{ *bytes.Reader }

func (memObject) Close() error { return nil }

func (b *memBucket) get(key string) ([]byte, error) {
	if err := location.Check(key); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	d, ok := b.objs[key]
	if !ok {
		return nil, fmt.Errorf("mem %s: %w", key, storage.ErrNotExist)
	}
	return d, nil
}

func (b *memBucket) Open(ctx context.Context, key string) (storage.Object, error) {
	d, err := b.get(key)
	if err != nil {
		return nil, err
	}
	return memObject{bytes.NewReader(d)}, nil
}

func (b *memBucket) Stat(ctx context.Context, key string) (storage.Info, error) {
	d, err := b.get(key)
	if err != nil {
		return storage.Info{}, err
	}
	return storage.Info{Key: key, Size: int64(len(d)), ModTime: time.Now()}, nil
}

type memWriter struct {
	b   *memBucket
	key string
	buf bytes.Buffer
}

func (w *memWriter) Write(p []byte) (int, error) { return w.buf.Write(p) }
func (w *memWriter) Abort() error                { return nil }
func (w *memWriter) Close() error {
	w.b.mu.Lock()
	defer w.b.mu.Unlock()
	w.b.store(w.key, w.buf.Bytes())
	return nil
}

func (b *memBucket) store(key string, d []byte) {
	if _, ok := b.objs[key]; !ok {
		b.order = append(b.order, key)
	}
	b.objs[key] = slices.Clone(d)
}

func (b *memBucket) Create(ctx context.Context, key string) (storage.Writer, error) {
	if err := location.Check(key); err != nil {
		return nil, err
	}
	return &memWriter{b: b, key: key}, nil
}

func (b *memBucket) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	if err := location.Check(key); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.objs[key]; ok {
		return fmt.Errorf("mem %s: %w", key, storage.ErrExist)
	}
	b.store(key, data)
	return nil
}

func (b *memBucket) Delete(ctx context.Context, key string) error {
	if err := location.Check(key); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.objs, key)
	b.order = slices.DeleteFunc(b.order, func(k string) bool { return k == key })
	return nil
}

func (b *memBucket) List(ctx context.Context, prefix string) ([]storage.Info, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	hidden := map[string]bool{}
	for i := len(b.order) - 1; i >= 0 && len(hidden) < b.lag; i-- {
		if !strings.HasSuffix(b.order[i], "/v00000000000000000001.json") {
			hidden[b.order[i]] = true
		}
	}
	var out []storage.Info
	for _, k := range b.order {
		if strings.HasPrefix(k, prefix) && !hidden[k] {
			out = append(out, storage.Info{Key: k, Size: int64(len(b.objs[k]))})
		}
	}
	slices.SortFunc(out, func(a, b storage.Info) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// keys returns every stored key with the prefix, sorted.
func (b *memBucket) keys(prefix string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for k := range b.objs {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

var _ io.ReaderAt = memObject{}
