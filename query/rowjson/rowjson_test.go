package rowjson_test

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/parqdb/parqdb/query/rowjson"
)

// TestRowLossless: text that is valid UTF-8 stays a JSON string;
// binary values and text that is not UTF-8 become {"base64": …}, which
// ParseBinary turns back into the same bytes (rows used to print
// them as strings, with U+FFFD in place of every invalid byte).
func TestRowLossless(t *testing.T) {
	row := map[string]any{
		"text":   "king ü",
		"bad":    "a\xffb\xc3",
		"bin":    []byte{0, 0xff, 'x'},
		"empty":  []byte{},
		"list":   []any{[]byte{0xfe}, "ok"},
		"group":  map[string]any{"b": []byte("\xc3")},
		"nan":    float32(math.NaN()),
		"number": int64(3),
	}
	cols := []string{"text", "bad", "bin", "empty", "list", "group", "nan", "number", "_distance"}
	data, err := json.Marshal(rowjson.Row{Columns: cols, Values: row, Distance: 0.25})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"text":"king ü","bad":{"base64":"Yf9iww=="},"bin":{"base64":"AP94"},"empty":{"base64":""},` +
		`"list":[{"base64":"/g=="},"ok"],"group":{"b":{"base64":"ww=="}},"nan":"NaN","number":3,"_distance":0.25}`
	if string(data) != want {
		t.Fatalf("got  %s\nwant %s", data, want)
	}
	var back map[string]json.RawMessage
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	for col, orig := range map[string][]byte{"bad": []byte("a\xffb\xc3"), "bin": {0, 0xff, 'x'}, "empty": {}} {
		b, ok, err := rowjson.ParseBinary(string(back[col]))
		if !ok || err != nil || !bytes.Equal(b, orig) {
			t.Errorf("column %s: ParseBinary(%s) = %q, %v, %v; want %q", col, back[col], b, ok, err, orig)
		}
	}
}

func TestParseBinary(t *testing.T) {
	for _, tc := range []struct {
		text string
		ok   bool
		want string // bytes, or a fragment of the error after "err:"
	}{
		{"king", false, ""},
		{"{x}", false, ""},           // a string key that starts with "{"
		{`{"name": "a"}`, false, ""}, // not the form: an ordinary text
		{`{"base64": "AP94"}`, true, "\x00\xffx"},
		{` { "base64" : "" } `, true, ""},
		{`{"base64": "!!"}`, true, "err:not standard base64"},
		{`{"base64": "AP9"}`, true, "err:not standard base64"}, // no padding
		{`{"base64": 3}`, true, "err:is not {"},
		{`{"base64": "AA==", "x": 1}`, true, "err:is not {"},
		{`{"base64": "AA=="} trailing`, true, "err:is not {"},
		{`{"base64": "AA=="`, true, "err:is not {"},
	} {
		b, ok, err := rowjson.ParseBinary(tc.text)
		if ok != tc.ok {
			t.Errorf("ParseBinary(%s): ok = %v, want %v", tc.text, ok, tc.ok)
			continue
		}
		if frag, isErr := strings.CutPrefix(tc.want, "err:"); isErr {
			if err == nil || !strings.Contains(err.Error(), frag) {
				t.Errorf("ParseBinary(%s) = %q, %v; want an error with %q", tc.text, b, err, frag)
			}
		} else if err != nil || string(b) != tc.want {
			t.Errorf("ParseBinary(%s) = %q, %v; want %q", tc.text, b, err, tc.want)
		}
	}
}

// FuzzParseBinary: no input panics, and the form NewBinary writes
// reads back to the same bytes.
func FuzzParseBinary(f *testing.F) {
	for _, s := range []string{`{"base64": "AP94"}`, "{x}", `{"base64": 3}`, "", "{", `{"base64":"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, _, _ = rowjson.ParseBinary(s)
		enc, err := json.Marshal(rowjson.NewBinary([]byte(s)))
		if err != nil {
			t.Fatal(err)
		}
		b, ok, err := rowjson.ParseBinary(string(enc))
		if !ok || err != nil || string(b) != s {
			t.Fatalf("round trip of %q via %s: %q, %v, %v", s, enc, b, ok, err)
		}
	})
}

func TestNullElement(t *testing.T) {
	for _, tc := range []struct {
		text string
		want string // ElementPath of the result; "" for none
	}{
		{`[null, 0]`, "[0]"},
		{`[0, 1, null]`, "[2]"},
		{`[[1, 2], [3, null]]`, "[1][1]"},
		{`[[1, 2], null]`, "[1]"},
		{`[{"a": null}, null]`, "[1]"},
		{`[1, 2]`, ""},
		{`null`, ""},
		{`{"a": null}`, ""},
		{`[1, x, null]`, ""}, // not JSON: the decoder reports it
		{`[ 1 ,	null ]`, "[1]"},
	} {
		if got := rowjson.ElementPath(rowjson.NullElement([]byte(tc.text))); got != tc.want {
			t.Errorf("NullElement(%s) = %q, want %q", tc.text, got, tc.want)
		}
	}
}
