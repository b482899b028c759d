package server_test

import (
	"strings"
	"testing"

	"github.com/parqdb/parqdb/server"
	"github.com/parqdb/parqdb/server/serving"
)

// TestStrictMembers: a request body is held to the metadata parser's
// rule: a field given twice (at any depth, however its name is escaped)
// or a name that is not exactly a field is refused, naming the field;
// encoding/json alone lets the last one win and matches names
// case-insensitively.
func TestStrictMembers(t *testing.T) {
	f := newFixture(t, server.Config{})
	for _, tc := range []struct {
		name, body string
		status     int
		msg        string // a fragment of the message
	}{
		{"valid", `{"key": "king", "k": 3}`, 200, ""},
		{"duplicate k", `{"key": "king", "k": 3, "k": 1000}`, 400, `field "k" is given more than once`},
		{"duplicate key", `{"key": "king", "key": "queen"}`, 400, `field "key" is given more than once`},
		{"duplicate through an escape", `{"key": "king", "k": 3, "\u006b": 4}`, 400, `field "k" is given more than once`},
		{"duplicate nested", `{"key": {"a": 1, "a": 2}}`, 400, `field "key.a" is given more than once`},
		{"duplicate in an array", `{"vectors": [[1]], "key": ["x", {"b": 1, "b": 1}]}`, 400, `field "key[1].b" is given more than once`},
		{"wrong case", `{"key": "king", "K": 3}`, 400, `unknown field "K": field names are case-sensitive; did you mean "k"?`},
		{"unknown", `{"key": "king", "topk": 3}`, 400, `unknown field "topk"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, m := f.post(t, "/v1/indexes/words/search", tc.body)
			if status != tc.status {
				t.Fatalf("got %d, want %d: %v", status, tc.status, m)
			}
			if tc.status == 200 {
				return
			}
			e := m["error"].(map[string]any)
			if e["code"] != serving.CodeInvalidArgument || !strings.Contains(e["message"].(string), tc.msg) {
				t.Fatalf("got %v, want invalid_argument mentioning %q", e, tc.msg)
			}
		})
	}
}
