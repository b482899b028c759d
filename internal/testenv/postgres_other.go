//go:build !linux

package testenv

import "syscall"

// pgSysProcAttr runs the postmaster as cred; outside Linux only Main's
// cleanup stops it.
func pgSysProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred}
}
