package server

import (
	"bytes"
	"errors"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// FuzzCheckMembers: no body panics checkMembers, and every body with a
// duplicate member name is refused.
func FuzzCheckMembers(f *testing.F) {
	for _, s := range []string{`{"key": "king", "k": 3}`, `{"k": 1, "k": 2}`, `{"key": {"a": 1, "a": 2}}`, `{"K": 1}`, `[1]`, `{`, `{"\u006b": 1, "k": 2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		err := checkMembers(body, &SearchRequest{})
		_, derr := jsontext.NewDecoder(bytes.NewReader(body)).ReadValue()
		if errors.Is(derr, jsontext.ErrDuplicateName) && err == nil {
			t.Fatalf("%q has a duplicate name (%v) but was accepted", body, derr)
		}
	})
}
