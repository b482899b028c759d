package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/server"
	"github.com/parqdb/parqdb/server/console"
	"github.com/parqdb/parqdb/server/serving"
)

// TestConsoleFiles: / and /console redirect to /console/; every console
// file is served with its type and the same-origin CSP, without the token
// a server requires for its API; the files name no other origin.
func TestConsoleFiles(t *testing.T) {
	tok, err := serving.NewToken("console-files")
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, server.Config{Token: tok})
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, p := range []string{"/", "/console"} {
		resp, err := noRedirect.Get(f.url + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/console/" {
			t.Errorf("GET %s: %d to %q, want 302 to /console/", p, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	names := console.Names()
	if len(names) < 4 {
		t.Fatalf("console files %v", names)
	}
	foreign := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}`)
	for _, n := range append(names, "") {
		resp, err := http.Get(f.url + "/console/" + n)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want, _ := console.Lookup(n)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != want.ContentType || string(body) != string(want.Body) {
			t.Errorf("/console/%s: %d %s, %d bytes; want 200 %s, %d bytes", n, resp.StatusCode, resp.Header.Get("Content-Type"), len(body), want.ContentType, len(want.Body))
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "connect-src 'self'") {
			t.Errorf("/console/%s: CSP %q", n, csp)
		}
		for _, m := range foreign.FindAll(body, -1) {
			if string(m) != "http://www.w3.org" { // the SVG namespace, not a request
				t.Errorf("/console/%s names another origin: %s", n, m)
			}
		}
		req, _ := http.NewRequest(http.MethodGet, f.url+"/console/"+n, nil)
		req.Header.Set("If-None-Match", want.ETag)
		resp, err = http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotModified {
			t.Errorf("/console/%s with its ETag: %d, want 304", n, resp.StatusCode)
		}
	}
	if status, m := f.get(t, "/console/nope.js"); status != http.StatusNotFound || errCode(m) != "not_found" {
		t.Errorf("/console/nope.js: %d %v", status, m)
	}
	if status, m := f.get(t, "/v1/indexes"); status != http.StatusUnauthorized {
		t.Errorf("/v1/indexes without the token: %d %v", status, m)
	}
}

// TestCalibrationRoute: GET /v1/indexes/{name}/calibration answers the
// calibration's points and, per target, the setting a recall search
// picks (the same as query's), and refuses bad targets.
func TestCalibrationRoute(t *testing.T) {
	f := newFixture(t, server.Config{Limits: serving.Limits{MaxNProbe: 10}})
	status, m := f.get(t, "/v1/indexes/words/calibration")
	if status != http.StatusOK {
		t.Fatalf("calibration: %d %v", status, m)
	}
	var c server.CalibrationDescription
	remarshal(t, m, &c)
	if c.Index != "words" || c.SnapshotID != 1 || c.NList != 64 || c.K != 10 || c.Queries == 0 || !c.Stored || len(c.Points) == 0 ||
		len(c.Picks) != len(server.DefaultCalibrationTargets) {
		t.Fatalf("calibration %+v", c)
	}
	ix, err := query.Open(context.Background(), f.env, "words", query.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	over := 0
	for i, p := range c.Picks {
		want, met, err := ix.RecallSetting(context.Background(), server.DefaultCalibrationTargets[i])
		if err != nil {
			t.Fatal(err)
		}
		if p.Target != server.DefaultCalibrationTargets[i] || p.Point != want || p.Met != met || p.OverLimit != (want.NProbe > 10) {
			t.Errorf("pick %d: %+v, want %+v met %v (server nprobe limit 10)", i, p, want, met)
		}
		if p.OverLimit {
			over++
			// The setting is refused by a search too.
			if status, m := f.post(t, "/v1/indexes/words/search", map[string]any{"key": "king", "recall": p.Target}); status != http.StatusBadRequest || errCode(m) != "out_of_range" {
				t.Errorf("search at recall %v over the limit: %d %v", p.Target, status, m)
			}
		}
	}
	if over == 0 {
		t.Errorf("no pick over nprobe 10: %+v", c.Picks)
	}
	status, m = f.get(t, "/v1/indexes/words/calibration?target=0.97&target=0.5")
	remarshal(t, m, &c)
	if status != http.StatusOK || len(c.Picks) != 2 || c.Picks[0].Target != 0.97 || c.Picks[1].Target != 0.5 {
		t.Errorf("targets 0.97, 0.5: %d %+v", status, c.Picks)
	}
	for _, tc := range []struct {
		path, code string
		status     int
	}{
		{"/v1/indexes/words/calibration?target=1.5", "out_of_range", 400},
		{"/v1/indexes/words/calibration?target=0", "out_of_range", 400},
		{"/v1/indexes/words/calibration?target=high", "invalid_argument", 400},
		{"/v1/indexes/words/calibration?" + strings.Repeat("target=0.9&", 33), "out_of_range", 400},
		{"/v1/indexes/nope/calibration", "index_not_found", 404},
	} {
		if status, m := f.get(t, tc.path); status != tc.status || errCode(m) != tc.code {
			t.Errorf("%s: %d %v, want %d %s", tc.path, status, m, tc.status, tc.code)
		}
	}
}

// TestDescribeOperationAndServerTiming: a snapshot's operation is in the
// description, and a search answer has a Server-Timing header.
func TestDescribeOperationAndServerTiming(t *testing.T) {
	f := newFixture(t, server.Config{})
	commitSuccessor(t, f.env, "words")
	_, m := f.get(t, "/v1/indexes/words")
	var d server.IndexDescription
	remarshal(t, m, &d)
	if len(d.Snapshots) != 2 || d.Snapshots[0].Operation != "create" || d.Snapshots[1].Operation != "create" {
		t.Errorf("snapshots %+v, want two with operation create (a successor keeps its base's summary)", d.Snapshots)
	}
	resp, err := http.Post(f.url+"/v1/indexes/words/search", "application/json", strings.NewReader(`{"key": "king", "k": 3}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	st := resp.Header.Get("Server-Timing")
	if !regexp.MustCompile(`^admit;dur=[0-9.]+, search;dur=[0-9.]+, encode;dur=[0-9.]+$`).MatchString(st) {
		t.Errorf("Server-Timing %q", st)
	}
}

// remarshal decodes a generic answer into a typed one.
func remarshal(t *testing.T, m map[string]any, v any) {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}
