package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/parqdb/parqdb/server"
)

// searchAs posts body with an Accept header and returns the status, the
// Content-Type and the body.
func searchAs(t *testing.T, f *fixture, body, accept string) (int, string, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.url+"/v1/indexes/words/search", bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), b
}

// arrowRows reads an Arrow IPC stream with arrow-go's reader (not the
// server's writer) and returns its column names, schema metadata and rows
// as JSON texts per column.
func arrowRows(t *testing.T, b []byte) ([]string, map[string]string, []map[string]string) {
	t.Helper()
	rd, err := ipc.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not an Arrow stream: %v", err)
	}
	defer rd.Release()
	var names []string
	for _, f := range rd.Schema().Fields() {
		names = append(names, f.Name)
	}
	md := map[string]string{}
	for i, k := range rd.Schema().Metadata().Keys() {
		md[k] = rd.Schema().Metadata().Values()[i]
	}
	var rows []map[string]string
	for rd.Next() {
		rec := rd.RecordBatch()
		for r := 0; r < int(rec.NumRows()); r++ {
			m := map[string]string{}
			for c, n := range names {
				j, _ := json.Marshal(rec.Column(c).GetOneForMarshal(r))
				m[n] = string(j)
			}
			rows = append(rows, m)
		}
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	return names, md, rows
}

// TestSearchArrow: with Accept: application/vnd.apache.arrow.stream a
// single and a batch search answer an Arrow IPC stream holding the JSON
// answer's rows (values, order, _distance), each tagged with its query
// vector's position; JSON stays the default, and errors stay JSON.
func TestSearchArrow(t *testing.T) {
	f := newFixture(t, server.Config{})
	vec, _ := json.Marshal(f.king)
	other := append([]float32(nil), f.king...)
	other[0] += 0.5
	vec2, _ := json.Marshal(other)
	for _, tc := range []struct{ name, body string }{
		{"single", `{"vector": ` + string(vec) + `, "k": 4, "columns": ["word", "rank"]}`},
		{"key, every column", `{"key": "king", "k": 3}`},
		{"batch", `{"vectors": [` + string(vec) + `, ` + string(vec2) + `], "k": 3, "columns": ["rank", "word"]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, ctype, jb := searchAs(t, f, tc.body, "")
			if code != 200 || ctype != "application/json" {
				t.Fatalf("default: %d %s %s", code, ctype, jb)
			}
			var want server.SearchResponse
			var raw struct {
				Results [][]map[string]json.RawMessage
			}
			if err := json.Unmarshal(jb, &want); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(jb, &raw); err != nil {
				t.Fatal(err)
			}
			code, ctype, ab := searchAs(t, f, tc.body, "application/json;q=0.5, application/vnd.apache.arrow.stream")
			if code != 200 || ctype != server.ArrowStreamType {
				t.Fatalf("arrow: %d %s %s", code, ctype, ab)
			}
			names, md, rows := arrowRows(t, ab)
			if wantNames := append([]string{server.QueryField}, want.Columns...); fmtJSON(names) != fmtJSON(wantNames) {
				t.Fatalf("columns %v, want %v", names, wantNames)
			}
			if md["index"] != "words" || md["snapshot_id"] != strconv.FormatInt(want.SnapshotID, 10) {
				t.Errorf("metadata %v", md)
			}
			i := 0
			for q, res := range raw.Results {
				for _, wrow := range res {
					if i >= len(rows) {
						t.Fatalf("%d Arrow rows, want more", len(rows))
					}
					if rows[i][server.QueryField] != strconv.Itoa(q) {
						t.Errorf("row %d: _query %s, want %d", i, rows[i][server.QueryField], q)
					}
					for _, c := range want.Columns {
						if got, w := rows[i][c], string(wrow[c]); !sameJSON(got, w) {
							t.Errorf("row %d %s: %s, want %s", i, c, got, w)
						}
					}
					i++
				}
			}
			if i != len(rows) || i == 0 {
				t.Fatalf("%d Arrow rows, want %d", len(rows), i)
			}
		})
	}
	code, ctype, b := searchAs(t, f, `{"key": "no-such-word", "k": 3}`, server.ArrowStreamType)
	if code != 404 || ctype != "application/json" || !bytes.Contains(b, []byte("key_not_found")) {
		t.Errorf("error with Accept arrow: %d %s %s", code, ctype, b)
	}
	if code, ctype, _ := searchAs(t, f, `{"key": "king", "k": 3}`, "application/json, application/vnd.apache.arrow.stream;q=0.2"); code != 200 || ctype != "application/json" {
		t.Errorf("JSON preferred: %d %s", code, ctype)
	}
	// curl, where installed, as a second independent client.
	if _, err := exec.LookPath("curl"); err == nil {
		out, err := exec.Command("curl", "-sS", "-H", "Accept: "+server.ArrowStreamType, "-H", "Content-Type: application/json",
			"--data", `{"key": "king", "k": 2, "columns": ["word"]}`, f.url+"/v1/indexes/words/search").Output()
		if err != nil {
			t.Fatal(err)
		}
		_, _, rows := arrowRows(t, out)
		if len(rows) != 2 || rows[0]["word"] != `"king"` {
			t.Errorf("curl: %v", rows)
		}
	}
}

func fmtJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

// sameJSON compares two JSON texts as values (float32 distances print
// alike from both encoders, integers too).
func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return a == b
	}
	return fmtJSON(x) == fmtJSON(y)
}
