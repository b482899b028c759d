//go:build parqdbtest

package main

import (
	"context"
	"os"
	"strings"
	"sync"
	"time"
)

// This file is compiled only into the binary that pty_test.go builds
// (go build -tags parqdbtest). PARQDB_TEST_HOLD=STAGE makes the first
// progress report of the stage whose name starts with STAGE block until
// the command's context is cancelled (a signal), so that a test can
// interrupt a command in the middle of a chosen stage whatever the speed
// of the machine; PARQDB_TEST_HOLD=STAGE:stuck blocks for good instead,
// like a stage that ignores cancellation. Each hold prints "hold STAGE"
// on the terminal first so that the test knows when to send the signal.
func init() {
	v := os.Getenv("PARQDB_TEST_HOLD")
	if v == "" {
		return
	}
	stage, mode, _ := strings.Cut(v, ":")
	progressHook = func(ctx context.Context, p progressReporter) progressReporter {
		return &holdProgress{progressReporter: p, ctx: ctx, stage: stage, stuck: mode == "stuck"}
	}
}

type holdProgress struct {
	progressReporter
	ctx   context.Context
	stage string
	stuck bool

	mu   sync.Mutex
	cur  string
	once sync.Once
}

func (h *holdProgress) Start(stage string, total int64) {
	h.mu.Lock()
	h.cur = stage
	h.mu.Unlock()
	h.progressReporter.Start(stage, total)
}

func (h *holdProgress) Add(n int64) {
	h.progressReporter.Add(n)
	h.mu.Lock()
	cur := h.cur
	h.mu.Unlock()
	if !strings.HasPrefix(cur, h.stage) {
		return
	}
	h.once.Do(func() {
		h.Warn("hold " + cur)
		if h.stuck {
			time.Sleep(time.Hour)
		}
		select {
		case <-h.ctx.Done():
		case <-time.After(time.Minute):
		}
	})
}
