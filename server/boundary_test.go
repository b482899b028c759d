package server_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/parqdb/parqdb/server"
	"github.com/parqdb/parqdb/server/serving"
)

// TestNumericBoundaries sends every numeric request field at the edges of
// its range and of int64: a value past the maximum is 400 out_of_range
// (never a product that wrapped into a negative or zero time limit), a
// value past int64 is 400 invalid_argument, and the largest allowed value
// is accepted.
func TestNumericBoundaries(t *testing.T) {
	f := newFixture(t, server.Config{Limits: serving.Limits{MaxBatch: 4}})
	vec := string(must(json.Marshal(vec64(f.king))))
	maxMS := serving.DefaultLimits.Timeout.Milliseconds()
	for _, tc := range []struct {
		field, value string
		status       int
		code         string
	}{
		{"timeout_ms", "0", 400, "out_of_range"},
		{"timeout_ms", "-1", 400, "out_of_range"},
		{"timeout_ms", fmt.Sprint(maxMS), 200, ""},
		{"timeout_ms", fmt.Sprint(maxMS + 1), 400, "out_of_range"},
		{"timeout_ms", "9223372036855", 400, "out_of_range"},       // × 1 ms wraps to -2562047h
		{"timeout_ms", "4611686018427387904", 400, "out_of_range"}, // 2^62 × 1 ms wraps to 0
		{"timeout_ms", "9223372036854775807", 400, "out_of_range"},
		{"timeout_ms", "-9223372036854775808", 400, "out_of_range"},
		{"timeout_ms", "9223372036854775808", 400, "invalid_argument"},
		{"timeout_ms", "1e3", 400, "invalid_argument"},
		{"k", "9223372036854775807", 400, "out_of_range"},
		{"k", "-9223372036854775808", 400, "out_of_range"},
		{"k", "4294967297", 400, "out_of_range"}, // 2^32 + 1: not 1 after a narrowing
		{"k", "9223372036854775808", 400, "invalid_argument"},
		{"nprobe", "9223372036854775807", 400, "out_of_range"},
		{"nprobe", "4294967297", 400, "out_of_range"},
		{"refine", "9223372036854775807", 400, "out_of_range"},
		{"refine", "-9223372036854775808", 400, "out_of_range"},
		{"snapshot", "-1", 400, "out_of_range"},
		{"snapshot", "-9223372036854775808", 400, "out_of_range"},
		{"snapshot", "9223372036854775807", 404, "snapshot_not_found"},
	} {
		t.Run(tc.field+"="+tc.value, func(t *testing.T) {
			body := fmt.Sprintf(`{"vector": %s, %q: %s}`, vec, tc.field, tc.value)
			status, m := f.post(t, "/v1/indexes/words/search", body)
			if status != tc.status || errCode(m) != tc.code {
				t.Fatalf("got %d %q, want %d %q: %v", status, errCode(m), tc.status, tc.code, m)
			}
			if tc.status == 400 {
				if msg := fmt.Sprint(m["error"].(map[string]any)["message"]); !strings.Contains(msg, tc.field) {
					t.Errorf("message %q does not name %s", msg, tc.field)
				}
			}
		})
	}
}

// TestNullVectorElements: a null element of "vector" or "vectors" is 400
// invalid_argument naming its place (encoding/json would decode it as 0
// and answer 200).
func TestNullVectorElements(t *testing.T) {
	f := newFixture(t, server.Config{Limits: serving.Limits{MaxBatch: 4}})
	vec := string(must(json.Marshal(vec64(f.king))))
	// withNull is the query vector with element i null.
	withNull := func(i int) string {
		parts := make([]string, f.dim)
		for j, x := range f.king {
			parts[j] = fmt.Sprint(x)
		}
		parts[i] = "null"
		return "[" + strings.Join(parts, ", ") + "]"
	}
	for _, tc := range []struct{ body, msg string }{
		{`{"vector": ` + withNull(0) + `}`, "vector[0] is null"},
		{`{"k": 3, "vector": ` + withNull(f.dim-1) + `}`, fmt.Sprintf("vector[%d] is null", f.dim-1)},
		{`{"vectors": [` + vec + `, ` + withNull(7) + `]}`, "vectors[1][7] is null"},
		{`{"vectors": [` + vec + `, null]}`, "vectors[1] is null"},
		{`{"vector": [` + strings.Repeat("null, ", f.dim-1) + `null]}`, "vector[0] is null"},
	} {
		status, m := f.post(t, "/v1/indexes/words/search", tc.body)
		msg := fmt.Sprint(m["error"])
		if status != 400 || errCode(m) != "invalid_argument" || !strings.Contains(msg, tc.msg) {
			t.Errorf("%.80s…: got %d %v, want 400 invalid_argument with %q", tc.body, status, m, tc.msg)
		}
	}
	if status, m := f.post(t, "/v1/indexes/words/search", `{"vector": `+vec+`}`); status != 200 {
		t.Fatalf("the vector without nulls: %d %v", status, m)
	}
}

// TestDeadlineEveryEncoding sends the largest answer (100 vectors × k
// 1000, every column) with a 100 ms time limit as JSON and as Arrow: each
// is 504 timeout within the limit plus answerCeiling, and the time is
// logged (Arrow used to encode the whole answer first: 504 after about
// 1 s).
func TestDeadlineEveryEncoding(t *testing.T) {
	f := newFixture(t, server.Config{})
	vecs := make([][]float64, 100)
	for i := range vecs {
		v := vec64(f.king)
		v[i%len(v)] += float64(i) / 100
		vecs[i] = v
	}
	// nprobe 32 finds 1000 rows per query quickly: with warm caches the
	// time goes to joining and encoding the 100,000 rows.
	req := map[string]any{"vectors": vecs, "k": 1000, "nprobe": 32}
	if status, _, b := searchAs(t, f, string(must(json.Marshal(req))), server.ArrowStreamType); status != 200 {
		t.Fatalf("warm-up: %d %.200s", status, b)
	}
	req["timeout_ms"] = 100
	body := string(must(json.Marshal(req)))
	for _, accept := range []string{"", server.ArrowStreamType} {
		start := time.Now()
		status, _, b := searchAs(t, f, body, accept)
		took := time.Since(start)
		if status != 504 || !strings.Contains(string(b), `"timeout"`) {
			t.Errorf("Accept %q: %d %.200s; want 504 timeout", accept, status, b)
		}
		if took > 100*time.Millisecond+answerCeiling {
			t.Errorf("Accept %q: answered after %v; the limit is 100 ms", accept, took)
		}
		t.Logf("Accept %q: %d after %v: %.120s", accept, status, took, b)
	}
}
