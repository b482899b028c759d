package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/server"
	"github.com/parqdb/parqdb/server/serving"
)

// chromium returns the path of Debian's chromium. Without it the browser
// tests skip, except in CI (CI set), where they fail: scripts/test-deps.sh
// installs it there.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed, and CI needs the console browser test: scripts/test-deps.sh installs it (apt-get install chromium)")
	}
	t.Skip("chromium is not installed: skipping the console browser test (apt-get install chromium, or make deps)")
	return ""
}

// screenshotDir is where the browser tests write their screenshots:
// $PARQDB_SCREENSHOTS when set, else a temporary folder.
func screenshotDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("PARQDB_SCREENSHOTS")
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// browserMsg is a console message, an uncaught exception or a browser log
// entry of the page.
type browserMsg struct {
	kind, level, text, url string
}

func (m browserMsg) String() string {
	return fmt.Sprintf("%s %s %q (%s)", m.kind, m.level, m.text, m.url)
}

// browser is one headless chromium tab on the console of the server at
// origin. It records every error or warning the page reports and fails
// every request to another origin (Fetch interception).
type browser struct {
	t      *testing.T
	ctx    context.Context
	origin string
	shots  string

	mu      sync.Mutex
	msgs    []browserMsg
	foreign []string
}

func newBrowser(t *testing.T, origin string) *browser {
	t.Helper()
	path := chromium(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	b := &browser{t: t, ctx: ctx, origin: origin, shots: screenshotDir(t)}
	if err := chromedp.Do(ctx); err != nil { // starts the browser, with no timeout
		t.Fatalf("start chromium: %v", err)
	}
	err := chromedp.Listen(ctx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning || ev.Type == runtime.ConsoleAPICalledTypeAssert {
				var parts []string
				for _, a := range ev.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				b.msgs = append(b.msgs, browserMsg{"console", string(ev.Type), strings.Join(parts, " "), ""})
			}
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			text := d.Text
			if d.Exception != nil {
				text += " " + d.Exception.Description
			}
			b.msgs = append(b.msgs, browserMsg{"exception", "error", text, d.URL})
		case *cdplog.EventEntryAdded:
			if e := ev.Entry; e.Level == cdplog.EntryLevelError || e.Level == cdplog.EntryLevelWarning {
				b.msgs = append(b.msgs, browserMsg{"log:" + string(e.Source), string(e.Level), e.Text, e.URL})
			}
		case *network.EventRequestWillBeSent:
			if !b.sameOrigin(ev.Request.URL) {
				b.foreign = append(b.foreign, ev.Request.URL)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	paused := chromedp.Events(ctx, fetch.RequestPaused)
	go func() {
		for ev, err := range paused {
			if err != nil {
				return
			}
			if b.sameOrigin(ev.Request.URL) {
				_, _ = chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
				continue
			}
			b.mu.Lock()
			b.foreign = append(b.foreign, ev.Request.URL)
			b.mu.Unlock()
			_, _ = chromedp.Call(ctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: network.ErrorReasonBlockedByClient})
		}
	}()
	for _, err := range []error{
		call(ctx, cdplog.Enable, cdp.Empty{}),
		call(ctx, network.Enable, network.EnableParams{}),
		call(ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*"}}}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	// The harness sees a request to another origin (from a blank page,
	// which has no CSP) and fails it.
	b.do("self-check", chromedp.Navigate("about:blank"))
	if got := run(b, "self-check", chromedp.Evaluate[string](`fetch('http://192.0.2.1:9/probe').then(() => 'reached', () => 'failed')`, chromedp.EvalAwaitPromise)); got != "failed" {
		t.Errorf("a request to another origin %s", got)
	}
	b.mu.Lock()
	if len(b.foreign) == 0 || !strings.HasPrefix(b.foreign[0], "http://192.0.2.1:9/probe") {
		t.Fatalf("the harness did not see a request to another origin: %v", b.foreign)
	}
	b.foreign, b.msgs = nil, nil
	b.mu.Unlock()
	t.Cleanup(func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if len(b.foreign) > 0 {
			t.Errorf("the console requested other origins than %s: %v", origin, b.foreign)
		}
		if len(b.msgs) > 0 {
			t.Errorf("the page reported after the last check: %v", b.msgs)
		}
	})
	return b
}

func call[P, R any](ctx context.Context, cmd cdp.Command[P, R], p P) error {
	_, err := chromedp.Call(ctx, cmd, p)
	return err
}

func (b *browser) sameOrigin(u string) bool {
	return u == b.origin || strings.HasPrefix(u, b.origin+"/")
}

// do runs actions with a time limit.
func (b *browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 2*time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v (page messages: %v)", what, err, b.takeMsgs())
	}
}

func run[T any](b *browser, what string, a chromedp.Action[T]) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
	return v
}

func (b *browser) takeMsgs() []browserMsg {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := b.msgs
	b.msgs = nil
	return m
}

// checkMsgs fails on every message the page reported since the last
// check, except failed requests of the API with one of the statuses
// expected (the browser logs each non-2xx answer of fetch as an error).
func (b *browser) checkMsgs(page string, expected ...int) {
	b.t.Helper()
	seen := map[int]bool{}
	msgs := b.takeMsgs()
	for range 40 { // events may trail the page's reaction to them: wait up to 2 s for the expected ones
		if len(msgs) >= len(expected) {
			break
		}
		time.Sleep(50 * time.Millisecond)
		msgs = append(msgs, b.takeMsgs()...)
	}
	for _, m := range msgs {
		ok := false
		for _, st := range expected {
			if m.kind == "log:network" && strings.Contains(m.text, fmt.Sprintf("status of %d ", st)) && b.sameOrigin(m.url) {
				ok, seen[st] = true, true
			}
		}
		if !ok {
			b.t.Errorf("%s: the page reported %v", page, m)
		}
	}
	for _, st := range expected { // so the capture of messages is known to work
		if !seen[st] {
			b.t.Errorf("%s: the browser logged no failed request with status %d", page, st)
		}
	}
}

// shoot writes a 1280×800 screenshot of the page as name.png, then checks
// that at phone width (390 px) the page does not scroll sideways and
// writes that as name-phone.png.
func (b *browser) shoot(name string) {
	b.t.Helper()
	b.do("scroll to top", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	png := run(b, "screenshot", chromedp.CaptureScreenshot())
	if err := os.WriteFile(filepath.Join(b.shots, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.do("phone width", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	if over := run(b, "overflow", chromedp.Evaluate[float64](`document.documentElement.scrollWidth - window.innerWidth`)); over > 1 {
		b.t.Errorf("%s: at 390 px the page is %v px wider than the window", name, over)
	}
	png = run(b, "screenshot", chromedp.CaptureScreenshot())
	if err := os.WriteFile(filepath.Join(b.shots, name+"-phone.png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.do("desktop width", chromedp.EmulateViewport(1280, 800))
}

// TestConsoleBrowser drives the web console in headless chromium against a
// server with two GloVe indexes (one with an optimize snapshot): every
// page renders with no console error and no request to another origin,
// the search form shows the rows the API answers, a bad where shows its
// position, and the pages fit a phone's width.
func TestConsoleBrowser(t *testing.T) {
	chromium(t) // skip before building anything
	ctx := context.Background()
	env := newLocalEnv(t)
	buildGlove(t, env, "words", "lvq8")
	if _, err := indexer.Optimize(ctx, indexer.Env{Warehouse: env.Warehouse, Catalog: env.Catalog}, "words", indexer.OptimizeOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	buildGlove(t, env, "words4", "lvq4")
	_, url := startServer(t, env, server.Config{})
	b := newBrowser(t, url)
	b.do("viewport", chromedp.EmulateViewport(1280, 800))

	// Index list.
	b.do("index list", chromedp.Navigate(url+"/"), chromedp.WaitVisible(chromedp.CSS("#index-list tbody tr")))
	if got := run(b, "location", chromedp.Evaluate[string](`location.pathname`)); got != "/console/" {
		t.Errorf("/ redirected to %s, want /console/", got)
	}
	rows := run(b, "index rows", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#index-list tbody tr')).map(tr => tr.textContent)`))
	if len(rows) != 2 || !strings.Contains(rows[0], "words") || !strings.Contains(rows[0], "10,000") || !strings.Contains(rows[0], "lvq8") ||
		!strings.Contains(rows[1], "words4") || !strings.Contains(rows[1], "lvq4") {
		t.Errorf("index list rows %q", rows)
	}
	b.checkMsgs("index list")
	b.shoot("console-indexes")
	// The console's CSP stops a request to another origin in the browser,
	// and says so on the console.
	if got := run(b, "CSP", chromedp.Evaluate[string](`fetch('http://192.0.2.1:9/csp').then(() => 'reached', () => 'refused')`, chromedp.EvalAwaitPromise)); got != "refused" {
		t.Errorf("a fetch of another origin from the console was %s", got)
	}
	msgs := b.takeMsgs()
	for i := 0; i < 40 && len(msgs) == 0; i++ {
		time.Sleep(50 * time.Millisecond)
		msgs = b.takeMsgs()
	}
	if !strings.Contains(fmt.Sprint(msgs), "Content Security Policy") {
		t.Errorf("a fetch of another origin from the console: messages %v, want a CSP refusal", msgs)
	}
	b.mu.Lock()
	if len(b.foreign) > 0 {
		t.Errorf("the CSP let %v through", b.foreign)
	}
	b.mu.Unlock()

	// Search: by key, submitted with the keyboard.
	b.do("search page", chromedp.Click(chromedp.CSS(`a[href="#/search/words"]`)), chromedp.WaitVisible(chromedp.ID("key")),
		chromedp.SetValue(chromedp.ID("k"), "7"), chromedp.SendKeys(chromedp.ID("key"), "king\r"),
		chromedp.WaitVisible(chromedp.CSS(`#results[data-answers="1"] #result-rows tbody tr`)))
	b.sameRowsAsAPI(url)
	b.checkMsgs("search by key")
	b.shoot("console-search")

	// By pasted vector and target recall, with a filter.
	ix, err := query.Open(ctx, env, "words", query.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	vals, err := ix.ParseKey([]string{"queen"})
	if err != nil {
		t.Fatal(err)
	}
	queen, err := ix.VectorOf(ctx, vals)
	ix.Close()
	if err != nil {
		t.Fatal(err)
	}
	vec, _ := json.Marshal(queen)
	b.do("vector search", chromedp.Click(chromedp.CSS(`input[name="mode"][value="vector"]`)), chromedp.WaitVisible(chromedp.ID("vector")),
		chromedp.SetValue(chromedp.ID("vector"), string(vec)),
		chromedp.Click(chromedp.CSS(`input[name="tune"][value="recall"]`)), chromedp.WaitVisible(chromedp.ID("recall")),
		chromedp.SetValue(chromedp.ID("recall"), "0.9"), chromedp.SetValue(chromedp.ID("where"), "rank > 1000"),
		chromedp.Click(chromedp.ID("run")),
		chromedp.WaitVisible(chromedp.CSS(`#results[data-answers="2"] #result-rows tbody tr`)))
	body := b.sameRowsAsAPI(url)
	if body["recall"] != 0.9 || body["where"] != "rank > 1000" || len(body["vector"].([]any)) != len(queen) {
		t.Errorf("the console sent %v", body)
	}
	stats := run(b, "stats", chromedp.TextContent(chromedp.ID("query-stats")))
	for _, want := range []string{"lists", "candidates", "filter rows", "search", "ms"} {
		if !strings.Contains(stats, want) {
			t.Errorf("query stats %q lack %q", stats, want)
		}
	}
	b.checkMsgs("search by vector")
	b.shoot("console-search-vector")

	// A result's key links to a search near its row.
	b.do("near link", chromedp.Click(chromedp.CSS(`#result-rows tbody tr:nth-child(2) td[data-col="word"] a`)),
		chromedp.WaitVisible(chromedp.CSS(`#results[data-answers="1"] #result-rows tbody tr:first-child td[data-col="word"] a[href*="key="]`)))
	near := b.sameRowsAsAPI(url)
	if first := run(b, "first row", chromedp.TextContent(chromedp.CSS(`#result-rows tbody tr:first-child td[data-col="word"]`))); near["key"] != first || near["k"] != 7.0 {
		t.Errorf("the link searched %v, and its first row is %q: want the row itself, k kept", near, first)
	}
	b.checkMsgs("search near a result")

	// A bad where: the error and its position under the box.
	b.do("bad where", chromedp.SetValue(chromedp.ID("where"), "rank <"), chromedp.Click(chromedp.ID("run")),
		chromedp.WaitVisible(chromedp.ID("where-error")))
	msg := run(b, "where error", chromedp.TextContent(chromedp.ID("where-error")))
	if !strings.Contains(msg, "filter_syntax") || !strings.Contains(msg, "position 7") {
		t.Errorf("where error %q, want filter_syntax at position 7", msg)
	}
	if caret := run(b, "caret", chromedp.TextContent(chromedp.ID("where-caret"))); caret != "rank <\n      ^" {
		t.Errorf("caret %q, want the ^ under position 7", caret)
	}
	if got := run(b, "focus", chromedp.Evaluate[string](`document.activeElement.id + ' ' + document.activeElement.getAttribute('aria-invalid')`)); got != "where true" {
		t.Errorf("after a bad where the focus is on %q, want the invalid where box", got)
	}
	b.checkMsgs("bad where", http.StatusBadRequest)
	b.shoot("console-search-where-error")

	// Index page: metadata, snapshot history, calibration chart, caches.
	b.do("index page", chromedp.Evaluate[chromedp.Void](`location.hash = '#/indexes/words'`),
		chromedp.WaitVisible(chromedp.CSS("#snapshots tbody tr")),
		chromedp.WaitVisible(chromedp.CSS("#calibration-chart circle")),
		chromedp.WaitVisible(chromedp.CSS("#recall-picks tbody tr")),
		chromedp.WaitVisible(chromedp.CSS("#cache-rates tbody tr")))
	snaps := run(b, "snapshots", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#snapshots tbody tr')).map(tr => tr.textContent)`))
	if len(snaps) != 2 || !strings.Contains(snaps[0], "optimize") || !strings.Contains(snaps[0], "current") || !strings.Contains(snaps[1], "create") {
		t.Errorf("snapshot rows %q, want 2 (optimize, current; create)", snaps)
	}
	if n := run(b, "picks", chromedp.Evaluate[int](`document.querySelectorAll('#recall-picks tbody tr').length`)); n != len(server.DefaultCalibrationTargets) {
		t.Errorf("%d recall settings, want %d", n, len(server.DefaultCalibrationTargets))
	}
	b.checkMsgs("index page")
	b.shoot("console-index")
	b.do("chart", chromedp.Evaluate[chromedp.Void](`document.querySelector('#calibration').previousElementSibling.scrollIntoView()`))
	png := run(b, "screenshot", chromedp.CaptureScreenshot())
	if err := os.WriteFile(filepath.Join(b.shots, "console-index-calibration.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}

	// Server page: rates need two reads of /metrics; searches run
	// meanwhile, so that the screenshot shows some traffic.
	stop := make(chan struct{})
	load := make(chan struct{})
	go func() {
		defer close(load)
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if resp, err := http.Post(url+"/v1/indexes/words/search", "application/json", strings.NewReader(`{"key": "queen", "k": 10}`)); err == nil {
				resp.Body.Close()
			}
		}
	}()
	b.do("server page", chromedp.Click(chromedp.CSS(`a[data-nav="server"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#throughput[data-ready="true"]`)),
		chromedp.WaitVisible(chromedp.CSS("#latency tbody tr")), chromedp.WaitVisible(chromedp.ID("memory")))
	close(stop)
	<-load
	lat := run(b, "latency", chromedp.TextContent(chromedp.ID("latency")))
	if !strings.Contains(lat, "/v1/indexes/{name}/search") {
		t.Errorf("latency table %q has no search route", lat)
	}
	if errs := run(b, "errors", chromedp.TextContent(chromedp.ID("errors"))); !strings.Contains(errs, "400") {
		t.Errorf("errors table %q lacks the bad where's 400", errs)
	}
	b.checkMsgs("server page")
	b.shoot("console-server")
	t.Logf("screenshots in %s", b.shots)
}

// sameRowsAsAPI reads the result table and the request the console shows
// (its curl line), sends that request to the API and checks that the
// table has the API's rows, column by column. It returns the request.
func (b *browser) sameRowsAsAPI(url string) map[string]any {
	b.t.Helper()
	curl := run(b, "request", chromedp.TextContent(chromedp.ID("request")))
	i, j := strings.Index(curl, "-d '"), strings.LastIndex(curl, "'")
	if i < 0 || j <= i+4 {
		b.t.Fatalf("no body in the console's curl line %q", curl)
	}
	raw := curl[i+4 : j]
	var body map[string]any
	if err := json.Unmarshal([]byte(raw), &body); err != nil {
		b.t.Fatalf("the console's request %q: %v", raw, err)
	}
	resp, err := http.Post(url+"/v1/indexes/words/search", "application/json", bytes.NewReader([]byte(raw)))
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	var ans struct {
		Columns []string                       `json:"columns"`
		Results [][]map[string]json.RawMessage `json:"results"`
	}
	if resp.StatusCode != http.StatusOK {
		b.t.Fatalf("the API answered %d to the console's request %s", resp.StatusCode, raw)
	}
	if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil {
		b.t.Fatal(err)
	}
	shown := run(b, "result rows", chromedp.Evaluate[[]map[string]string](
		`Array.from(document.querySelectorAll('#result-rows tbody tr')).map(tr => Object.fromEntries(Array.from(tr.querySelectorAll('td[data-col]')).map(td => [td.dataset.col, td.textContent])))`))
	want := ans.Results[0]
	if len(shown) != len(want) || len(want) == 0 {
		b.t.Fatalf("the console shows %d rows, the API answers %d", len(shown), len(want))
	}
	for r := range want {
		for _, c := range ans.Columns {
			got, v := shown[r][c], want[r][c]
			var f float64
			if err := json.Unmarshal(v, &f); err == nil {
				if g, err := parseFloat(got); err != nil || g != f && math.Abs(g-f) > 1e-12*math.Abs(f) {
					b.t.Errorf("row %d %s: console %q, API %s", r, c, got, v)
				}
				continue
			}
			var s string
			if err := json.Unmarshal(v, &s); err != nil || got != s {
				b.t.Errorf("row %d %s: console %q, API %s", r, c, got, v)
			}
		}
	}
	return body
}

func parseFloat(s string) (float64, error) {
	var f float64
	_, err := fmt.Sscan(strings.ReplaceAll(s, ",", ""), &f)
	return f, err
}

// TestConsoleBrowserToken: against a server with a token the console asks
// for it, refuses a wrong one, works after the right one, and keeps it in
// sessionStorage only (no localStorage, no cookie).
func TestConsoleBrowserToken(t *testing.T) {
	chromium(t)
	env := newLocalEnv(t)
	buildGlove(t, env, "words", "lvq8")
	tok, err := serving.NewToken("console-secret")
	if err != nil {
		t.Fatal(err)
	}
	_, url := startServer(t, env, server.Config{Token: tok})
	resp, err := http.Get(url + "/v1/indexes")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("GET /v1/indexes without the token: %d, want 401", resp.StatusCode)
	}
	b := newBrowser(t, url)
	b.do("viewport", chromedp.EmulateViewport(1280, 800))
	b.do("token prompt", chromedp.Navigate(url+"/console/"), chromedp.WaitVisible(chromedp.ID("token-form")))
	if n := run(b, "list", chromedp.Evaluate[int](`document.querySelectorAll('#index-list').length`)); n != 0 {
		t.Error("the index list shows without the token")
	}
	b.checkMsgs("token prompt", http.StatusUnauthorized)
	b.shoot("console-token")

	b.do("wrong token", chromedp.SendKeys(chromedp.ID("token"), "not-the-token\r"), chromedp.WaitVisible(chromedp.ID("token-error")))
	b.checkMsgs("wrong token", http.StatusUnauthorized)

	b.do("right token", chromedp.SendKeys(chromedp.ID("token"), "console-secret\r"), chromedp.WaitVisible(chromedp.CSS("#index-list tbody tr")))
	b.do("server page", chromedp.Click(chromedp.CSS(`a[data-nav="server"]`)), chromedp.WaitVisible(chromedp.CSS("#latency tbody tr")))
	b.checkMsgs("with the token")
	store := run(b, "storage", chromedp.Evaluate[string](`sessionStorage.getItem('parqdb.token') + ' ' + localStorage.length + ' ' + JSON.stringify(document.cookie)`))
	if store != `console-secret 0 ""` {
		t.Errorf("storage %q, want the token in sessionStorage only", store)
	}
	cookies, err := chromedp.Call(b.ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{url}})
	if err != nil {
		t.Fatal(err)
	}
	if len(cookies.Cookies) != 0 {
		t.Errorf("cookies %v, want none", cookies.Cookies)
	}

	b.do("forget", chromedp.Click(chromedp.ID("forget-token")), chromedp.WaitVisible(chromedp.ID("token-form")))
	if got := run(b, "storage", chromedp.Evaluate[bool](`sessionStorage.getItem('parqdb.token') === null`)); !got {
		t.Error("Forget token left the token in sessionStorage")
	}
	b.checkMsgs("forget", http.StatusUnauthorized)
}
