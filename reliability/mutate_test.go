package reliability_test

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// jsonLeaf is one scalar value of a JSON document: its byte span and kind.
type jsonLeaf struct {
	path       string // JSON pointer
	start, end int
	kind       jsontext.Kind
}

// jsonLeaves lists the scalar values (not the object names) of a JSON
// document in order.
func jsonLeaves(data []byte) ([]jsonLeaf, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	var leaves []jsonLeaf
	for {
		before := int(dec.InputOffset())
		tok, err := dec.ReadToken()
		if err == io.EOF {
			return leaves, nil
		}
		if err != nil {
			return nil, err
		}
		after := int(dec.InputOffset())
		k := tok.Kind()
		if k == '{' || k == '}' || k == '[' || k == ']' {
			continue
		}
		// A name is the token just read at an odd position of an object.
		if kind, n := dec.StackIndex(dec.StackDepth()); kind == '{' && n%2 == 1 {
			continue
		}
		start := before
		for start < after && strings.IndexByte(" \t\r\n,:", data[start]) >= 0 {
			start++
		}
		leaves = append(leaves, jsonLeaf{path: string(dec.StackPointer()), start: start, end: after, kind: k})
	}
}

// mutations returns the replacements tried for a scalar of raw form raw.
func mutations(l jsonLeaf, raw []byte) [][]byte {
	switch l.kind {
	case '0':
		return [][]byte{[]byte("0"), []byte("-1"), []byte("2147483648"), []byte("1e30")}
	case '"':
		return [][]byte{[]byte(`""`), []byte(`"../../etc/passwd"`), append(bytes.Clone(raw[:len(raw)-1]), 'x', '"')}
	case 't':
		return [][]byte{[]byte("false")}
	case 'f':
		return [][]byte{[]byte("true")}
	}
	return nil
}

// TestMutatedJSONFields extends the damaged-warehouse matrix from bytes to
// meaning: every JSON file of the warehouse (index metadata, centroid
// metadata, postings manifest, source-file list) gets one scalar value at
// a time replaced — numbers by 0, -1, 2^31 and 1e30, strings by "", a path
// out of the warehouse and a changed value, booleans flipped — so that the
// file still parses as JSON and often still validates, and verify, search
// and an incremental refresh plan run on it. None may panic or exit with
// anything but 0 or 1. PARQDB_MUTATIONS_PER_FILE bounds the cases per file
// (default 40, chosen by a fixed seed; "all" runs every one). It runs in
// parallel with the damaged-warehouse matrices (a fixture of its own).
func TestMutatedJSONFields(t *testing.T) {
	t.Parallel()
	fx := newDamageFixture(t, "")
	limit := envInt("PARQDB_MUTATIONS_PER_FILE", 40)
	if os.Getenv("PARQDB_MUTATIONS_PER_FILE") == "all" {
		limit = 1 << 30
	}
	commands := []matrixCommand{
		{name: "index verify", args: indexArgs("index", "verify", "v", "-q")},
		{name: "search --near-key", args: indexArgs("search", "v", "--near-key", "7", "-k", "3")},
		{name: "index refresh --dry-run, source appended", args: indexArgs("index", "refresh", "v", "--dry-run", "-q"), appended: true},
	}
	cases, runs, failures, caught := 0, 0, 0, 0
	for _, f := range fx.files {
		if !strings.HasSuffix(f, ".json") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(fx.pristine, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		leaves, err := jsonLeaves(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		type mutation struct {
			leaf jsonLeaf
			with []byte
		}
		var all []mutation
		for _, l := range leaves {
			for _, m := range mutations(l, data[l.start:l.end]) {
				if !bytes.Equal(m, data[l.start:l.end]) {
					all = append(all, mutation{l, m})
				}
			}
		}
		rng := rand.New(rand.NewPCG(uint64(len(data)), 11))
		rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		all = all[:min(len(all), limit)]
		for _, m := range all {
			cases++
			name := fmt.Sprintf("%s%s=%s", fileKind(f), m.leaf.path, m.with)
			t.Run(name, func(t *testing.T) {
				wh := fx.copy(t)
				mutated := append(append(append([]byte{}, data[:m.leaf.start]...), m.with...), data[m.leaf.end:]...)
				if err := os.WriteFile(filepath.Join(wh, filepath.FromSlash(f)), mutated, 0o644); err != nil {
					t.Fatal(err)
				}
				for _, c := range commands {
					runs++
					r := fx.run(t, c, wh)
					if c.name == "index verify" {
						if r.code == 1 {
							caught++
						} else {
							t.Logf("index verify passes with this mutation")
						}
					}
					if r.panicked() || (r.code != 0 && r.code != 1) {
						failures++
						t.Errorf("%s: exit %d\n%s", c.name, r.code, tail(r.output(), 1500))
					}
				}
			})
		}
	}
	t.Logf("mutated JSON fields: %d cases, %d command runs, %d failures; verify failed %d of the %d mutated warehouses",
		cases, runs, failures, caught, cases)
}
