package server_test

import (
	"io"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/parqdb/parqdb/server"
	"github.com/parqdb/parqdb/server/serving"
)

// TestMetricsLabelsBounded floods a server with requests of random long
// methods to unknown routes, to protected routes without the token and
// to known routes with the token, and checks that /metrics does not grow:
// every label of every parqdb_ series has a bounded set of values (odd
// methods fold into "other", unknown paths into route "other"), so a
// second flood adds no series and the exposition stays small.
func TestMetricsLabelsBounded(t *testing.T) {
	tok, err := serving.NewToken("metrics-token")
	if err != nil {
		t.Fatal(err)
	}
	_, url := startServer(t, newLocalEnv(t), server.Config{Token: tok})
	rng := rand.New(rand.NewPCG(1, 2))
	const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	randToken := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = letters[rng.IntN(len(letters))]
		}
		return string(b)
	}
	paths := []string{"/nope", "/v1/indexes", "/v1/indexes/x", "/v1/indexes/x/search", "/metrics", "/healthz", "/v1/indexes/x/y/z"}
	flood := func(n int) {
		for i := range n {
			method := randToken(1 + rng.IntN(3000))
			path := paths[i%len(paths)]
			if i%3 == 0 {
				path = "/" + randToken(1+rng.IntN(200)) // an unknown route
			}
			req, err := http.NewRequest(method, url+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if i%2 == 0 {
				req.Header.Set("Authorization", "Bearer metrics-token")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	scrape := func() (series map[string]bool, size int) {
		req, _ := http.NewRequest(http.MethodGet, url+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer metrics-token")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		text, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("/metrics: %d %v", resp.StatusCode, err)
		}
		series = map[string]bool{}
		for line := range strings.SplitSeq(string(text), "\n") {
			if strings.HasPrefix(line, "parqdb_") {
				series[line[:strings.LastIndexByte(line, ' ')]] = true
			}
		}
		return series, len(text)
	}
	scrape() // its own request is counted from the next scrape on
	flood(300)
	first, _ := scrape()
	flood(300)
	second, size := scrape()
	for s := range second {
		if !first[s] {
			t.Errorf("a second flood added series %.200s", s)
		}
	}
	label := regexp.MustCompile(`(\w+)="([^"]*)"`)
	allowed := map[string]map[string]bool{
		"method": {"GET": true, "HEAD": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true,
			"CONNECT": true, "OPTIONS": true, "TRACE": true, "other": true},
		"route": {"/healthz": true, "/readyz": true, "/openapi.yaml": true, "/metrics": true, "/v1/indexes": true,
			"/v1/indexes/{name}": true, "/v1/indexes/{name}/search": true, "other": true},
	}
	requests := 0
	for s := range second {
		if strings.HasPrefix(s, "parqdb_http_requests_total{") {
			requests++
		}
		for _, m := range label.FindAllStringSubmatch(s, -1) {
			if set, ok := allowed[m[1]]; ok && !set[m[2]] {
				t.Errorf("series %.200s: label %s=%.100q is outside its set", s, m[1], m[2])
			}
		}
	}
	// 8 routes × 10 methods × a few statuses at most; in this flood:
	// route other × (404) and known routes × (401, 405, 200) with
	// method other, plus the scrapes.
	if requests == 0 || requests > 40 {
		t.Errorf("parqdb_http_requests_total has %d series after 600 odd requests", requests)
	}
	if size > 64<<10 {
		t.Errorf("/metrics is %d bytes after 600 odd requests", size)
	}
	t.Logf("%d parqdb_ series, %d request series, /metrics %d bytes", len(second), requests, size)
}
