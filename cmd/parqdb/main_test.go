package main

import (
	"os"
	"sync"
	"testing"
)

// processDirs are the folders that tests of this process share (the CLI
// builds, made once per process); TestMain removes them when the tests end.
var processDirs struct {
	sync.Mutex
	dirs []string
}

// processDir makes such a folder.
func processDir(pattern string) (string, error) {
	dir, err := os.MkdirTemp("", pattern)
	if err == nil {
		processDirs.Lock()
		processDirs.dirs = append(processDirs.dirs, dir)
		processDirs.Unlock()
	}
	return dir, err
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range processDirs.dirs {
		os.RemoveAll(d)
	}
	os.Exit(code)
}
