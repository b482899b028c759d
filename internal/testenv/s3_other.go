//go:build !linux

package testenv

import (
	"os"
	"syscall"
)

// s3SysProcAttr has no portable way to tie the server's life to ours
// outside Linux; Main's cleanup stops it.
func s3SysProcAttr() *syscall.SysProcAttr { return nil }

// s3Kill kills the server process.
func s3Kill(p *os.Process) { _ = p.Kill() }
