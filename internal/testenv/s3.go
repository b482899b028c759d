package testenv

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// S3Server is a running S3-compatible server (versitygw with its posix
// backend) on 127.0.0.1, private to this test process. Its fields are fixed
// for the life of the process; methods are safe for concurrent use.
type S3Server struct {
	// Endpoint is the server's base URL, "http://127.0.0.1:<port>". Clients
	// must use path-style addressing.
	Endpoint string
	// AccessKey and SecretKey are the root credentials, random per process.
	AccessKey, SecretKey string
	// Region is the region the server signs for.
	Region string

	client *s3.Client
	dir    string // the server's data folder
	seq    atomic.Int64
}

// s3VersityBinary is the S3 server's executable name.
const s3VersityBinary = "versitygw"

var s3Server struct {
	once sync.Once
	srv  *S3Server
	err  error
}

// S3 returns this process's S3 server, starting it on first use. It fails
// the test (t.Fatal) when the server cannot start, for instance when
// versitygw is not installed, and skips it under -short (SkipShort). Run
// the package's tests through Main so that the server stops when they end.
func S3(t testing.TB) *S3Server {
	t.Helper()
	SkipShort(t, "tests on an S3 server (versitygw)")
	s3Server.once.Do(func() { s3Server.srv, s3Server.err = startS3() })
	if s3Server.err != nil {
		t.Fatalf("testenv: S3 server: %v", s3Server.err)
	}
	return s3Server.srv
}

// NewBucket creates a new, empty bucket with a name unique in this process
// and returns its name. The bucket lives until the server stops.
func (s *S3Server) NewBucket(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("t%d-%s", s.seq.Add(1), s3RandomHex(6))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatalf("testenv: create bucket %q at %s: %v", name, s.Endpoint, err)
	}
	return name
}

// Client returns an SDK client for the server with the root credentials,
// for tests that need to look at buckets directly.
func (s *S3Server) Client() *s3.Client { return s.client }

// s3FindBinary looks for versitygw on PATH, then in the tools folder.
func s3FindBinary() (string, error) {
	if p, err := exec.LookPath(s3VersityBinary); err == nil {
		return p, nil
	}
	if dir := toolsBin(); dir != "" {
		p := filepath.Join(dir, s3VersityBinary)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found on PATH or in %s: run `make deps` (scripts/test-deps.sh installs it)",
		s3VersityBinary, toolsBin())
}

// startS3 starts the server on a free port, retrying a few times in case
// another process takes the port between our probe and the server's bind.
func startS3() (*S3Server, error) {
	bin, err := s3FindBinary()
	if err != nil {
		return nil, err
	}
	var errs []error
	for attempt := 0; attempt < 5; attempt++ {
		srv, err := s3StartOnce(bin)
		if err == nil {
			return srv, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

func s3StartOnce(bin string) (*S3Server, error) {
	port, err := s3FreePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "parqdb-s3-")
	if err != nil {
		return nil, err
	}
	srv := &S3Server{
		Endpoint:  "http://127.0.0.1:" + strconv.Itoa(port),
		AccessKey: "parqdb" + s3RandomHex(8),
		SecretKey: s3RandomHex(20),
		Region:    "us-east-1",
		dir:       dir,
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.Command(bin, "--port", addr, "--region", srv.Region, "--quiet", "posix", dir)
	// A minimal environment: versitygw reads many VGW_* and ROOT_* variables
	// that must not leak in from the developer's shell.
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
		"TMPDIR=" + os.TempDir(),
		"ROOT_ACCESS_KEY=" + srv.AccessKey,
		"ROOT_SECRET_KEY=" + srv.SecretKey,
	}
	var logs s3Log
	cmd.Stdout = &logs
	cmd.Stderr = &logs
	cmd.SysProcAttr = s3SysProcAttr()
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	stop := func() {
		s3Kill(cmd.Process)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
		}
		os.RemoveAll(dir)
	}
	if err := s3WaitReady(addr, exited); err != nil {
		stop()
		return nil, fmt.Errorf("%s on %s: %w; output: %s", bin, addr, err, logs.String())
	}
	atExit(stop)
	srv.client = s3.New(s3.Options{
		BaseEndpoint: aws.String(srv.Endpoint),
		Region:       srv.Region,
		Credentials:  credentials.NewStaticCredentialsProvider(srv.AccessKey, srv.SecretKey, ""),
		UsePathStyle: true,
	})
	return srv, nil
}

// s3WaitReady waits until addr accepts TCP connections, the process exits,
// or 20 seconds pass.
func s3WaitReady(addr string, exited <-chan struct{}) error {
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-exited:
			return errors.New("server exited before it accepted connections")
		case <-time.After(25 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not answering after 20s: %w", err)
		}
	}
}

// s3FreePort returns a port that was free a moment ago and is not
// versitygw's default (7070).
func s3FreePort() (int, error) {
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("find a free port: %w", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if port != 7070 {
			return port, nil
		}
	}
}

func s3RandomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// s3Log collects the server's output for error messages, keeping the last
// 8 KiB.
type s3Log struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *s3Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	if l.buf.Len() > 8<<10 {
		b := l.buf.Bytes()
		keep := append([]byte(nil), b[len(b)-8<<10:]...)
		l.buf.Reset()
		l.buf.Write(keep)
	}
	return len(p), nil
}

func (l *s3Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.TrimSpace(l.buf.String())
}
