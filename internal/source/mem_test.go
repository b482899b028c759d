package source

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/parqdb/parqdb/storage"
)

// memBucket is an in-memory storage.Bucket for unit tests.
type memBucket struct {
	mu    sync.Mutex
	objs  map[string][]byte
	mtime map[string]time.Time
	opens int
	reads int64 // bytes read through ReadAt
	calls int   // ReadAt calls
}

func newMem() *memBucket {
	return &memBucket{objs: map[string][]byte{}, mtime: map[string]time.Time{}}
}

type memObj struct {
	b    *memBucket
	data []byte
}

func (o *memObj) ReadAt(p []byte, off int64) (int, error) {
	o.b.mu.Lock()
	o.b.reads += int64(len(p))
	o.b.calls++
	o.b.mu.Unlock()
	return bytes.NewReader(o.data).ReadAt(p, off)
}
func (o *memObj) Close() error { return nil }
func (o *memObj) Size() int64  { return int64(len(o.data)) }

func (b *memBucket) put(key string, data []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.objs[key] = data
	b.mtime[key] = time.Unix(1700000000, int64(len(b.mtime)))
}

func (b *memBucket) Open(ctx context.Context, key string) (storage.Object, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	d, ok := b.objs[key]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: key, Err: fs.ErrNotExist}
	}
	b.opens++
	return &memObj{b: b, data: d}, nil
}

func (b *memBucket) info(key string) storage.Info {
	d := b.objs[key]
	sum := md5.Sum(d)
	return storage.Info{Key: key, Size: int64(len(d)), ModTime: b.mtime[key], ETag: `"` + hex.EncodeToString(sum[:]) + `"`}
}

func (b *memBucket) Stat(ctx context.Context, key string) (storage.Info, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.objs[key]; !ok {
		return storage.Info{}, &fs.PathError{Op: "stat", Path: key, Err: fs.ErrNotExist}
	}
	return b.info(key), nil
}

func (b *memBucket) Create(ctx context.Context, key string) (storage.Writer, error) {
	return nil, fmt.Errorf("memBucket: Create not supported")
}

func (b *memBucket) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	return fmt.Errorf("memBucket: PutIfAbsent not supported")
}

func (b *memBucket) Delete(ctx context.Context, key string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.objs, key)
	return nil
}

func (b *memBucket) List(ctx context.Context, prefix string) ([]storage.Info, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []storage.Info
	for k := range b.objs {
		if strings.HasPrefix(k, prefix) {
			out = append(out, b.info(k))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

func (b *memBucket) String() string { return "mem://test" }
