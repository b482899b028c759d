package icesource

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	icebergio "github.com/apache/iceberg-go/io"

	"github.com/parqdb/parqdb/storage"
)

// The "s3" scheme of iceberg-go's FileIO registry is served by ParqDB's own
// S3 client (storage.NewS3, configured by the standard AWS environment), so
// that Iceberg metadata, manifests and data files on S3-compatible storage
// are read the way ParqDB reads every other object, without linking the
// gocloud.dev SDK stack that iceberg-go's own s3 module brings.
//
// Spark and Hadoop write s3a:// and s3n:// paths for the same objects: they
// are served the same way.
func init() {
	for _, scheme := range s3Schemes {
		if !slices.Contains(icebergio.GetRegisteredSchemes(), scheme) {
			icebergio.Register(scheme, func(ctx context.Context, u *url.URL, _ map[string]string) (icebergio.IO, error) {
				return &bucketIO{buckets: map[string]storage.Bucket{}}, nil
			})
		}
	}
}

// s3Schemes are the URL schemes of S3 objects in Iceberg metadata.
var s3Schemes = []string{"s3", "s3a", "s3n"}

// s3URL rewrites an s3a:// or s3n:// URL to s3://; other strings are
// returned unchanged.
func s3URL(s string) string {
	for _, scheme := range s3Schemes[1:] {
		if rest, ok := strings.CutPrefix(s, scheme+"://"); ok {
			return "s3://" + rest
		}
	}
	return s
}

// bucketIO implements iceberg-go's IO and WriteFileIO over storage buckets,
// one per S3 bucket named in a path. It is safe for concurrent use.
type bucketIO struct {
	mu      sync.Mutex
	buckets map[string]storage.Bucket
}

func (b *bucketIO) resolve(op, name string) (storage.Bucket, string, error) {
	u, err := url.Parse(s3URL(name))
	if err != nil || u.Scheme != "s3" || u.Host == "" {
		return nil, "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	key := strings.TrimPrefix(u.Path, "/")
	b.mu.Lock()
	defer b.mu.Unlock()
	bk, ok := b.buckets[u.Host]
	if !ok {
		bk, err = storage.Open(context.Background(), "s3://"+u.Host)
		if err != nil {
			return nil, "", &fs.PathError{Op: op, Path: name, Err: err}
		}
		b.buckets[u.Host] = bk
	}
	return bk, key, nil
}

func (b *bucketIO) Open(name string) (icebergio.File, error) {
	bk, key, err := b.resolve("open", name)
	if err != nil {
		return nil, err
	}
	o, err := bk.Open(context.Background(), key)
	if err != nil {
		if errors.Is(err, storage.ErrNotExist) {
			err = errors.Join(fs.ErrNotExist, err)
		}
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return &objectFile{SectionReader: io.NewSectionReader(o, 0, o.Size()), obj: o, name: key}, nil
}

func (b *bucketIO) Remove(name string) error {
	bk, key, err := b.resolve("remove", name)
	if err != nil {
		return err
	}
	if err := bk.Delete(context.Background(), key); err != nil {
		return &fs.PathError{Op: "remove", Path: name, Err: err}
	}
	return nil
}

func (b *bucketIO) ReadFile(name string) ([]byte, error) {
	bk, key, err := b.resolve("read", name)
	if err != nil {
		return nil, err
	}
	data, err := storage.ReadAll(context.Background(), bk, key)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	return data, nil
}

func (b *bucketIO) Create(name string) (icebergio.FileWriter, error) {
	bk, key, err := b.resolve("create", name)
	if err != nil {
		return nil, err
	}
	w, err := bk.Create(context.Background(), key)
	if err != nil {
		return nil, &fs.PathError{Op: "create", Path: name, Err: err}
	}
	return &objectWriter{w: w}, nil
}

func (b *bucketIO) WriteFile(name string, p []byte) error {
	bk, key, err := b.resolve("write", name)
	if err != nil {
		return err
	}
	if err := storage.WriteAll(context.Background(), bk, key, p); err != nil {
		return &fs.PathError{Op: "write", Path: name, Err: err}
	}
	return nil
}

// objectFile is an opened object as an fs.File with Seek and ReadAt.
type objectFile struct {
	*io.SectionReader
	obj  storage.Object
	name string
}

func (f *objectFile) Close() error               { return f.obj.Close() }
func (f *objectFile) Stat() (fs.FileInfo, error) { return objectInfo{f.name, f.obj.Size()}, nil }

type objectInfo struct {
	name string
	size int64
}

func (i objectInfo) Name() string       { return i.name[strings.LastIndexByte(i.name, '/')+1:] }
func (i objectInfo) Size() int64        { return i.size }
func (i objectInfo) Mode() fs.FileMode  { return 0o444 }
func (i objectInfo) ModTime() time.Time { return time.Time{} }
func (i objectInfo) IsDir() bool        { return false }
func (i objectInfo) Sys() any           { return nil }

// objectWriter is a storage.Writer as an iceberg-go FileWriter: the object
// becomes visible at Close.
type objectWriter struct{ w storage.Writer }

func (w *objectWriter) Write(p []byte) (int, error) { return w.w.Write(p) }
func (w *objectWriter) Close() error                { return w.w.Close() }
func (w *objectWriter) ReadFrom(r io.Reader) (int64, error) {
	n, err := io.Copy(w.w, r)
	if err != nil {
		return n, fmt.Errorf("write object: %w", err)
	}
	return n, nil
}
