package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// cliIndex builds the GloVe sample as index "words" in a fresh local
// warehouse through the CLI and returns the warehouse flag.
func cliIndex(t *testing.T) string {
	t.Helper()
	wh := "--warehouse=" + filepath.Join(t.TempDir(), "wh")
	if out, code := runCLI(t, wh, "index", "create", "words", "--source", "../../examples/glove/glove-10k.parquet",
		"--vector-field", "embedding", "--key-fields", "word", "--metric", "cosine", "--nlist", "64"); code != exitOK {
		t.Fatalf("index create: %d %s", code, out)
	}
	return wh
}

// startServe runs `parqdb serve` in this process until the test ends and
// returns its HTTP and Flight addresses.
func startServe(t *testing.T, args ...string) (string, string) {
	t.Helper()
	type addrs struct{ h, f string }
	ready := make(chan addrs, 1)
	serveReady = func(h, f string) { ready <- addrs{h, f} }
	t.Cleanup(func() { serveReady = nil })
	ctx, cancel := context.WithCancel(context.Background())
	root, _ := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"serve", "--log-level", "warn", "--listen", "127.0.0.1:0"}, args...))
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	select {
	case a := <-ready:
		return a.h, a.f
	case err := <-done:
		t.Fatalf("serve exited: %v %s", err, out.String())
	case <-time.After(2 * time.Minute):
		t.Fatal("serve did not start")
	}
	return "", ""
}

// TestServeEqualsSearch: the HTTP API answers exactly what `parqdb search
// --format json` prints, source columns and _distance included.
func TestServeEqualsSearch(t *testing.T) {
	wh := cliIndex(t)
	h, _ := startServe(t, wh, "--flight", "")
	king := nearVector(t, wh, "king")
	for _, tc := range []struct {
		name string
		cli  []string
		body map[string]any
	}{
		{"near key", []string{"--near-key", "king", "-k", "10"}, map[string]any{"key": "king", "k": 10}},
		{"vector with options", []string{"--vector", king, "-k", "7", "--nprobe", "16", "--refine", "3", "--columns", "rank,word"},
			map[string]any{"vector": json.RawMessage(king), "k": 7, "nprobe": 16, "refine": 3, "columns": []string{"rank", "word"}}},
		{"where, lists", []string{"--near-key", "king", "-k", "10", "--where", "rank > 2000"}, map[string]any{"key": "king", "k": 10, "where": "rank > 2000"}},
		{"where, exact", []string{"--vector", king, "-k", "5", "--where", "word LIKE 'qu%' AND rank < 9000"},
			map[string]any{"vector": json.RawMessage(king), "k": 5, "where": "word LIKE 'qu%' AND rank < 9000"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, code := runCLI(t, append([]string{wh, "search", "words", "--format", "json"}, tc.cli...)...)
			if code != exitOK {
				t.Fatalf("search: %d %s", code, out)
			}
			var cli struct{ Results []json.RawMessage }
			if err := json.Unmarshal([]byte(out), &cli); err != nil {
				t.Fatal(err)
			}
			body, _ := json.Marshal(tc.body)
			resp, err := http.Post("http://"+h+"/v1/indexes/words/search", "application/json", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("HTTP %d: %s", resp.StatusCode, data)
			}
			var api struct{ Results [][]json.RawMessage }
			if err := json.Unmarshal(data, &api); err != nil {
				t.Fatal(err)
			}
			if len(api.Results) != 1 || len(api.Results[0]) != len(cli.Results) || len(cli.Results) == 0 {
				t.Fatalf("HTTP gives %d rows, CLI %d", len(api.Results[0]), len(cli.Results))
			}
			for i := range cli.Results {
				if !bytes.Equal(api.Results[0][i], cli.Results[i]) {
					t.Fatalf("row %d:\nHTTP %s\nCLI  %s", i, api.Results[0][i], cli.Results[i])
				}
			}
		})
	}
}

// nearVector returns the source vector of a key's row as a JSON array.
func nearVector(t *testing.T, wh, key string) string {
	t.Helper()
	out, code := runCLI(t, wh, "search", "words", "--near-key", key, "-k", "1", "--columns", "embedding", "--format", "json")
	if code != exitOK {
		t.Fatalf("search: %s", out)
	}
	var r struct {
		Results []struct {
			Embedding []float64 `json:"embedding"`
		}
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Results) != 1 {
		t.Fatalf("%v: %s", err, out)
	}
	b, _ := json.Marshal(r.Results[0].Embedding)
	return string(b)
}

func TestServeRefusesOpenListenWithoutToken(t *testing.T) {
	out, code := runCLI(t, "--warehouse", t.TempDir(), "serve", "--listen", "0.0.0.0:0", "--flight", "")
	if code != exitUsage {
		t.Fatalf("exit %d: %s", code, out)
	}
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := runCLI(t, "--warehouse", t.TempDir(), "serve", "--token-file", tok); code != exitUsage {
		t.Fatalf("empty token file: exit %d: %s", code, out)
	}
}

// TestServeLoadFlags: the admission and row-limit flags are range-checked
// as usage errors that name the flag.
func TestServeLoadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--max-concurrent", "0"},
		{"--max-concurrent", "-3"},
		{"--max-queue", "-2"},
		{"--max-rows", "0"},
	} {
		out, code := runCLI(t, append([]string{"--warehouse", t.TempDir(), "serve", "--flight", ""}, args...)...)
		if code != exitUsage || !bytes.Contains([]byte(out), []byte(args[0])) {
			t.Errorf("serve %v: exit %d %s; want a usage error naming %s", args, code, out, args[0])
		}
	}
}
