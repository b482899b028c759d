package indexer

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Spill folders are named spillPrefix + a kind + random characters in the
// build's TempDir: parqdb-spill-build-* (the assign stage's root buckets
// and, with a vectors file, their vectors) and parqdb-spill-keys-* (the
// key map). The names differ from those of older ParqDB versions
// (parqdb-build-*, parqdb-keys-*), whose builds held no lock: a sweep
// must never take a running old build's folder for a dead one.
const spillPrefix = "parqdb-spill-"

// spillKinds are the kinds of spill folder a build makes.
var spillKinds = []string{"build-", "keys-"}

// spillDir is a spill folder this process owns. On Unix the owner holds an
// exclusive flock(2) on the folder itself from creation until remove, so a
// folder whose lock can be taken belongs to no running build: its owner
// was killed (SIGKILL, a power cut, an OOM kill) before it could delete it.
// The kernel drops the lock when the owner's descriptor closes, however
// the process ends.
type spillDir struct {
	path string
	lock *os.File // holds the folder's lock; nil where there is no flock
}

// newSpillDir removes the spill folders of dead builds in tmp (default
// os.TempDir()), then creates and locks a new spill folder of kind
// ("build-" or "keys-").
func newSpillDir(tmp, kind string) (*spillDir, error) {
	if tmp == "" {
		tmp = os.TempDir()
	}
	_, _ = SpillLeftovers(tmp, true)
	for attempt := 0; ; attempt++ {
		path, err := os.MkdirTemp(tmp, spillPrefix+kind+"*")
		if err != nil {
			return nil, err
		}
		lock, err := lockDir(path)
		if err == nil {
			return &spillDir{path: path, lock: lock}, nil
		}
		// A sweeper of another build took the new folder between its
		// creation and the lock, and removed it: make another one.
		_ = os.Remove(path)
		if attempt == 3 {
			return nil, fmt.Errorf("lock spill folder %s: %w", path, err)
		}
	}
}

// remove deletes the folder, then drops its lock.
func (d *spillDir) remove() {
	os.RemoveAll(d.path)
	if d.lock != nil {
		d.lock.Close()
	}
}

// SpillLeftover is a spill folder of a dead build that SpillLeftovers
// found.
type SpillLeftover struct {
	Path    string
	Bytes   int64 // the size of the files in it
	Removed bool  // whether it was deleted
	Err     error // why it could not be deleted
}

// SpillLeftovers finds the spill folders in tmp (default os.TempDir();
// parqdb-spill-build-* and parqdb-spill-keys-*) that no running build holds and, if
// remove, deletes them. Every build calls it before it spills, and
// `parqdb gc` on the temporary folder; a folder a running build holds is
// never touched. On systems without flock(2) it finds nothing. The error
// is for tmp itself (unreadable); a folder that cannot be deleted is
// reported in its entry.
func SpillLeftovers(tmp string, remove bool) ([]SpillLeftover, error) {
	if tmp == "" {
		tmp = os.TempDir()
	}
	ents, err := os.ReadDir(tmp)
	if err != nil {
		return nil, fmt.Errorf("spill leftovers in %s: %w", tmp, err)
	}
	var out []SpillLeftover
	for _, e := range ents {
		if !e.IsDir() || !isSpillName(e.Name()) {
			continue
		}
		path := filepath.Join(tmp, e.Name())
		lock, err := tryLockDir(path)
		if err != nil || lock == nil {
			continue // held by a running build, gone, or not lockable
		}
		l := SpillLeftover{Path: path, Bytes: treeBytes(path)}
		if remove {
			l.Err = os.RemoveAll(path)
			l.Removed = l.Err == nil
		}
		lock.Close()
		out = append(out, l)
	}
	return out, nil
}

func isSpillName(name string) bool {
	rest, ok := strings.CutPrefix(name, spillPrefix)
	if !ok {
		return false
	}
	for _, k := range spillKinds {
		if strings.HasPrefix(rest, k) && len(rest) > len(k) {
			return true
		}
	}
	return false
}

// treeBytes is the size of the regular files under path (best effort).
func treeBytes(path string) int64 {
	var n int64
	_ = filepath.WalkDir(path, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
