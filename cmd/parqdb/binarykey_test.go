package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// binRow is a source row whose keys are not text: id is BYTE_ARRAY with no
// string annotation, name is a STRING column whose bytes are not UTF-8.
type binRow struct {
	ID   []byte    `parquet:"id"`
	Name string    `parquet:"name"`
	Vec  []float32 `parquet:"vec,list"`
}

// binarySource writes 200 rows whose ids and names are 0xFF, 0xC3 (a lone
// UTF-8 lead byte) and the row number.
func binarySource(t *testing.T) string {
	t.Helper()
	rows := make([]binRow, 200)
	for i := range rows {
		v := make([]float32, 8)
		for j := range v {
			v[j] = float32(math.Sin(float64(i*8 + j)))
		}
		rows[i] = binRow{ID: []byte{0xff, 0xc3, byte(i)}, Name: fmt.Sprintf("\xc3%d\xff", i), Vec: v}
	}
	path := filepath.Join(t.TempDir(), "bin.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[binRow](f)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestBinaryKeyRoundTrip: JSON output gives binary and non-UTF-8 values as
// {"base64": …} (it gave the lossy U+FFFD text), and that form, fed back
// as `--near-key` or as the HTTP "key", finds the same row, for a binary
// key field and for a string key field holding invalid UTF-8.
func TestBinaryKeyRoundTrip(t *testing.T) {
	src := binarySource(t)
	wh := "--warehouse=" + filepath.Join(t.TempDir(), "wh")
	for _, ix := range []struct{ name, key string }{{"byid", "id"}, {"byname", "name"}} {
		if out, code := runCLI(t, wh, "index", "create", ix.name, "--source", src, "--vector-field", "vec",
			"--key-fields", ix.key, "--nlist", "4"); code != exitOK {
			t.Fatalf("index create %s: %d %s", ix.name, code, out)
		}
	}
	h, _ := startServe(t, wh, "--flight", "")
	for _, tc := range []struct {
		index, key string
		want       []byte // the bytes of row 7's key
	}{
		{"byid", "id", []byte{0xff, 0xc3, 7}},
		{"byname", "name", []byte("\xc37\xff")},
	} {
		t.Run(tc.index, func(t *testing.T) {
			form := fmt.Sprintf(`{"base64":"%s"}`, base64.StdEncoding.EncodeToString(tc.want))
			out, code := runCLI(t, wh, "search", tc.index, "--near-key", form, "-k", "3", "--format", "json")
			if code != exitOK {
				t.Fatalf("search --near-key %s: %d %s", form, code, out)
			}
			var cli struct {
				Results []map[string]json.RawMessage
			}
			if err := json.Unmarshal([]byte(out), &cli); err != nil || len(cli.Results) != 3 {
				t.Fatalf("%v: %s", err, out)
			}
			first := cli.Results[0]
			for _, col := range []string{"id", "name"} {
				var v struct{ Base64 string }
				if err := json.Unmarshal(first[col], &v); err != nil || v.Base64 == "" {
					t.Fatalf("column %s = %s, want {\"base64\": …}", col, first[col])
				}
			}
			if got := string(first[tc.key]); got != form {
				t.Fatalf("first row's %s = %s, want the key searched, %s", tc.key, got, form)
			}
			// Feed back what the output gave, for every row, over HTTP.
			for i, row := range cli.Results {
				body := fmt.Sprintf(`{"key": %s, "k": 1}`, row[tc.key])
				resp, err := http.Post("http://"+h+"/v1/indexes/"+tc.index+"/search", "application/json", bytes.NewReader([]byte(body)))
				if err != nil {
					t.Fatal(err)
				}
				data, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				var ans struct {
					Results [][]map[string]json.RawMessage
				}
				if resp.StatusCode != http.StatusOK || json.Unmarshal(data, &ans) != nil || len(ans.Results) != 1 || len(ans.Results[0]) != 1 {
					t.Fatalf("row %d: POST %s: %d %s", i, body, resp.StatusCode, data)
				}
				if got := string(ans.Results[0][0][tc.key]); got != string(row[tc.key]) {
					t.Fatalf("row %d: HTTP key %s found %s", i, row[tc.key], got)
				}
			}
		})
	}
	t.Run("bad forms", func(t *testing.T) {
		for _, body := range []string{`{"key": {"base64": "!!"}}`, `{"key": {"hex": "ff"}}`, `{"key": {"base64": 3}}`} {
			resp, err := http.Post("http://"+h+"/v1/indexes/byid/search", "application/json", bytes.NewReader([]byte(body)))
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest || !bytes.Contains(data, []byte("invalid_argument")) || !bytes.Contains(data, []byte("base64")) {
				t.Errorf("POST %s: %d %s, want 400 invalid_argument about base64", body, resp.StatusCode, data)
			}
		}
		if out, code := runCLI(t, wh, "search", "byid", "--near-key", `{"base64":"%%"}`); code == exitOK || !bytes.Contains([]byte(out), []byte("base64")) {
			t.Errorf("--near-key with bad base64: exit %d %s", code, out)
		}
	})
}
