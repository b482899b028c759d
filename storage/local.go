package storage

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
)

// Local is a warehouse in a local folder. Keys map to files below the
// folder, '/' separating folders. All methods are safe for concurrent use,
// also by several processes sharing the folder.
//
// Atomicity: Create writes a temporary file next to the target, fsyncs it,
// renames it over the key and fsyncs the folder. PutIfAbsent writes and
// fsyncs a temporary file and then hard-links it to the key (link(2) fails
// with EEXIST if the key exists, which is the lost race), so it needs a
// file system with hard links. Temporary names contain ':', which no valid
// key may contain, so they never collide with keys and List never shows them.
//
// All file access goes through an os.Root: a symbolic link inside the folder
// that points outside it is refused rather than followed. A folder cannot
// hold both an object "a" and an object "a/b" (S3 can).
type Local struct {
	dir  string
	root *os.Root
}

var _ Bucket = (*Local)(nil)

// NewLocal opens the folder dir as a Bucket, creating it (and its parents)
// if missing. A relative dir is made absolute now.
func NewLocal(dir string) (*Local, error) {
	if dir == "" {
		return nil, errors.New("warehouse: empty folder name")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("warehouse folder %s: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o777); err != nil {
		return nil, fmt.Errorf("warehouse folder: %w", err)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("warehouse folder: %w", err)
	}
	return &Local{dir: abs, root: root}, nil
}

// Dir returns the folder's absolute path.
func (l *Local) Dir() string { return l.dir }

// String returns the folder's absolute path.
func (l *Local) String() string { return l.dir }

func (l *Local) fail(op, key string, err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		err = ErrNotExist
	}
	return &Error{Op: op, Key: key, Bucket: l.dir, Err: err}
}

// begin refuses a bad key or a done context before any I/O.
func (l *Local) begin(ctx context.Context, op, key string) error {
	if err := keyError(op, l.dir, key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return &Error{Op: op, Key: key, Bucket: l.dir, Err: err}
	}
	return nil
}

// Open opens the file at key. The Object reads with pread(2), so its ReadAt
// is safe for concurrent use; ctx is only checked before opening.
func (l *Local) Open(ctx context.Context, key string) (Object, error) {
	if err := l.begin(ctx, "open", key); err != nil {
		return nil, err
	}
	f, err := l.root.Open(filepath.FromSlash(key))
	if err != nil {
		return nil, l.fail("open", key, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, l.fail("open", key, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, l.fail("open", key, ErrNotExist)
	}
	return &localObject{File: f, size: fi.Size()}, nil
}

type localObject struct {
	*os.File
	size int64
}

func (o *localObject) Size() int64 { return o.size }

// Stat describes the file at key. ETag is derived from size and mtime.
func (l *Local) Stat(ctx context.Context, key string) (Info, error) {
	if err := l.begin(ctx, "stat", key); err != nil {
		return Info{}, err
	}
	fi, err := l.root.Stat(filepath.FromSlash(key))
	if err != nil {
		return Info{}, l.fail("stat", key, err)
	}
	if !fi.Mode().IsRegular() {
		return Info{}, l.fail("stat", key, ErrNotExist)
	}
	return localInfo(key, fi), nil
}

func localInfo(key string, fi fs.FileInfo) Info {
	return Info{
		Key:     key,
		Size:    fi.Size(),
		ModTime: fi.ModTime(),
		ETag:    fmt.Sprintf("%x-%x", fi.Size(), fi.ModTime().UnixNano()),
	}
}

// tempPrefix starts every temporary file's name; the ':' makes it an
// invalid key.
const tempPrefix = ".parqdb-tmp:"

// createTemp creates a new temporary file in the key's folder (creating
// the folder), returning its root-relative name.
func (l *Local) createTemp(key string) (string, *os.File, error) {
	dir := path.Dir(key)
	if dir != "." {
		if err := l.root.MkdirAll(filepath.FromSlash(dir), 0o777); err != nil {
			return "", nil, err
		}
	}
	for range 10 {
		var rnd [12]byte
		_, _ = rand.Read(rnd[:])
		name := filepath.FromSlash(path.Join(dir, tempPrefix+hex.EncodeToString(rnd[:])))
		f, err := l.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return name, f, err
	}
	return "", nil, errors.New("cannot find a free temporary file name")
}

// syncDir makes a rename or link in key's folder durable.
func (l *Local) syncDir(key string) error {
	d, err := l.root.Open(filepath.FromSlash(path.Dir(key)))
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	// Some file systems cannot fsync a folder; the data is synced already.
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) {
		err = nil
	}
	return err
}

// Create starts writing key through a temporary file. The Writer renames
// the file over key on Close. ctx is only checked here.
func (l *Local) Create(ctx context.Context, key string) (Writer, error) {
	if err := l.begin(ctx, "create", key); err != nil {
		return nil, err
	}
	tmp, f, err := l.createTemp(key)
	if err != nil {
		return nil, l.fail("create", key, err)
	}
	return &localWriter{l: l, key: key, tmp: tmp, f: f}, nil
}

// localWriter writes a temporary file. Abort after a successful Close does
// nothing, so `defer w.Abort()` is a safe cleanup.
type localWriter struct {
	l   *Local
	key string
	tmp string

	mu   sync.Mutex
	f    *os.File // nil once closed or aborted
	done bool     // Close succeeded
	err  error    // first write error
}

func (w *localWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return 0, w.l.fail("write", w.key, ErrClosed)
	}
	if w.err != nil {
		return 0, w.err
	}
	n, err := w.f.Write(p)
	if err != nil {
		w.err = w.l.fail("write", w.key, err)
		return n, w.err
	}
	return n, nil
}

