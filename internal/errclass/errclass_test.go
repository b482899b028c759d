package errclass

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"testing"
)

func TestCorrupt(t *testing.T) {
	errA, errB := Corrupt("a: corrupt"), Corrupt("b: corrupt")
	err := fmt.Errorf("file x: %w: row 3", errA)
	if !errors.Is(err, errA) || !errors.Is(err, ErrCorrupt) || errors.Is(err, errB) {
		t.Fatalf("errors.Is: %v a %v class %v b %v", err, errors.Is(err, errA), errors.Is(err, ErrCorrupt), errors.Is(err, errB))
	}
	if err.Error() != "file x: a: corrupt: row 3" {
		t.Fatalf("message %q", err)
	}
	if errors.Is(fmt.Errorf("x: %w", io.EOF), ErrCorrupt) {
		t.Fatal("an unclassed error is corrupt")
	}
}

func TestMarkCorrupt(t *testing.T) {
	if MarkCorrupt(nil) != nil {
		t.Fatal("MarkCorrupt(nil) is not nil")
	}
	inner := &fs.PathError{Op: "read", Path: "p", Err: fs.ErrInvalid}
	err := fmt.Errorf("open: %w", MarkCorrupt(fmt.Errorf("meta.json: %w", inner)))
	var pe *fs.PathError
	if !errors.Is(err, ErrCorrupt) || !errors.Is(err, fs.ErrInvalid) || !errors.As(err, &pe) || pe != inner {
		t.Fatalf("chain lost: %v", err)
	}
	if err.Error() != "open: meta.json: read p: invalid argument" {
		t.Fatalf("message %q", err)
	}
}
