package query_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/storage"
)

// TestKeyRowsTable: a build persists the key → row map as the key-rows
// table of a version-2 manifest, and the first join reads it with one
// warehouse request instead of scanning the source. An index whose
// manifest is version 1 (built before the table existed) still opens and
// joins, building the map from the source, with the same results.
func TestKeyRowsTable(t *testing.T) {
	ctx := context.Background()
	benv, qenv := localEnv(t)
	src := filepath.Join(t.TempDir(), "src.parquet")
	rows := synthRows(11, 0, 3000, 16)
	writeSynth(t, src, rows)
	res, err := indexer.Create(ctx, benv, indexer.Options{Name: "kr", Source: src, VectorField: "vec",
		KeyFields: []string{"id"}, NList: 20, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	mkey := postings.SnapshotLayout(res.Metadata.CurrentSnapshot()).Manifest()
	data, err := storage.ReadAll(ctx, benv.Warehouse, mkey)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte(`{"manifest-version":2,`)) {
		t.Fatalf("manifest does not start as version 2: %.60s", data)
	}
	man, err := postings.ParseManifest(data)
	if err != nil {
		t.Fatal(err)
	}
	if man.KeyRows == nil || man.KeyRows.Rows != int64(len(rows)) {
		t.Fatalf("key-rows entry %+v, want %d rows", man.KeyRows, len(rows))
	}
	opts := query.Options{K: 10, NProbe: 6, Refine: 2, Columns: []string{"id", "label"}}
	search := func(t *testing.T, wantSourceKeyScan bool) [][]query.Hit {
		ix, err := query.Open(ctx, qenv, "kr", query.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		wh0, src0 := ix.StorageStats()
		if err := ix.Warm(ctx, query.Options{K: 10, NProbe: 6, Columns: []string{"id"}}); err != nil {
			t.Fatal(err)
		}
		wh1, src1 := ix.StorageStats()
		if scanned := src1.Requests > src0.Requests; scanned != wantSourceKeyScan {
			t.Fatalf("building the key map sent %d source requests and %d warehouse requests; want a source scan: %v",
				src1.Requests-src0.Requests, wh1.Requests-wh0.Requests, wantSourceKeyScan)
		}
		if !wantSourceKeyScan && wh1.Requests-wh0.Requests != 1 {
			t.Fatalf("reading the key-rows table took %d warehouse requests, want 1", wh1.Requests-wh0.Requests)
		}
		var out [][]query.Hit
		for i := 0; i < 10; i++ {
			r, err := ix.Search(ctx, rows[i*251].Vec, opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Hits) == 0 || r.Hits[0].Row["id"] != rows[i*251].ID {
				t.Fatalf("query %d: first hit %+v, want id %d", i, r.Hits, rows[i*251].ID)
			}
			out = append(out, r.Hits)
		}
		return out
	}
	var v2 [][]query.Hit
	t.Run("version 2", func(t *testing.T) { v2 = search(t, false) })

	// The same index as a release before the key-rows table wrote it.
	man.KeyRows = nil
	old, err := man.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(old, []byte(`{"manifest-version":1,`)) {
		t.Fatalf("stripped manifest is not version 1: %.60s", old)
	}
	if err := storage.WriteAll(ctx, benv.Warehouse, mkey, old); err != nil {
		t.Fatal(err)
	}
	t.Run("version 1 fallback", func(t *testing.T) {
		v1 := search(t, true)
		for i := range v1 {
			if len(v1[i]) != len(v2[i]) {
				t.Fatalf("query %d: %d hits, %d with the key-rows table", i, len(v1[i]), len(v2[i]))
			}
			for j := range v1[i] {
				a, b := v1[i][j], v2[i][j]
				if !bytes.Equal(a.Key, b.Key) || a.Distance != b.Distance || a.Row["label"] != b.Row["label"] {
					t.Fatalf("query %d hit %d: %v %v %v, with the key-rows table %v %v %v", i, j, a.Key, a.Distance, a.Row["label"], b.Key, b.Distance, b.Row["label"])
				}
			}
		}
	})
}

// TestKeyRowsSourceChangedInPlace: the key-rows table maps keys to the
// rows of the build's source state. A source rewritten in place with the
// same size and time (so Open cannot tell) must not join the wrong rows:
// a key that moved to another row fails with ErrStale (refresh), a key no
// row has any more with ErrCorrupt (verify), as with a source-built map.
// The search asks for a payload column: a keys-only join answers from the
// postings and reads no source row, so it cannot see such a change.
func TestKeyRowsSourceChangedInPlace(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(rows []synthRow)
		want   error
		fix    string
	}{
		{"key moved", func(rows []synthRow) { rows[500].ID, rows[501].ID = rows[501].ID, rows[500].ID }, query.ErrStale, "parqdb index refresh inplace"},
		{"key gone", func(rows []synthRow) { rows[500].ID = 1_000_000 }, query.ErrCorrupt, "parqdb index verify inplace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			benv, qenv := localEnv(t)
			src := filepath.Join(t.TempDir(), "src.parquet")
			rows := synthRows(12, 0, 1000, 8)
			writeSynth(t, src, rows)
			if _, err := indexer.Create(ctx, benv, indexer.Options{Name: "inplace", Source: src, VectorField: "vec",
				KeyFields: []string{"id"}, NList: 8, Seed: 1}); err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(src)
			if err != nil {
				t.Fatal(err)
			}
			q := rows[500].Vec
			tc.change(rows)
			writeSynth(t, src, rows)
			if err := os.Chtimes(src, st.ModTime(), st.ModTime()); err != nil {
				t.Fatal(err)
			}
			if st2, err := os.Stat(src); err != nil || st2.Size() != st.Size() {
				t.Fatalf("the rewritten source must keep its size (%d): %v", st.Size(), err)
			}
			ix, err := query.Open(ctx, qenv, "inplace", query.OpenOptions{})
			if err != nil {
				t.Fatalf("open: %v (the change is meant to be invisible to Open)", err)
			}
			defer ix.Close()
			_, err = ix.Search(ctx, q, query.Options{K: 3, NProbe: 8, Columns: []string{"id", "label"}})
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.fix) {
				t.Fatalf("search error %v, want %v saying %q", err, tc.want, tc.fix)
			}
			// A join of many rows decodes the row group's columns whole
			// (joincols.go): it checks the keys too.
			_, err = ix.Search(ctx, q, query.Options{K: 200, NProbe: 8, Columns: []string{"label"}})
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.fix) {
				t.Fatalf("search of 200 rows: error %v, want %v saying %q", err, tc.want, tc.fix)
			}
		})
	}
}
