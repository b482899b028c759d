package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
)

// stopGrace bounds how long a long command may take to stop after the
// first SIGINT or SIGTERM: cancelling the pipeline and deleting what it
// wrote takes milliseconds on a local warehouse; if it has not returned
// after stopGrace the process exits anyway (files left behind are
// referenced by no metadata, and gc deletes them).
const stopGrace = 1800 * time.Millisecond

// interruptedError reports that a signal stopped the command. Its exit
// status is 128 + the signal number: 130 for SIGINT, 143 for SIGTERM.
type interruptedError struct {
	sig syscall.Signal
	err error // the command's own error if it was not the cancellation
}

func (e interruptedError) Error() string {
	msg := "interrupted by " + signalName(e.sig) + "; nothing was committed"
	if e.err != nil && !errors.Is(e.err, context.Canceled) {
		msg += " (" + e.err.Error() + ")"
	}
	return msg
}

func (e interruptedError) Unwrap() error { return e.err }

func (e interruptedError) exitCode() int { return 128 + int(e.sig) }

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT (Ctrl-C)"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

// progressHook, when set (only in test builds, tag parqdbtest), wraps
// the progress reporter of every long command.
var progressHook func(ctx context.Context, p progressReporter) progressReporter

// runLong runs fn, the body of a long command (index create, refresh,
// optimize, bench), with its progress reporter (on stderr; quiet: none)
// and the signal handling every long command shares:
//
//   - the first SIGINT or SIGTERM cancels ctx; the pipeline stops, deletes
//     what it wrote and returns, and runLong returns an interruptedError
//     (exit status 130 or 143);
//   - if the command has not returned stopGrace after that signal, or a
//     second signal arrives, the process exits at once with that status.
//
// The progress display is closed before runLong returns, so an error the
// caller prints is the last thing on the screen.
func runLong(cmd *cobra.Command, quiet bool, fn func(ctx context.Context, p progressReporter) error) error {
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	p := newProgress(os.Stderr, quiet)
	if progressHook != nil {
		p = progressHook(ctx, p)
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)

	var (
		mu    sync.Mutex
		first syscall.Signal
	)
	finished := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var deadline <-chan time.Time
		for {
			select {
			case <-finished:
				return
			case s := <-sigs:
				sig, _ := s.(syscall.Signal)
				mu.Lock()
				again := first != 0
				if !again {
					first = sig
				}
				mu.Unlock()
				if again {
					exitNow(p, sig, fmt.Sprintf("interrupted again by %s: exiting without cleaning up (files this run wrote are referenced by no metadata; `parqdb gc` removes them)", signalName(sig)))
				}
				cancel()
				deadline = time.After(stopGrace)
			case <-deadline:
				exitNow(p, first, fmt.Sprintf("interrupted by %s: stopping took longer than %s, exiting without finishing the cleanup (`parqdb gc` removes what is left)", signalName(first), stopGrace))
			}
		}
	}()
	err := fn(ctx, p)
	p.Close()
	close(finished)
	wg.Wait()
	mu.Lock()
	sig := first
	mu.Unlock()
	if sig != 0 && err != nil {
		return interruptedError{sig: sig, err: err}
	}
	return err
}

// exitNow ends the process with the status of sig after closing the
// progress display and printing msg.
func exitNow(p progressReporter, sig syscall.Signal, msg string) {
	p.Close()
	fmt.Fprintln(os.Stderr, "parqdb:", msg)
	os.Exit(128 + int(sig))
}

// runLongEnv is runLong around withEnv: fn gets the opened warehouse and
// catalog as well.
func runLongEnv(cmd *cobra.Command, g *globals, quiet bool, fn func(ctx context.Context, e *env, p progressReporter) error) error {
	return runLong(cmd, quiet, func(ctx context.Context, p progressReporter) error {
		return withEnv(ctx, g, func(e *env) error { return fn(ctx, e, p) })
	})
}

// runLongNewEnv is runLongEnv for the one command that may make a new
// warehouse (index create, withNewEnv).
func runLongNewEnv(cmd *cobra.Command, g *globals, quiet bool, fn func(ctx context.Context, e *env, p progressReporter) error) error {
	return runLong(cmd, quiet, func(ctx context.Context, p progressReporter) error {
		return withNewEnv(ctx, g, func(e *env) error { return fn(ctx, e, p) })
	})
}
