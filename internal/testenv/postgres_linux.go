package testenv

import "syscall"

// pgSysProcAttr runs the postmaster as cred and has the kernel send it
// SIGQUIT (immediate shutdown, which also ends its backends) if the test
// process dies without running Main's cleanup. Go sets the parent-death
// signal after switching credentials, so the switch does not clear it.
func pgSysProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT}
}
