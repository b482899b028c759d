package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parqdb/parqdb/server"
	"github.com/parqdb/parqdb/server/serving"
)

// postSearch posts a JSON body and returns the status, the error code (if
// any) and the Retry-After header.
func postSearch(t *testing.T, url string, body any) (int, string, string) {
	t.Helper()
	data, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(url+"/v1/indexes/words/search", "application/json", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var e struct{ Error struct{ Code string } }
	_ = json.Unmarshal(b, &e)
	return resp.StatusCode, e.Error.Code, resp.Header.Get("Retry-After")
}

// answerCeiling bounds how long after its deadline a timed-out request may
// be answered in these tests. It is generous, so that a busy machine does
// not fail them, and still a third of the default 30 s time limit that a
// server ignoring the request's own limit would wait for; the measured
// time is logged.
const answerCeiling = 10 * time.Second

// TestAdmission: with every running slot taken, a request waits in the
// queue until its deadline (504 timeout) or a slot frees (200); with the
// queue full too, it is answered at once 503 overloaded with Retry-After.
func TestAdmission(t *testing.T) {
	f := newFixture(t, server.Config{Load: serving.LoadLimits{MaxConcurrent: 1, MaxQueue: 1}})
	adm := f.srv.Admitter()
	release, err := adm.Admit(context.Background())
	if err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	status, code, _ := postSearch(t, f.url, map[string]any{"key": "king", "timeout_ms": 300})
	took := time.Since(start)
	t.Logf("queued past its deadline: %d %q after %v", status, code, took)
	if status != http.StatusGatewayTimeout || code != serving.CodeTimeout || took < 300*time.Millisecond || took > 300*time.Millisecond+answerCeiling {
		t.Fatalf("queued past its deadline: %d %q after %v, want 504 timeout after 300ms (+ at most %v)", status, code, took, answerCeiling)
	}

	type answer struct {
		status int
		code   string
	}
	queued := make(chan answer, 1)
	go func() {
		s, c, _ := postSearch(t, f.url, map[string]any{"key": "king"})
		queued <- answer{s, c}
	}()
	for deadline := time.Now().Add(10 * time.Second); adm.Stats().Waiting != 1; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the request never queued: %+v", adm.Stats())
		}
	}
	status, code, retry := postSearch(t, f.url, map[string]any{"key": "king"})
	if status != http.StatusServiceUnavailable || code != serving.CodeOverloaded || retry == "" {
		t.Fatalf("queue full: %d %q Retry-After %q, want 503 overloaded with Retry-After", status, code, retry)
	}
	if st := adm.Stats(); st.Rejected != 1 || st.Running != 1 {
		t.Fatalf("stats %+v, want 1 running, 1 rejected", st)
	}
	release()
	if a := <-queued; a.status != http.StatusOK {
		t.Fatalf("queued request after the slot freed: %d %q, want 200", a.status, a.code)
	}
	// The slot is held until the answer is written, so the client may
	// read it a moment before the handler releases the slot.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		st := adm.Stats()
		if st.Running == 0 && st.Waiting == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stats 5 s after all answered: %+v", st)
		}
	}
}

// TestRowLimit: k × query vectors beyond MaxRows is refused before any
// search work, with out_of_range naming both numbers.
func TestRowLimit(t *testing.T) {
	f := newFixture(t, server.Config{Load: serving.LoadLimits{MaxRows: 50}})
	king := vec64(f.king)
	five := [][]float64{king, king, king, king, king}
	for _, tc := range []struct {
		name   string
		body   map[string]any
		status int
		code   string
	}{
		{"at the limit", map[string]any{"vectors": five, "k": 10}, 200, ""},
		{"one row over", map[string]any{"vectors": five, "k": 11}, 400, serving.CodeOutOfRange},
		{"key search, k over", map[string]any{"key": "king", "k": 51}, 400, serving.CodeOutOfRange},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, m := f.post(t, "/v1/indexes/words/search", tc.body)
			if status != tc.status || errCode(m) != tc.code {
				t.Fatalf("got %d %q, want %d %q: %v", status, errCode(m), tc.status, tc.code, m)
			}
		})
	}
}

func TestLoadLimitsValidate(t *testing.T) {
	if _, err := server.New(server.Config{Env: newLocalEnv(t), Load: serving.LoadLimits{MaxConcurrent: -1, MaxRows: -2}}); err == nil {
		t.Fatal("negative load limits accepted")
	}
}

// TestSlowBody: the time limit covers reading the body: a client that
// sends its headers and then trickles the body is answered 504 timeout at
// the limit (it held the connection for the read timeout, limit + 10 s,
// and got 400; the time check stays below that read timeout).
func TestSlowBody(t *testing.T) {
	f := newFixture(t, server.Config{Limits: serving.Limits{Timeout: 300 * time.Millisecond}})
	conn, err := net.Dial("tcp", strings.TrimPrefix(f.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	if _, err := io.WriteString(conn, "POST /v1/indexes/words/search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"key\": "); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	took := time.Since(start)
	t.Logf("slow body: %d after %v", resp.StatusCode, took)
	if limit := 300*time.Millisecond + 8*time.Second; resp.StatusCode != http.StatusGatewayTimeout || !strings.Contains(string(body), `"timeout"`) || took > limit {
		t.Fatalf("slow body: %d %s after %v, want 504 timeout after 300ms (+ at most 8 s, below the 10.3 s read timeout)", resp.StatusCode, body, took)
	}
}
