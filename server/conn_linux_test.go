package server_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/parqdb/parqdb/server"
)

// TestAnswerInOneSegment: a search answer larger than net/http's 4 KiB
// write buffer reaches the client as one TCP data segment (the header and
// the body in one write call; before, two), with a Content-Length that
// matches the body; answers too large to hold and small ones are whole
// too. It counts the data segments the client's socket received
// (TCP_INFO) over a keep-alive connection.
func TestAnswerInOneSegment(t *testing.T) {
	f := newFixture(t, server.Config{})
	conn, err := net.Dial("tcp", strings.TrimPrefix(f.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	raw, err := conn.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	segsIn := func() uint32 {
		var info *unix.TCPInfo
		var ierr error
		if err := raw.Control(func(fd uintptr) { info, ierr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO) }); err != nil || ierr != nil {
			t.Fatalf("TCP_INFO: %v %v", err, ierr)
		}
		return info.Data_segs_in
	}
	br := bufio.NewReader(conn)
	ask := func(k int) (int, uint32) {
		t.Helper()
		body := fmt.Sprintf(`{"key": "king", "k": %d}`, k)
		before := segsIn()
		fmt.Fprintf(conn, "POST /v1/indexes/words/search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("k %d: status %d, %v: %.200s", k, resp.StatusCode, err, data)
		}
		if cl, err := strconv.Atoi(resp.Header.Get("Content-Length")); err != nil || cl != len(data) {
			t.Fatalf("k %d: Content-Length %q, body %d bytes", k, resp.Header.Get("Content-Length"), len(data))
		}
		return len(data), segsIn() - before
	}
	ask(20) // opens the index and fills its caches
	n, segs := ask(20)
	if n <= 4096 {
		t.Fatalf("the k = 20 answer has %d bytes: too small to test", n)
	}
	if segs != 1 {
		t.Errorf("a %d-byte answer came in %d data segments, want 1", n, segs)
	}
	if n, _ := ask(1); n > 2048 {
		t.Errorf("the k = 1 answer has %d bytes", n)
	}
	if n, _ := ask(500); n <= 64<<10 {
		t.Errorf("the k = 500 answer has %d bytes: not larger than what is held", n)
	}
}
