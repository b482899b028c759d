package indexer

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/parqdb/parqdb/internal/source"
	"github.com/parqdb/parqdb/internal/source/sourcetest"
)

// keyRow is one source row's key: tenant (string) and id (long).
type keyRow struct {
	tenant string
	id     int64
}

// keyRows returns n rows of tenant with ids first..first+n-1, then applies
// the patches (row index → id).
func keyRows(tenant string, first int64, n int, patch map[int]int64) []keyRow {
	out := make([]keyRow, n)
	for i := range out {
		out[i] = keyRow{tenant, first + int64(i)}
		if id, ok := patch[i]; ok {
			out[i].id = id
		}
	}
	return out
}

// writeKeyRows writes rows as a source file with columns tenant, id and a
// random 4-dimensional embedding.
func writeKeyRows(t *testing.T, path string, rows []keyRow) {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(len(rows)), 3))
	tab := sourcetest.Table{Fields: []sourcetest.Field{
		sourcetest.F("tenant", parquet.String()),
		sourcetest.F("id", parquet.Leaf(parquet.Int64Type)),
		sourcetest.F("embedding", sourcetest.VectorNode(sourcetest.List3, false, false)),
	}, RowGroupRows: 100}
	for _, r := range rows {
		c := float32(rng.IntN(4))
		vec := []any{c + float32(rng.NormFloat64()), c + float32(rng.NormFloat64()), float32(rng.NormFloat64()), float32(rng.NormFloat64())}
		tab.Rows = append(tab.Rows, []any{r.tenant, r.id, vec})
	}
	var buf bytes.Buffer
	if err := tab.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// warehouseKeys lists every warehouse object but the SQLite catalog.
