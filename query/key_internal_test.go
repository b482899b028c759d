package query

import (
	"encoding/json"
	"testing"
)

// FuzzPlainJSONString: KeyTextsJSON's shortcut for a plain string gives
// what encoding/json decodes, and takes the plain strings it is for.
func FuzzPlainJSONString(f *testing.F) {
	for _, s := range []string{`"the"`, `""`, `"a b~"`, `"\u0041"`, `"a\"b"`, `"é"`, `"`, `"a"b"`, "\"\x01\"", `"x`, `x"`, `5`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := plainJSONString(b)
		if !ok {
			return
		}
		var want string
		if err := json.Unmarshal(b, &want); err != nil || got != want {
			t.Fatalf("%q: shortcut %q, encoding/json %q (%v)", b, got, want, err)
		}
	})
}

func TestPlainJSONString(t *testing.T) {
	for s, want := range map[string]bool{`"the"`: true, `""`: true, `"a b~<"`: true,
		`"\u0041"`: false, `"a\"b"`: false, `"é"`: false, `"`: false, "\"\x01\"": false, `5`: false} {
		if _, ok := plainJSONString([]byte(s)); ok != want {
			t.Errorf("%q: shortcut taken %v, want %v", s, ok, want)
		}
	}
}
