package server

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
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

// fastPathSeeds are bodies the fast search decoder accepts, then ones it
// must leave to the strict path.
var fastPathSeeds = []string{
	`{"key": "the", "k": 10}`, `{"k":10,"key":"x","nprobe":8,"refine":2}`, " \t{\r\n\"key\" : \"a b\" } \n",
	`{"key": "", "k": 0}`, `{"key": "x", "k": 999999999}`, `{"nprobe": 8}`,
	`{"key": "x", "k": 3, "k": 4}`, `{"key": "x", "K": 3}`, `{"key": "\u0074he"}`, `{"key": "é"}`,
	`{"key": "x", "k": 01}`, `{"key": "x", "k": 1e3}`, `{"key": "x", "k": 1.0}`, `{"key": "x", "k": -1}`,
	`{"key": "x", "k": 1000000000}`, `{"key": "x"} x`, `{"key": "x",}`, `{"key": "x" "k": 1}`, `{}`,
	`{"key": ["x"]}`, `{"key": 5}`, `{"vector": [1, 2]}`, `{"key": "x", "k": 3`, `{"key": "x}`, `["key"]`,
	"{\"key\": \"x\u0001\"}", `{"key": "x", "k": null}`, `{"key": "x", "keys_only": true}`,
}

// FuzzDecodeSearchFast: a body the fast search decoder accepts is one the
// strict path accepts with the same request; a body it declines leaves
// the request unchanged.
func FuzzDecodeSearchFast(f *testing.F) {
	for _, s := range fastPathSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkFastPath(t, body) })
}

func checkFastPath(t *testing.T, body []byte) bool {
	t.Helper()
	var fast SearchRequest
	if !decodeSearchFast(body, &fast) {
		if !reflect.DeepEqual(fast, SearchRequest{}) {
			t.Fatalf("%q: declined but changed the request to %+v", body, fast)
		}
		return false
	}
	var strict SearchRequest
	if err := decodeStrict(body, &strict); err != nil {
		t.Fatalf("%q: the fast path accepted what the strict path refuses: %v", body, err)
	}
	if !reflect.DeepEqual(fast, strict) {
		t.Fatalf("%q: fast path %s, strict path %s", body, reqString(fast), reqString(strict))
	}
	return true
}

func reqString(r SearchRequest) string {
	p := func(v *int) string {
		if v == nil {
			return "nil"
		}
		return strconv.Itoa(*v)
	}
	return fmt.Sprintf("key %q k %s nprobe %s refine %s (%+v)", r.Key, p(r.K), p(r.NProbe), p(r.Refine), r)
}

// TestDecodeSearchFastSeeds: the fast path takes the shapes it is for
// (the first six seeds) and declines the rest, agreeing with the strict
// path (checkFastPath).
func TestDecodeSearchFastSeeds(t *testing.T) {
	for i, s := range fastPathSeeds {
		if got, want := checkFastPath(t, []byte(s)), i < 6; got != want {
			t.Errorf("%q: fast path took it: %v, want %v", s, got, want)
		}
	}
}

// TestDecodeSearchFastRandom compares the two paths on random bodies
// built from the fast path's members (in random order, some twice, with
// random white space, names, strings and numbers near its edges).
func TestDecodeSearchFastRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	space := func() string { return pick("", "", " ", "\n", "\t ", "\r\n ") }
	str := func() string {
		var b strings.Builder
		b.WriteByte('"')
		for range rng.IntN(6) {
			if rng.IntN(10) > 0 {
				b.WriteString(pick("a", "Z", " ", "~", "/", "<", "'"))
			} else {
				b.WriteString(pick("\\\"", "\\n", "é", "\x7f", "\x01", "\\u0041"))
			}
		}
		b.WriteByte('"')
		return b.String()
	}
	num := func() string {
		if rng.IntN(4) > 0 {
			return pick("0", "7", "10", "999999999", strconv.Itoa(rng.IntN(1e9)))
		}
		return pick("08", "-1", "1.5", "2e1", "1000000000", "123456789012", "null", "true", `"3"`)
	}
	accepted := 0
	for range 20000 {
		var members []string
		for range rng.IntN(5) {
			name := pick(`"key"`, `"k"`, `"nprobe"`, `"refine"`)
			if rng.IntN(10) == 0 {
				name = pick(`"K"`, `"keys_only"`, `"\u006b"`, `"ke"`)
			}
			val := num()
			if name == `"key"` || rng.IntN(8) == 0 {
				val = str()
			}
			members = append(members, space()+name+space()+":"+space()+val+space())
		}
		body := space() + "{" + strings.Join(members, pick(",", ",", ",", ",", ",,", " ")) + "}" + space() + pick("", "", "", "", "", "x", "{}")
		if checkFastPath(t, []byte(body)) {
			accepted++
		}
	}
	if accepted < 1000 {
		t.Errorf("the fast path took %d of 20000 random bodies: too few to compare the paths", accepted)
	}
	t.Logf("fast path took %d of 20000 bodies", accepted)
}