func warehouseKeys(t *testing.T, env Env) []string {
	t.Helper()
	infos, err := env.Warehouse.List(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, in := range infos {
		if !strings.HasPrefix(in.Key, "catalog.db") {
			keys = append(keys, in.Key)
		}
	}
	slices.Sort(keys)
	return keys
}

// TestDuplicateKeysRefused builds and refreshes over sources whose keys
// repeat and checks that the build fails naming both rows and the key,
// that the catalog still points where it did, and that the warehouse holds
// exactly the files it held before.
func TestDuplicateKeysRefused(t *testing.T) {
	id := []string{"id"}
	composite := []string{"tenant", "id"}
	for _, tc := range []struct {
		name string
		keys []string
		// base is the source an index is created on first (nil: the case
		// is a create); files are written afterwards, then the operation
		// runs (Create when base is nil, else Refresh).
		base    map[string][]keyRow
		files   map[string][]keyRow
		action  string   // the action a dry-run refresh reports
		want    []string // substrings of the error; nil: the operation succeeds
		retrain bool
	}{
		{name: "create: same file", keys: id,
			files: map[string][]keyRow{"part-0.parquet": keyRows("a", 0, 300, map[int]int64{120: 999, 250: 999})},
			want:  []string{`file "part-0.parquet": row 250 (key id=999)`, `same key as row 120 of file "part-0.parquet"`}},
		{name: "create: two files", keys: id,
			files: map[string][]keyRow{
				"part-0.parquet": keyRows("a", 0, 300, nil),
				"part-1.parquet": keyRows("a", 300, 300, map[int]int64{7: 42}),
			},
			want: []string{`file "part-1.parquet": row 7 (key id=42)`, `same key as row 42 of file "part-0.parquet"`}},
		{name: "create: composite key", keys: composite,
			files: map[string][]keyRow{"part-0.parquet": append(keyRows("a", 0, 200, nil), keyRows("b", 0, 100, map[int]int64{60: 5})...)},
			want:  []string{`row 260 (key tenant="b", id=5)`, `same key as row 205 of file "part-0.parquet"`}},
		{name: "create: composite key, ids repeat across tenants", keys: composite,
			files: map[string][]keyRow{"part-0.parquet": append(keyRows("a", 0, 150, nil), keyRows("b", 0, 150, nil)...)}},
		{name: "incremental refresh: appended key already indexed", keys: id,
			base:   map[string][]keyRow{"part-0.parquet": keyRows("a", 0, 500, nil)},
			files:  map[string][]keyRow{"part-1.parquet": keyRows("a", 500, 50, map[int]int64{10: 123})},
			action: ActionIncremental,
			want:   []string{`file "part-1.parquet": row 10 (key id=123)`, `same key as row 123 of file "part-0.parquet", which the index already holds`}},
		{name: "incremental refresh: appended keys repeat", keys: id,
			base:   map[string][]keyRow{"part-0.parquet": keyRows("a", 0, 500, nil)},
			files:  map[string][]keyRow{"part-1.parquet": keyRows("a", 500, 50, map[int]int64{30: 505})},
			action: ActionIncremental,
			want:   []string{`file "part-1.parquet": row 30 (key id=505)`, `same key as row 5 of file "part-1.parquet"`}},
		{name: "incremental refresh: two appended files", keys: id,
			base: map[string][]keyRow{"part-0.parquet": keyRows("a", 0, 500, nil)},
			files: map[string][]keyRow{
				"part-1.parquet": keyRows("a", 500, 40, nil),
				"part-2.parquet": keyRows("a", 540, 40, map[int]int64{39: 520}),
			},
			action: ActionIncremental,
			want:   []string{`file "part-2.parquet": row 39 (key id=520)`, `same key as row 20 of file "part-1.parquet"`}},
		{name: "incremental refresh: composite key", keys: composite,
			base:   map[string][]keyRow{"part-0.parquet": keyRows("a", 0, 500, nil)},
			files:  map[string][]keyRow{"part-1.parquet": append(keyRows("b", 0, 40, nil), keyRow{"a", 77})},
			action: ActionIncremental,
			want:   []string{`row 40 (key tenant="a", id=77)`, `same key as row 77 of file "part-0.parquet", which the index already holds`}},
		{name: "incremental refresh: new keys", keys: id,
			base:   map[string][]keyRow{"part-0.parquet": keyRows("a", 0, 500, nil)},
			files:  map[string][]keyRow{"part-1.parquet": keyRows("a", 500, 50, nil)},
			action: ActionIncremental},
		{name: "full refresh: appended key already indexed", keys: id,
			base:   map[string][]keyRow{"part-0.parquet": keyRows("a", 0, 500, nil)},
			files:  map[string][]keyRow{"part-1.parquet": keyRows("a", 500, 300, map[int]int64{3: 77})},
			action: ActionRebuild,
			want:   []string{`file "part-1.parquet": row 3 (key id=77)`, `same key as row 77 of file "part-0.parquet"`}},
		{name: "full refresh: rewritten file", keys: id,
			base:   map[string][]keyRow{"part-0.parquet": keyRows("a", 0, 500, nil)},
			files:  map[string][]keyRow{"part-0.parquet": keyRows("a", 0, 500, map[int]int64{499: 0})},
			action: ActionRebuild,
			want:   []string{`file "part-0.parquet": row 499 (key id=0)`, `same key as row 0 of file "part-0.parquet"`}},
		{name: "retrain", keys: id, retrain: true,
			base:   map[string][]keyRow{"part-0.parquet": keyRows("a", 0, 500, nil)},
			files:  map[string][]keyRow{"part-1.parquet": keyRows("a", 500, 50, map[int]int64{49: 499})},
			action: ActionRebuild,
			want:   []string{`file "part-1.parquet": row 49 (key id=499)`, `same key as row 499 of file "part-0.parquet"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			env, dir := testEnv(t)
			src := filepath.Join(dir, "src")
			if err := os.MkdirAll(src, 0o755); err != nil {
				t.Fatal(err)
			}
			opts := Options{Name: "dup", Source: src, VectorField: "embedding", KeyFields: tc.keys, NList: 4}
			for name, rows := range tc.base {
				writeKeyRows(t, filepath.Join(src, name), rows)
			}
			var before string
			if tc.base != nil {
				if _, err := Create(ctx, env, opts); err != nil {
					t.Fatal(err)
				}
				e, err := env.Catalog.Load(ctx, "dup")
				if err != nil {
					t.Fatal(err)
				}
				before = e.MetadataLocation
			}
			filesBefore := warehouseKeys(t, env)
			for name, rows := range tc.files {
				writeKeyRows(t, filepath.Join(src, name), rows)
			}
			var err error
			if tc.base == nil {
				_, err = Create(ctx, env, opts)
			} else {
				r, derr := Refresh(ctx, env, "dup", RefreshOptions{DryRun: true, Retrain: tc.retrain})
				if derr != nil || r.Action != tc.action {
					t.Fatalf("dry run: %+v, %v; want action %s", r, derr, tc.action)
				}
				_, err = Refresh(ctx, env, "dup", RefreshOptions{Retrain: tc.retrain})
			}
			if tc.want == nil {
				if err != nil {
					t.Fatalf("unique keys refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("duplicate keys accepted")
			}
			if !errors.Is(err, source.ErrDuplicateKey) {
				t.Errorf("error %v is not ErrDuplicateKey", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if tc.base == nil {
				if names, _ := env.Catalog.List(ctx); len(names) != 0 {
					t.Errorf("catalog has %v after a failed build", names)
				}
			} else if e, _ := env.Catalog.Load(ctx, "dup"); e.MetadataLocation != before {
				t.Errorf("catalog moved from %s to %s", before, e.MetadataLocation)
			}
			if after := warehouseKeys(t, env); !slices.Equal(after, filesBefore) {
				t.Errorf("warehouse files changed:\nbefore %v\nafter  %v", filesBefore, after)
			}
		})
	}
}
