//go:build unix

package indexer

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockDir takes the exclusive lock of the folder just created at path and
// checks that path is still that folder (a sweeper may have removed it
// between its creation and the lock).
func lockDir(path string) (*os.File, error) {
	f, err := tryLockDir(path)
	if err != nil {
		return nil, err
	}
	if f == nil {
		return nil, fmt.Errorf("%s is locked by another process", path)
	}
	held, err1 := f.Stat()
	now, err2 := os.Stat(path)
	if err := errors.Join(err1, err2); err != nil {
		f.Close()
		return nil, err
	}
	if !os.SameFile(held, now) {
		f.Close()
		return nil, fmt.Errorf("%s was replaced", path)
	}
	return f, nil
}

// tryLockDir opens the folder at path and takes its exclusive flock
// without waiting: nil, nil if another open file holds it.
func tryLockDir(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != syscall.EINTR {
			break
		}
	}
	switch {
	case err == nil:
		return f, nil
	case errors.Is(err, syscall.EWOULDBLOCK):
		f.Close()
		return nil, nil
	default:
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
}