func (w *localWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return w.l.fail("close", w.key, ErrClosed)
	}
	f := w.f
	w.f = nil
	err := w.err
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = w.l.root.Rename(w.tmp, filepath.FromSlash(w.key))
	}
	if err != nil {
		_ = w.l.root.Remove(w.tmp)
		var serr *Error
		if errors.As(err, &serr) {
			return err
		}
		return w.l.fail("close", w.key, err)
	}
	w.done = true
	if err := w.l.syncDir(w.key); err != nil {
		return w.l.fail("close", w.key, err)
	}
	return nil
}

func (w *localWriter) Abort() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	f := w.f
	w.f = nil
	_ = f.Close()
	if err := w.l.root.Remove(w.tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return w.l.fail("abort", w.key, err)
	}
	return nil
}

// PutIfAbsent writes data to a synced temporary file and links it to key;
// link(2) is atomic across processes and fails if key exists.
func (l *Local) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	const op = "put-if-absent"
	if err := l.begin(ctx, op, key); err != nil {
		return err
	}
	tmp, f, err := l.createTemp(key)
	if err != nil {
		return l.fail(op, key, err)
	}
	defer l.root.Remove(tmp)
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return l.fail(op, key, err)
	}
	if err := l.root.Link(tmp, filepath.FromSlash(key)); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return &Error{Op: op, Key: key, Bucket: l.dir, Err: ErrExist}
		}
		return l.fail(op, key, err)
	}
	if err := l.syncDir(key); err != nil {
		return l.fail(op, key, err)
	}
	return nil
}

// Delete removes the file at key. A missing key, or a key naming a folder,
// is not an error. Empty folders are left in place: removing them could
// race with a concurrent Create below them.
func (l *Local) Delete(ctx context.Context, key string) error {
	if err := l.begin(ctx, "delete", key); err != nil {
		return err
	}
	name := filepath.FromSlash(key)
	fi, err := l.root.Lstat(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil
		}
		return l.fail("delete", key, err)
	}
	if fi.IsDir() {
		return nil
	}
	if err := l.root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return l.fail("delete", key, err)
	}
	return nil
}

// List walks the folders that can hold keys starting with prefix and returns
// the regular files (or links to them) whose names are valid keys, sorted
// by key. Files that are not valid keys, such as temporary files, are
// skipped.
func (l *Local) List(ctx context.Context, prefix string) ([]Info, error) {
	const op = "list"
	if err := CheckPrefix(prefix); err != nil {
		return nil, &Error{Op: op, Key: prefix, Bucket: l.dir, Err: err}
	}
	if err := ctx.Err(); err != nil {
		return nil, &Error{Op: op, Key: prefix, Bucket: l.dir, Err: err}
	}
	start := "."
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		start = prefix[:i]
	}
	fsys := l.root.FS()
	var infos []Info
	err := fs.WalkDir(fsys, start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				return nil // the folder is missing or vanished: no keys
			}
			return err
		}
		if d.IsDir() {
			if p == start {
				return nil
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			// Descend only if keys below p can start with prefix.
			if dir := p + "/"; !strings.HasPrefix(dir, prefix) && !strings.HasPrefix(prefix, dir) {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasPrefix(p, prefix) || CheckKey(p) != nil {
			return nil
		}
		fi, err := fs.Stat(fsys, p) // follows links inside the folder
		if err != nil || !fi.Mode().IsRegular() {
			return nil // vanished, a folder link or an escaping link
		}
		infos = append(infos, localInfo(p, fi))
		return nil
	})
	if err != nil {
		return nil, l.fail(op, prefix, err)
	}
	sort.Slice(infos, func(i, j int) bool { return infos[i].Key < infos[j].Key })
	return infos, nil
}
