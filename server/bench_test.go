package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/parqdb/parqdb/server"
	"github.com/parqdb/parqdb/server/serving"
)

// BenchmarkServeNearKey is bench/serve in process: near-key searches
// ({"key": …, "k": 10}, every column joined) over 1,000 different words of
// the GloVe sample (lvq8), sent over loopback HTTP by 8 × GOMAXPROCS
// clients, with the access log at warn level as bench/serve/run.sh runs
// it (with room in the queue for every client). It reports the process's
// CPU time per request (cpu-ns/op) besides wall time. Profile it with -cpuprofile / -memprofile.
func BenchmarkServeNearKey(b *testing.B) {
	env := newLocalEnv(b)
	buildGlove(b, env, "words", "lvq8")
	log := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))
	_, url := startServer(b, env, server.Config{Logger: log, Load: serving.LoadLimits{MaxQueue: 64}})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	resp, err := client.Post(url+"/v1/indexes/words/search", "application/json",
		bytes.NewReader([]byte(`{"key": "the", "k": 1000, "nprobe": 64, "keys_only": true}`)))
	if err != nil {
		b.Fatal(err)
	}
	var r struct {
		Results [][]struct {
			Word string `json:"word"`
		} `json:"results"`
	}
	err = json.NewDecoder(resp.Body).Decode(&r)
	resp.Body.Close()
	if err != nil || len(r.Results) != 1 || len(r.Results[0]) != 1000 {
		b.Fatalf("sample keys: %v (%d result lists)", err, len(r.Results))
	}
	bodies := make([][]byte, len(r.Results[0]))
	for i, row := range r.Results[0] {
		bodies[i] = fmt.Appendf(nil, `{"key": %q, "k": 10}`, row.Word)
	}
	var next atomic.Int64
	b.SetParallelism(8)
	cpu0 := processCPU()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			body := bodies[next.Add(1)%int64(len(bodies))]
			resp, err := client.Post(url+"/v1/indexes/words/search", "application/json", bytes.NewReader(body))
			if err != nil {
				b.Error(err)
				return
			}
			n, _ := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || n == 0 {
				b.Errorf("status %d, %d bytes", resp.StatusCode, n)
				return
			}
		}
	})
	b.StopTimer()
	// The process's CPU time (server and clients) per request: on a
	// shared machine this moves less than wall time.
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

// processCPU is the process's user + system time so far.
func processCPU() time.Duration {
	var r syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &r); err != nil {
		return 0
	}
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}
