package server_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/server"
	"github.com/parqdb/parqdb/server/serving"
)

// TestSearchRecall: "recall" gives the answer of query.Options.Recall;
// the first such request calibrates the snapshot and stores the result.
func TestSearchRecall(t *testing.T) {
	f := newFixture(t, server.Config{})
	ctx := context.Background()
	status, m := f.post(t, "/v1/indexes/words/search", map[string]any{"vector": vec64(f.king), "recall": 0.95, "columns": []string{"word"}})
	if status != http.StatusOK {
		t.Fatalf("status %d: %v", status, m)
	}
	ix, err := query.Open(ctx, f.env, "words", query.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	md, _ := ix.Metadata()
	if c, err := query.ReadCalibration(ctx, f.env.Warehouse, md.IndexUUID, ix.Snapshot()); err != nil || c == nil {
		t.Fatalf("the server stored no calibration: %v, %v", c, err)
	}
	want, err := ix.Search(ctx, f.king, query.Options{K: 10, Recall: 0.95, Columns: []string{"word"}})
	if err != nil {
		t.Fatal(err)
	}
	sameAsQuery(t, rowsOf(t, m, 0), want)
	p, _, err := ix.RecallSetting(ctx, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if p.NProbe == query.DefaultNProbe && p.Refine == 0 {
		t.Fatalf("recall 0.95 picked the default setting: the comparison cannot tell recall from the defaults")
	}
}

func TestSearchRecallErrors(t *testing.T) {
	f := newFixture(t, server.Config{Limits: serving.Limits{MaxNProbe: 2}})
	for _, tc := range []struct {
		name string
		body map[string]any
		code string
	}{
		{"zero", map[string]any{"vector": vec64(f.king), "recall": 0}, serving.CodeOutOfRange},
		{"above one", map[string]any{"vector": vec64(f.king), "recall": 1.2}, serving.CodeOutOfRange},
		{"negative", map[string]any{"vector": vec64(f.king), "recall": -0.5}, serving.CodeOutOfRange},
		{"with nprobe", map[string]any{"vector": vec64(f.king), "recall": 0.9, "nprobe": 2}, serving.CodeInvalidArgument},
		{"with refine", map[string]any{"vector": vec64(f.king), "recall": 0.9, "refine": 0}, serving.CodeInvalidArgument},
		{"above the server's nprobe limit", map[string]any{"vector": vec64(f.king), "recall": 0.99}, serving.CodeOutOfRange},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, m := f.post(t, "/v1/indexes/words/search", tc.body)
			if status != http.StatusBadRequest || errCode(m) != tc.code {
				t.Fatalf("status %d %v, want 400 %s", status, m, tc.code)
			}
		})
	}
}
