package testenv

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// The S3 tests run the server in child processes (this test binary run
// again with s3ChildEnv set), so that they can watch it stop when its test
// process ends.
const s3ChildEnv = "PARQDB_TESTENV_S3_CHILD"

func runS3Child(t *testing.T, mode string, env ...string) (string, error) {
	t.Helper()
	SkipShort(t, "tests that run the S3 server from a child process")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestS3Child$", "-test.count=1", "-test.v")
	cmd.Env = append(append(os.Environ(), s3ChildEnv+"="+mode), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	return out.String(), err
}

// childEndpoint finds the "ENDPOINT <url>" line a child printed.
func childEndpoint(t *testing.T, out string) string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if ep, ok := strings.CutPrefix(strings.TrimSpace(line), "ENDPOINT "); ok {
			return ep
		}
	}
	t.Fatalf("child printed no endpoint:\n%s", out)
	return ""
}

// childDataDir finds the "DATADIR <folder>" line a child printed.
func childDataDir(t *testing.T, out string) string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if d, ok := strings.CutPrefix(strings.TrimSpace(line), "DATADIR "); ok {
			return d
		}
	}
	t.Fatalf("child printed no data folder:\n%s", out)
	return ""
}

func answers(endpoint string) bool {
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	c, err := net.DialTimeout("tcp", u.Host, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

func TestS3ServerStopsAtExit(t *testing.T) {
	out, err := runS3Child(t, "use")
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	ep := childEndpoint(t, out)
	if !strings.HasPrefix(ep, "http://127.0.0.1:") || strings.HasSuffix(ep, ":7070") {
		t.Errorf("endpoint %q is not a non-default port on 127.0.0.1", ep)
	}
	if answers(ep) {
		t.Fatalf("server at %s still answers after the tests ended", ep)
	}
	dir := childDataDir(t, out)
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("data folder %s survived: %v", dir, err)
	}
}

func TestS3ServerDiesWithProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only Linux ties the server's life to the test process")
	}
	out, err := runS3Child(t, "crash")
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	ep := childEndpoint(t, out)
	if dir := childDataDir(t, out); strings.Contains(dir, "parqdb-s3-") {
		defer os.RemoveAll(dir)
	}
	for deadline := time.Now().Add(10 * time.Second); answers(ep); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("server at %s outlived its test process", ep)
		}
	}
}

func TestS3MissingBinary(t *testing.T) {
	out, err := runS3Child(t, "missing", "PATH=", "PARQDB_TOOLS="+t.TempDir())
	if err == nil {
		t.Fatalf("child passed without versitygw:\n%s", out)
	}
	if !strings.Contains(out, "make deps") || !strings.Contains(out, "versitygw") {
		t.Fatalf("failure does not say to run `make deps`:\n%s", out)
	}
}

// TestS3Child is the child side of the tests above; it does nothing in a
// normal run.
func TestS3Child(t *testing.T) {
	switch os.Getenv(s3ChildEnv) {
	case "":
		return
	case "missing":
		S3(t)
	case "crash":
		srv := S3(t)
		fmt.Printf("ENDPOINT %s\n", srv.Endpoint)
		fmt.Printf("DATADIR %s\n", srv.dir)
		os.Exit(0) // no cleanup: the kernel must stop the server
	case "use":
		srv := S3(t)
		if again := S3(t); again != srv {
			t.Fatal("second S3 call started another server")
		}
		fmt.Printf("ENDPOINT %s\n", srv.Endpoint)
		fmt.Printf("DATADIR %s\n", srv.dir)
		b1, b2 := srv.NewBucket(t), srv.NewBucket(t)
		if b1 == b2 {
			t.Fatalf("NewBucket returned %q twice", b1)
		}
		ctx := t.Context()
		c := srv.Client()
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{
			Bucket: aws.String(b1), Key: aws.String("k"), Body: strings.NewReader("v"),
		}); err != nil {
			t.Fatal(err)
		}
		out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b1), Key: aws.String("k")})
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(out.Body)
		out.Body.Close()
		if err != nil || string(data) != "v" {
			t.Fatalf("read back %q, %v", data, err)
		}
		list, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(b2)})
		if err != nil || len(list.Contents) != 0 {
			t.Fatalf("new bucket %s is not empty: %v", b2, err)
		}
		stopAll() // what Main does after the tests
	default:
		t.Fatalf("unknown mode %q", os.Getenv(s3ChildEnv))
	}
}
