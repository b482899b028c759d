package main

import (
	"bufio"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// npyFile is a version 1.0 .npy file with header dict hdr (padded as
// NumPy pads it) and body.
func npyFile(hdr string, body []byte) []byte {
	for (10+len(hdr)+1)%64 != 0 {
		hdr += " "
	}
	hdr += "\n"
	b := append([]byte(npyMagic+"\x01\x00"), byte(len(hdr)), byte(len(hdr)>>8))
	return append(append(b, hdr...), body...)
}

func f32s(xs ...float32) []byte {
	var b []byte
	for _, x := range xs {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

// TestNpyHeaders reads .npy files whose header is valid in NumPy's
// format, or wrong in one way each: the dtype, order and shape come from
// the dict's keys (not from a substring anywhere in it), and every error
// says what is wrong.
func TestNpyHeaders(t *testing.T) {
	four := f32s(1, 2, 3, 4)
	for _, tc := range []struct {
		name, hdr string
		body      []byte
		want      string // error text, or "" for [[1 2] [3 4]]
	}{
		{"numpy's", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", four, ""},
		{"any order, double quotes", `{"shape": (2,2), "fortran_order": False, "descr": "<f4"}`, four, ""},
		{"spaces and tabs", "{ 'descr' :\t'<f4' , 'fortran_order' : False , 'shape' : ( 2 , 2 , ) }", four, ""},
		{"float64", "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2), }",
			binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, math.Float64bits(1)), math.Float64bits(2)), ""},
		{"int64 with a float32 elsewhere", "{'descr': '<i8', 'x': '<f4', 'fortran_order': False, 'shape': (2, 2), }", four,
			`unknown key "x": a .npy header has exactly descr, fortran_order and shape`},
		{"int64", "{'descr': '<i8', 'fortran_order': False, 'shape': (1, 2), }", four, `dtype "<i8"; want '<f4'`},
		{"big-endian", "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 2), }", four, `dtype ">f4"`},
		{"descr in a string value", "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), '<f4': 1}", four, `unknown key "<f4"`},
		{"structured dtype", "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2, 2), }", four, "descr: want a quoted string"},
		{"fortran", "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", four, "Fortran order is not supported"},
		{"fortran as text", "{'descr': '<f4', 'fortran_order': 'False', 'shape': (2, 2), }", four, "fortran_order: want True or False"},
		{"Falsey", "{'descr': '<f4', 'fortran_order': Falsey, 'shape': (2, 2), }", four, "fortran_order: want True or False"},
		{"no shape", "{'descr': '<f4', 'fortran_order': False}", four, `key "shape" is missing`},
		{"twice", "{'descr': '<f4', 'descr': '<f8', 'fortran_order': False, 'shape': (2, 2)}", four, `key "descr" is given twice`},
		{"1-D", "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", four, "shape (4,) is 1-D; want a 2-D array"},
		{"3-D", "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 2), }", four, "shape (1, 2, 2) is 3-D"},
		{"scalar", "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", four, "shape () is 0-D"},
		{"parenthesized number", "{'descr': '<f4', 'fortran_order': False, 'shape': (4), }", four, "(n) is a number, not a tuple"},
		{"no vectors", "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 16), }", nil, "shape (0, 16) holds no vectors"},
		{"empty vectors", "{'descr': '<f4', 'fortran_order': False, 'shape': (16, 0), }", nil, "shape (16, 0) holds vectors of no values"},
		{"overflowing shape", "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }", four,
			"shape (4611686018427387904, 4) of <f4 needs more than 2^63 bytes; the file has 16 data bytes"},
		{"overflow by the item size", "{'descr': '<f8', 'fortran_order': False, 'shape': (1152921504606846976, 1), }", four, "needs more than 2^63 bytes"},
		{"dimension past int64", "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999, 2), }", four,
			"shape: dimension 99999999999999999999 is larger than any file"},
		{"negative", "{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 2), }", four, "shape: want a non-negative integer"},
		{"short body", "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }", four, "shape (3, 2) of <f4 needs 24 data bytes; the file has 16"},
		{"long body", "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), }", four, "needs 8 data bytes; the file has 16"},
		{"not a dict", "['descr', '<f4']", four, "want a dict literal"},
		{"trailing text", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2)} x", four, "unexpected text after the dict"},
		{"unterminated", "{'descr': '<f4", four, "unterminated string"},
		{"quote in a string", `{"descr": "<f4'", 'fortran_order': False, 'shape': (2, 2)}`, four, "descr: want a string without quotes"},
		{"no colon", "{'descr' '<f4'}", four, `want : after key "descr"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeNpy("q.npy", npyFile(tc.hdr, tc.body))
			if tc.want == "" {
				if err != nil || len(got) == 0 || got[0][1] != 2 {
					t.Fatalf("got %v, %v", got, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, %v; want an error with %q", got, err, tc.want)
			}
		})
	}
	for name, tc := range map[string]struct {
		data []byte
		want string
	}{
		"no magic":           {[]byte("NUMPY\x01\x00"), "not a .npy file"},
		"version 4":          {[]byte(npyMagic + "\x04\x00\x10\x00"), "format version 4.0; want 1.0, 2.0 or 3.0"},
		"no length":          {[]byte(npyMagic + "\x02\x00\x10"), "truncated: 9 bytes end before the header length"},
		"short header":       {[]byte(npyMagic + "\x01\x00\xff\x00{}"), "truncated header: 255 bytes declared, 2 present"},
		"version 2.0 header": {append([]byte(npyMagic+"\x02\x00\x07\x00\x00\x00{'a': 1"), four...), `unknown key "a"`},
	} {
		if _, err := decodeNpy("q.npy", tc.data); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want %q", name, err, tc.want)
		}
	}
}

// TestJSONLinesTooLong: a line past the scanner's bound names the line and
// what is wrong (it said "after query -1").
func TestJSONLinesTooLong(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range map[string]struct {
		before string
		want   string
	}{
		"first line": {"", "line 1 (query 0) is longer than 64 MiB"},
		"third line": {"[1, 2]\n\n", "line 3 (query 1) is longer than 64 MiB"},
	} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".jsonl")
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriter(f)
		w.WriteString(tc.before + "[")
		for range maxJSONLine / 4 {
			w.WriteString("1, 2")
		}
		w.WriteString("]\n")
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if _, err := readQueries(p, ""); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want %q", name, err, tc.want)
		}
	}
}

// FuzzNpyHeader parses arbitrary header text: no panic, and a header that
// parses, written back as NumPy writes it, parses to the same header.
func FuzzNpyHeader(f *testing.F) {
	for _, s := range []string{
		"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 50), }",
		`{"shape": (2,), "fortran_order": True, "descr": "<f8"}`,
		"{'descr': '<i8', 'x': '<f4', 'fortran_order': False, 'shape': (0, 16), }",
		"{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }",
		"{'descr': [('a', '<f4')], 'shape': ()}",
		`{"shape": (2,), "fortran_order": True, "descr": "_f8'"}`, // once parsed with a quote in descr
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := parseNpyHeader(s)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if strings.ContainsAny(h.descr, "'\"\\\n") {
			t.Fatalf("descr %q holds a quote, backslash or line break", h.descr)
		}
		order := "False"
		if h.fortran {
			order = "True"
		}
		again, err := parseNpyHeader("{'descr': '" + h.descr + "', 'fortran_order': " + order + ", 'shape': " + npyShape(h.shape) + ", }")
		if err != nil || again.descr != h.descr || again.fortran != h.fortran || !slices.Equal(again.shape, h.shape) {
			t.Fatalf("%q → %+v; written back → %+v, %v", s, h, again, err)
		}
		// A whole file with this header must fail cleanly or decode.
		if qs, err := decodeNpy("q.npy", npyFile(s, f32s(1, 2, 3, 4))); err == nil && (len(qs) == 0 || len(qs[0]) == 0) {
			t.Fatal("no vectors and no error")
		}
	})
}
