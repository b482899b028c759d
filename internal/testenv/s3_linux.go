package testenv

import (
	"os"
	"syscall"
)

// s3SysProcAttr puts the server in its own process group, so that s3Kill
// reaches anything it starts, and has the kernel kill it if the test
// process dies without running Main's cleanup.
func s3SysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// s3Kill kills the server's whole process group.
func s3Kill(p *os.Process) {
	_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
	_ = p.Kill()
}
