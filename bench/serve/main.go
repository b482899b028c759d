// Command serve-load drives `parqdb serve` from a second process: C
// concurrent clients send near-key searches for D, then it prints the
// request count, errors, QPS, latency percentiles, the snapshots that
// answered and the server's resident memory over the run (from /metrics)
// as a Markdown table row. bench/serve/run.sh runs the documented
// benchmark (docs/benchmarks.md, "Serve, HTTP and SQL").
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:7878", "server base URL")
	index := flag.String("index", "words", "index to search")
	conc := flag.Int("c", 32, "concurrent clients")
	dur := flag.Duration("d", 60*time.Second, "run time")
	k := flag.Int("k", 10, "k")
	flag.Parse()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *conc * 2}}
	keys, err := sampleKeys(client, *url, *index)
	if err != nil {
		fmt.Fprintln(os.Stderr, "serve-load:", err)
		os.Exit(1)
	}
	var (
		mu        sync.Mutex
		lat       []time.Duration
		errs      atomic.Int64
		firstErr  atomic.Value
		snapshots sync.Map
	)
	// Bodies are made once and answers read without decoding them
	// whole: the load generator shares the machine with the server, and
	// its own JSON work would be counted against the server's QPS.
	bodies := make([][]byte, len(keys))
	for i, key := range keys {
		bodies[i] = fmt.Appendf(nil, `{"key": %q, "k": %d}`, key, *k)
	}
	target := *url + "/v1/indexes/" + *index + "/search"
	rss := []float64{residentMB(client, *url)}
	stop := time.Now().Add(*dur)
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < *conc; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for i := w; time.Now().Before(stop); i += *conc {
				body := bodies[i%len(bodies)]
				t0 := time.Now()
				resp, err := client.Post(target, "application/json", bytes.NewReader(body))
				if err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					continue
				}
				data, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				mine = append(mine, time.Since(t0))
				if resp.StatusCode != 200 {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, fmt.Sprintf("%d %s", resp.StatusCode, data))
					continue
				}
				if id, ok := snapshotID(data); ok {
					n, _ := snapshots.LoadOrStore(id, new(atomic.Int64))
					n.(*atomic.Int64).Add(1)
				} else {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, fmt.Sprintf("no snapshot_id in %.200s", data))
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	go func() {
		for time.Now().Before(stop) {
			time.Sleep(*dur / 4)
			if time.Now().Before(stop) {
				mu.Lock()
				rss = append(rss, residentMB(client, *url))
				mu.Unlock()
			}
		}
	}()
	wg.Wait()
	elapsed := time.Since(start)
	rss = append(rss, residentMB(client, *url))
	slices.Sort(lat)
	pct := func(p float64) string {
		if len(lat) == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f", float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds())/1000)
	}
	var snaps []string
	snapshots.Range(func(k, v any) bool {
		snaps = append(snaps, fmt.Sprintf("%d: %d", k, v.(*atomic.Int64).Load()))
		return true
	})
	slices.Sort(snaps)
	var mem []string
	for _, m := range rss {
		mem = append(mem, fmt.Sprintf("%.0f", m))
	}
	fmt.Printf("| %d | %v | %d | %d | %.0f | %s | %s | %s | %s | %s | %s |\n",
		*conc, dur.Round(time.Second), len(lat), errs.Load(), float64(len(lat))/elapsed.Seconds(),
		pct(0.50), pct(0.90), pct(0.99), pct(0.999), strings.Join(snaps, ", "), strings.Join(mem, " → "))
	if e := firstErr.Load(); e != nil {
		fmt.Fprintln(os.Stderr, "first error:", e)
		os.Exit(1)
	}
}

// sampleKeys asks the server for words to search near: the keys of the
// 1,000 nearest rows of "the".
func sampleKeys(c *http.Client, url, index string) ([]string, error) {
	resp, err := c.Post(url+"/v1/indexes/"+index+"/search", "application/json",
		bytes.NewReader([]byte(`{"key": "the", "k": 1000, "nprobe": 64, "keys_only": true}`)))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var r struct {
		Columns []string           `json:"columns"`
		Results [][]map[string]any `json:"results"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || len(r.Results) != 1 {
		return nil, fmt.Errorf("sample keys: status %d: %v", resp.StatusCode, err)
	}
	var keys []string
	for _, row := range r.Results[0] {
		keys = append(keys, fmt.Sprint(row[r.Columns[0]]))
	}
	return keys, nil
}

// snapshotID finds the answer's "snapshot_id" member (the server writes
// it before the rows) without decoding the rest.
func snapshotID(data []byte) (int64, bool) {
	_, rest, ok := bytes.Cut(data, []byte(`"snapshot_id":`))
	if !ok {
		return 0, false
	}
	end := bytes.IndexAny(rest, ",}")
	if end < 0 {
		return 0, false
	}
	id, err := strconv.ParseInt(string(bytes.TrimSpace(rest[:end])), 10, 64)
	return id, err == nil
}

// residentMB reads process_resident_memory_bytes from /metrics.
func residentMB(c *http.Client, url string) float64 {
	resp, err := c.Get(url + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "process_resident_memory_bytes "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f / (1 << 20)
		}
	}
	return -1
}
