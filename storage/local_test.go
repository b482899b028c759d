package storage_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parqdb/parqdb/internal/testenv"
	"github.com/parqdb/parqdb/location"
	"github.com/parqdb/parqdb/storage"
	"github.com/parqdb/parqdb/storage/storagetest"
)

func newLocal(t testing.TB) *storage.Local {
	t.Helper()
	l, err := storage.NewLocal(filepath.Join(t.TempDir(), "wh"))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestLocal(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Bucket { return newLocal(t) })
}

func TestLocalWrapped(t *testing.T) {
	// The wrappers must keep the contract when they inject nothing.
	storagetest.Run(t, func(t *testing.T) storage.Bucket {
		b, _ := storage.WithStats(storage.WithFaults(newLocal(t), &storage.Faults{}))
		return b
	})
}

// TestLocalKeysRefusedBeforeIO removes the folder: a refused key must
// still report location.ErrInvalid, not a missing folder.
func TestLocalKeysRefusedBeforeIO(t *testing.T) {
	l := newLocal(t)
	if err := os.RemoveAll(l.Dir()); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"../x", "/abs", "a//b"} {
		if err := l.PutIfAbsent(t.Context(), key, []byte("x")); !errors.Is(err, location.ErrInvalid) {
			t.Errorf("PutIfAbsent(%q) = %v, want ErrInvalid", key, err)
		}
	}
	if _, err := os.Stat(l.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the folder came back: %v", err)
	}
}

// TestLocalNoEscape checks that nothing lands outside the folder, even
// through a symbolic link placed inside it.
func TestLocalNoEscape(t *testing.T) {
	outside := t.TempDir()
	l := newLocal(t)
	if err := os.Symlink(outside, filepath.Join(l.Dir(), "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := l.PutIfAbsent(ctx, "link/new", []byte("x")); err == nil {
		t.Error("PutIfAbsent through a link to outside the folder succeeded")
	}
	if err := storage.WriteAll(ctx, l, "link/new2", []byte("x")); err == nil {
		t.Error("Create through a link to outside the folder succeeded")
	}
	if _, err := storage.ReadAll(ctx, l, "link/secret"); err == nil {
		t.Error("read through a link to outside the folder succeeded")
	}
	infos, err := l.List(ctx, "")
	if err != nil || len(infos) != 0 {
		t.Errorf("List = %v, %v; want nothing", infos, err)
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) != 1 {
		t.Errorf("outside folder holds %d entries, want only the original", len(entries))
	}
}

// TestLocalTempFilesHidden checks that a crashed writer's temporary file is
// never listed or opened as an object.
func TestLocalTempFilesHidden(t *testing.T) {
	l := newLocal(t)
	ctx := t.Context()
	w, err := l.Create(ctx, "a/obj.bin")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if _, err := w.Write([]byte("half")); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Join(l.Dir(), "a"))
	if err != nil || len(entries) != 1 {
		t.Fatalf("want one temporary file, got %v, %v", entries, err)
	}
	if infos, err := l.List(ctx, ""); err != nil || len(infos) != 0 {
		t.Fatalf("List = %v, %v; want nothing", infos, err)
	}
	if err := location.Check("a/" + entries[0].Name()); err == nil {
		t.Fatalf("temporary name %q is a valid key", entries[0].Name())
	}
}

func TestNewLocal(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "x", "y")
	l, err := storage.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("folder not created: %v", err)
	}
	if got, ok := storage.IsLocal(l); !ok || got != dir {
		t.Fatalf("IsLocal = %q, %v", got, ok)
	}
	if _, err := storage.NewLocal(""); err == nil {
		t.Fatal("NewLocal(\"\") succeeded")
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := storage.NewLocal(file); err == nil {
		t.Fatal("NewLocal(a file) succeeded")
	}
}

// Cross-process PutIfAbsent race: the parent re-runs this test binary as
// processes children, each racing for the same keys.
const (
	childEnv  = "PARQDB_STORAGE_RACE_CHILD"
	processes = 4
	raceKeys  = 40
)

func TestLocalPutIfAbsentProcesses(t *testing.T) {
	testenv.SkipShort(t, "tests that race child processes")
	l := newLocal(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	gate := filepath.Join(t.TempDir(), "go")
	cmds := make([]*exec.Cmd, processes)
	outs := make([]*bytes.Buffer, processes)
	for i := range cmds {
		cmd := exec.Command(exe, "-test.run=^TestLocalPutIfAbsentChild$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d|%s|%s", childEnv, i, l.Dir(), gate))
		outs[i] = &bytes.Buffer{}
		cmd.Stdout, cmd.Stderr = outs[i], outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
	}
	// Open the gate once every child is waiting, so that they race.
	for i := range processes {
		ready := fmt.Sprintf("%s.ready%d", gate, i)
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			if _, err := os.Stat(ready); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("child %d never got ready: %s", i, outs[i])
			}
		}
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	wins := make([][]int, raceKeys)
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("child %d: %v\n%s", i, err, outs[i])
		}
		for _, line := range strings.Split(outs[i].String(), "\n") {
			var k int
			if _, err := fmt.Sscanf(strings.TrimSpace(line), "WON %d", &k); err == nil {
				wins[k] = append(wins[k], i)
			}
		}
	}
	for k, w := range wins {
		if len(w) != 1 {
			t.Errorf("key %d: winners %v, want exactly one", k, w)
			continue
		}
		got, err := storage.ReadAll(t.Context(), l, fmt.Sprintf("race/%d", k))
		if err != nil {
			t.Fatal(err)
		}
		if want := childData(w[0], k); !bytes.Equal(got, want) {
			t.Errorf("key %d holds %q, want the winner's %q", k, got, want)
		}
	}
}

func childData(proc, key int) []byte {
	return []byte(fmt.Sprintf("process %d key %d %s", proc, key, strings.Repeat("x", 1000)))
}

// TestLocalPutIfAbsentChild is the child side of
// TestLocalPutIfAbsentProcesses; it does nothing in a normal run.
func TestLocalPutIfAbsentChild(t *testing.T) {
	spec := os.Getenv(childEnv)
	if spec == "" {
		return
	}
	parts := strings.Split(spec, "|")
	var proc int
	if _, err := fmt.Sscan(parts[0], &proc); err != nil || len(parts) != 3 {
		t.Fatalf("bad %s=%q", childEnv, spec)
	}
	l, err := storage.NewLocal(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	gate := parts[2]
	if err := os.WriteFile(fmt.Sprintf("%s.ready%d", gate, proc), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, err := os.Stat(gate); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("gate never opened")
		}
	}
	for k := range raceKeys {
		err := l.PutIfAbsent(t.Context(), fmt.Sprintf("race/%d", k), childData(proc, k))
		switch {
		case err == nil:
			fmt.Printf("WON %d\n", k)
		case !errors.Is(err, storage.ErrExist):
			t.Fatalf("key %d: %v", k, err)
		}
	}
}

func BenchmarkLocalReadAt(b *testing.B) {
	storagetest.BenchmarkReadAt(b, newLocal(b))
}
