package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// openPty opens a pseudo-terminal pair and returns its terminal side.
func openPty(t *testing.T) *os.File {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pty number: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open pty: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestParquetToTerminalRefused: --format parquet without --output on a
// terminal is a usage error (it used to write binary to the terminal);
// with a file as standard output it is written.
func TestParquetToTerminalRefused(t *testing.T) {
	wh := gloveWarehouse(t)
	args := []string{"--warehouse", wh, "search", "words", "--near-key", "king", "--format", "parquet"}

	root, _ := newRootCmd()
	root.SetOut(openPty(t))
	root.SetArgs(args)
	err := root.Execute()
	if exitCode(err) != exitUsage || !strings.Contains(fmt.Sprint(err), "--output FILE") {
		t.Fatalf("terminal: exit %d, %v; want a usage error asking for --output", exitCode(err), err)
	}

	f, err := os.Create(t.TempDir() + "/out.parquet")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	root, _ = newRootCmd()
	root.SetOut(f)
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		t.Fatalf("file: %v", err)
	}
	if st, _ := f.Stat(); st.Size() < 8 {
		t.Fatalf("file: %d bytes written", st.Size())
	}
}
