package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/parqdb/parqdb/server"
)

// TestAnswersAcrossColumnLists: requests that alternate column lists on
// one snapshot (the server keeps the row encoder of the last list) get
// rows with exactly their columns, byte for byte the same rows each time
// a list comes back.
func TestAnswersAcrossColumnLists(t *testing.T) {
	f := newFixture(t, server.Config{})
	lists := [][]string{nil, {"word"}, {"rank", "word"}, nil, {"embedding"}, {"word"}, {"rank", "word"}, nil}
	first := map[string][]json.RawMessage{}
	for i, cols := range lists {
		body, _ := json.Marshal(map[string]any{"key": "king", "k": 5, "columns": cols})
		if cols == nil {
			body = []byte(`{"key": "king", "k": 5}`)
		}
		resp, err := http.Post(f.url+"/v1/indexes/words/search", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var ans struct {
			Columns []string
			Results [][]json.RawMessage
		}
		if err := json.Unmarshal(data, &ans); err != nil || resp.StatusCode != 200 || len(ans.Results) != 1 || len(ans.Results[0]) != 5 {
			t.Fatalf("request %d (%v): %d %v: %.300s", i, cols, resp.StatusCode, err, data)
		}
		want := append(slices.Clone(cols), "_distance")
		if cols == nil {
			want = ans.Columns
		}
		for j, row := range ans.Results[0] {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(row, &m); err != nil {
				t.Fatal(err)
			}
			var got []string
			for k := range m {
				got = append(got, k)
			}
			if slices.Sort(got); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
				t.Fatalf("request %d (%v) row %d: members %v, want %v", i, cols, j, got, want)
			}
		}
		key := strings.Join(cols, ",")
		if prev, ok := first[key]; !ok {
			first[key] = ans.Results[0]
		} else {
			for j := range prev {
				if !bytes.Equal(prev[j], ans.Results[0][j]) {
					t.Fatalf("request %d (%v) row %d:\n%s\nthe first time:\n%s", i, cols, j, ans.Results[0][j], prev[j])
				}
			}
		}
	}
	if len(first) != 4 {
		t.Fatalf("%d column lists answered", len(first))
	}
}
