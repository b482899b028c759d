package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parqdb/parqdb/internal/testenv"
)

// Figures of TestServeAttackBounded, stated in docs/serve.md ("Limits")
// and docs/reliability.md.
const (
	attackRequests  = 8
	attackTimeout   = 5 * time.Second // the server's --timeout
	attackAskFor    = 3 * time.Second // timeout_ms of the refine-100 round
	attackSlack     = 5 * time.Second // generous, for a busy machine (measured: within 0.2 s of the limit, logged); the unbounded server took 27 s
	attackRSSBound  = 1 << 30         // VmHWM of the server process, bytes
	attackVectors   = 100             // × k 1000 = 100,000 rows: the largest answer --max-rows allows
	attackMaxConcur = 2
)

// TestServeAttackBounded runs the built parqdb binary as a server
// (--max-concurrent 2 --max-queue 4, other limits at their defaults) and
// sends it two rounds of attackRequests concurrent searches of the worst
// shapes the limits allow, 100 query vectors × k 1000 (= --max-rows),
// nprobe 4096, every column: first with refine 100 and timeout_ms 3000
// (the most CPU), then with refine 0 and the server's time limit (the
// most answers that complete, so the most memory). Each request is
// answered 200, 503 (overloaded, with Retry-After) or 504 (timeout)
// within its time limit plus a generous slack, and the server's peak RSS
// (VmHWM) stays under attackRSSBound. Before the time limit covered the
// whole request and searches were admitted through a bounded queue, eight
// such requests took 27 s and 1.5 GB.
func TestServeAttackBounded(t *testing.T) {
	testenv.SkipShort(t, skipBuiltCLI)
	bin := parqdbBinary(t) // the PTY tests' build: its test hook acts only when PARQDB_TEST_HOLD is set
	wh := cliIndex(t)
	cmd := exec.Command(bin, wh, "serve", "--listen", "127.0.0.1:0", "--flight", "", "--log-level", "info",
		"--timeout", attackTimeout.String(), "--max-concurrent", strconv.Itoa(attackMaxConcur), "--max-queue", "4")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	base := "http://" + serverAddr(t, stderr)
	waitReady(t, base)

	rng := rand.New(rand.NewPCG(1, 2))
	vecs := make([][]float32, attackVectors)
	for i := range vecs {
		vecs[i] = make([]float32, 50)
		for j := range vecs[i] {
			vecs[i][j] = rng.Float32()*2 - 1
		}
	}
	counts := map[int]int{}
	for _, round := range []struct {
		name   string
		refine int
		limit  time.Duration
	}{
		{"refine 100", 100, attackAskFor},
		{"refine 0", 0, attackTimeout},
	} {
		req := map[string]any{"vectors": vecs, "k": 1000, "nprobe": 4096, "refine": round.refine}
		if round.limit != attackTimeout {
			req["timeout_ms"] = round.limit.Milliseconds()
		}
		body, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		for i, a := range attack(base, body) {
			cut := ""
			if a.cut {
				cut = ", cut at the time limit"
			}
			t.Logf("%s, request %d: %d %s in %v (%d bytes%s)", round.name, i, a.status, a.code, a.took.Round(time.Millisecond), a.bytes, cut)
			counts[a.status]++
			switch {
			case a.err != nil:
				t.Errorf("%s, request %d: %v", round.name, i, a.err)
			case a.took > round.limit+attackSlack:
				t.Errorf("%s, request %d: answered %d after %v, past the time limit %v + %v", round.name, i, a.status, a.took, round.limit, attackSlack)
			case a.status == http.StatusServiceUnavailable && (a.code != "overloaded" || a.retryAfter == ""):
				t.Errorf("%s, request %d: 503 with code %q, Retry-After %q; want overloaded with Retry-After", round.name, i, a.code, a.retryAfter)
			case a.status == http.StatusGatewayTimeout && a.code != "timeout":
				t.Errorf("%s, request %d: 504 with code %q, want timeout", round.name, i, a.code)
			case a.cut:
				// Cut at the time limit (checked above): bounded, as documented.
			case a.status != http.StatusOK && a.status != http.StatusServiceUnavailable && a.status != http.StatusGatewayTimeout:
				t.Errorf("%s, request %d: status %d %s, want 200, 503 or 504", round.name, i, a.status, a.code)
			}
		}
	}
	hwm := vmHWM(t, cmd.Process.Pid)
	t.Logf("answers by status %v; server VmHWM %.0f MiB (bound %d MiB)", counts, float64(hwm)/(1<<20), attackRSSBound>>20)
	if hwm > attackRSSBound {
		t.Errorf("server peak RSS %d MiB exceeds the bound %d MiB", hwm>>20, attackRSSBound>>20)
	}
}

// attackAnswer is what one attack request got.
type attackAnswer struct {
	status     int
	code       string // the error code of a non-200 answer
	retryAfter string
	took       time.Duration
	bytes      int
	// cut is a 200 answer whose body the server stopped sending at the
	// time limit (the status line had gone out): the client sees fewer
	// bytes than Content-Length, io.ErrUnexpectedEOF, never a short body
	// that looks whole.
	cut bool
	err error
}

// attack posts body to the words index attackRequests times at once.
func attack(base string, body []byte) []attackAnswer {
	answers := make([]attackAnswer, attackRequests)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() {
			start := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), 4*attackTimeout)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/indexes/words/search", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				// A connection the server closed at the time limit before
				// the status line went out is a cut answer too.
				cut := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
				if cut {
					err = nil
				}
				answers[i] = attackAnswer{err: err, cut: cut, took: time.Since(start)}
				return
			}
			defer resp.Body.Close()
			data, err := io.ReadAll(resp.Body)
			a := attackAnswer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), took: time.Since(start), bytes: len(data), err: err}
			var e struct{ Error struct{ Code string } }
			if resp.StatusCode != http.StatusOK && json.Unmarshal(data, &e) == nil {
				a.code = e.Error.Code
			}
			if resp.StatusCode == http.StatusOK && errors.Is(err, io.ErrUnexpectedEOF) {
				a.cut, a.err = true, nil
			}
			if resp.StatusCode == http.StatusOK && !a.cut && a.err == nil {
				var ok struct{ Results [][]json.RawMessage }
				if err := json.Unmarshal(data, &ok); err != nil || len(ok.Results) != attackVectors || len(ok.Results[0]) != 1000 {
					a.err = fmt.Errorf("the 200 answer is not %d × 1000 rows: %v", attackVectors, err)
				}
			}
			answers[i] = a
		})
	}
	wg.Wait()
	return answers
}

// serverAddr reads the server's JSON log until it says where it listens.
func serverAddr(t *testing.T, stderr io.Reader) string {
	t.Helper()
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		sent := false
		for sc.Scan() {
			var line struct{ Msg, Addr string }
			if !sent && json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "serving HTTP" {
				found <- line.Addr
				sent = true
			}
		}
		if !sent {
			close(found)
		}
	}()
	select {
	case a, ok := <-found:
		if !ok {
			t.Fatal("the server exited before listening")
		}
		return a
	case <-time.After(time.Minute):
		t.Fatal("the server did not start listening within a minute")
	}
	return ""
}

func waitReady(t *testing.T, base string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("the server did not become ready within a minute")
}

// vmHWM returns the peak resident set size of process pid, in bytes.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM %q: %v", v, err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/PID/status")
	return 0
}
