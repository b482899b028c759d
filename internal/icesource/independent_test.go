package icesource_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/linkedin/goavro/v2"
	"github.com/parquet-go/parquet-go"

	"github.com/parqdb/parqdb/internal/icesource"
	"github.com/parqdb/parqdb/internal/icesource/icetest"
)

// TestIndependentReader reads the tables the tests write with readers other
// than iceberg-go, against the Iceberg spec (format v2): the metadata JSON
// with encoding/json, the manifest lists and manifests with
// github.com/linkedin/goavro (iceberg-go writes Avro with twmb/avro), the
// data files with parquet-go. DuckDB's iceberg extension would be the
// natural independent reader, but DuckDB downloads it at run time and this
// network refuses that (docs/iceberg.md §5). The test checks that the
// files are real Iceberg, not a private dialect, and that what they say
// agrees with what the provider indexes.
func TestIndependentReader(t *testing.T) {
	l := icetest.NewLake(t, "lake", "sqlite", "local")
	l.Create("items", icetest.DocsSchema(), iceberg.Properties{table.WriteDeleteModeKey: table.WriteModeMergeOnRead})
	l.AppendRows(icetest.IDs(0, 300))
	l.AppendRows(icetest.IDs(300, 350))
	l.DeleteWhere(iceberg.EqualTo(iceberg.Reference("id"), int64(5)))
	l.EqualityDelete([]int64{10, 11, 320})

	md := readMetadataJSON(t, l.Tbl.MetadataLocation())
	if md.FormatVersion != 2 {
		t.Fatalf("format-version %d, want 2", md.FormatVersion)
	}
	if md.TableUUID != l.Tbl.Metadata().TableUUID().String() || md.Location == "" || md.LastColumnID != 4 {
		t.Fatalf("metadata: uuid %s location %q last-column-id %d", md.TableUUID, md.Location, md.LastColumnID)
	}
	var cur *snapshotJSON
	for i := range md.Snapshots {
		s := &md.Snapshots[i]
		if s.SequenceNumber <= 0 || s.SequenceNumber > md.LastSequenceNumber || s.ManifestList == "" || s.Summary["operation"] == "" {
			t.Fatalf("snapshot %+v breaks the spec's required fields", s)
		}
		if s.SnapshotID == md.CurrentSnapshotID {
			cur = s
		}
	}
	if cur == nil || len(md.Snapshots) != 4 {
		t.Fatalf("current-snapshot-id %d among %d snapshots", md.CurrentSnapshotID, len(md.Snapshots))
	}

	// Manifest list (spec "Manifest Lists"): field ids and content.
	lists := readAvro(t, cur.ManifestList, map[string]int{
		"manifest_path": 500, "manifest_length": 501, "partition_spec_id": 502, "content": 517,
		"sequence_number": 515, "min_sequence_number": 516, "added_snapshot_id": 503,
		"added_files_count": 504, "existing_files_count": 505, "deleted_files_count": 506,
		"added_rows_count": 512, "existing_rows_count": 513, "deleted_rows_count": 514,
	})
	live := map[string]int64{} // data file path → record_count
	var posDeletes int64
	deadPos := map[string][]int64{} // data file path → deleted positions, from the position delete files
	var eqIDs []int64               // ids the equality delete files delete
	for _, m := range lists {
		entries := readAvro(t, m["manifest_path"].(string), map[string]int{"status": 0, "snapshot_id": 1, "data_file": 2})
		for _, e := range entries {
			status := e["status"].(int32)
			if status == 2 { // DELETED entry
				continue
			}
			df := e["data_file"].(map[string]any)
			path, n := df["file_path"].(string), df["record_count"].(int64)
			if df["file_format"] != "PARQUET" {
				t.Fatalf("file %s format %v", path, df["file_format"])
			}
			switch df["content"].(int32) {
			case 0:
				live[path] = n
				checkParquet(t, path, n, df["file_size_in_bytes"].(int64))
			case 1:
				posDeletes += n
				// Spec "Position Delete Files": file_path (2147483546), pos (2147483545).
				for _, r := range readParquetRows(t, df["file_path"].(string), map[string]int{"file_path": 2147483546, "pos": 2147483545}) {
					deadPos[r["file_path"].(string)] = append(deadPos[r["file_path"].(string)], r["pos"].(int64))
				}
			case 2:
				// Spec "Equality Delete Files": equality_ids (135) names
				// the columns, here field id 1 (id).
				eqf, _ := df["equality_ids"].(map[string]any) // goavro's union {"array": [...]}
				if ids, _ := eqf["array"].([]any); len(ids) != 1 || ids[0] != int32(1) {
					t.Fatalf("equality delete %s: equality_ids %v, want [1]", path, df["equality_ids"])
				}
				for _, r := range readParquetRows(t, path, map[string]int{"id": 1}) {
					eqIDs = append(eqIDs, r["id"].(int64))
				}
			default:
				t.Fatalf("unexpected content %v", df["content"])
			}
		}
	}
	var rows int64
	for _, n := range live {
		rows += n
	}
	if len(live) != 2 || rows != 350 || posDeletes != 1 || len(eqIDs) != 3 {
		t.Fatalf("manifests: %d data files with %d rows, %d position deletes, %d equality deletes; want 2, 350, 1, 3", len(live), rows, posDeletes, len(eqIDs))
	}
	// The live rows by this reader: every data file's rows minus the
	// positions the position deletes name and the ids the equality deletes
	// name (both delete files are newer than every data file).
	ourLive := map[int64]bool{}
	wantDeleted := map[string][]int64{} // key → deleted positions
	for path := range live {
		dead := map[int64]bool{}
		for _, p := range deadPos[path] {
			dead[p] = true
		}
		for i, r := range readParquetRows(t, path, map[string]int{"id": 1}) {
			id := r["id"].(int64)
			if dead[int64(i)] || slices.Contains(eqIDs, id) {
				key := strings.TrimPrefix(localPath(path), localPath(md.Location)+"/")
				wantDeleted[key] = append(wantDeleted[key], int64(i))
				continue
			}
			ourLive[id] = true
		}
	}
	// iceberg-go, reading the same table, applies the deletes the same way.
	igLive := l.Live()
	if len(igLive) != len(ourLive) || len(ourLive) != 350-4 {
		t.Fatalf("iceberg-go reads %d live rows, this reader %d, want 346", len(igLive), len(ourLive))
	}
	for id := range igLive {
		if !ourLive[id] {
			t.Fatalf("iceberg-go reads id %d, which this reader finds deleted", id)
		}
	}
	// The provider resolves the current snapshot's deletes to the same
	// positions.
	ref0, err := icesource.ParseRef(l.Ref())
	if err != nil {
		t.Fatal(err)
	}
	cs, err := icesource.Resolve(context.Background(), ref0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs.Deleted) != len(wantDeleted) {
		t.Fatalf("provider: deletes in %d data files, want %d", len(cs.Deleted), len(wantDeleted))
	}
	for key, want := range wantDeleted {
		var got []int64
		if bm := cs.Deleted[key]; bm != nil {
			for _, p := range bm.ToArray() {
				got = append(got, int64(p))
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("provider: data file %s deleted positions %v, want %v", key, got, want)
		}
	}

	// The second snapshot (the append, no delete) is what the provider
	// indexes at that state: the same data files as the manifests list.
	second := md.Snapshots[1]
	ref, err := icesource.ParseRef(l.Ref())
	if err != nil {
		t.Fatal(err)
	}
	s, err := icesource.Resolve(context.Background(), ref, second.SnapshotID)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for path := range live {
		keys = append(keys, strings.TrimPrefix(localPath(path), localPath(md.Location)+"/"))
	}
	slices.Sort(keys)
	var got []string
	for _, f := range s.Files {
		got = append(got, f.Key)
	}
	if !slices.Equal(got, keys) {
		t.Fatalf("provider resolves %v, the manifests list %v", got, keys)
	}
}

type snapshotJSON struct {
	SnapshotID     int64             `json:"snapshot-id"`
	SequenceNumber int64             `json:"sequence-number"`
	TimestampMs    int64             `json:"timestamp-ms"`
	ManifestList   string            `json:"manifest-list"`
	Summary        map[string]string `json:"summary"`
	SchemaID       *int              `json:"schema-id"`
}

type metadataJSON struct {
	FormatVersion      int            `json:"format-version"`
	TableUUID          string         `json:"table-uuid"`
	Location           string         `json:"location"`
	LastSequenceNumber int64          `json:"last-sequence-number"`
	LastUpdatedMs      int64          `json:"last-updated-ms"`
	LastColumnID       int            `json:"last-column-id"`
	Schemas            []any          `json:"schemas"`
	CurrentSchemaID    *int           `json:"current-schema-id"`
	PartitionSpecs     []any          `json:"partition-specs"`
	DefaultSpecID      *int           `json:"default-spec-id"`
	LastPartitionID    *int           `json:"last-partition-id"`
	SortOrders         []any          `json:"sort-orders"`
	DefaultSortOrderID *int           `json:"default-sort-order-id"`
	CurrentSnapshotID  int64          `json:"current-snapshot-id"`
	Snapshots          []snapshotJSON `json:"snapshots"`
}

func localPath(uri string) string {
	if u, err := url.Parse(uri); err == nil && u.Scheme == "file" {
		return u.Path
	}
	return uri
}

// readMetadataJSON decodes a table metadata file and checks that every
// field the spec requires of format v2 is present.
func readMetadataJSON(t *testing.T, loc string) *metadataJSON {
	t.Helper()
	data, err := os.ReadFile(localPath(loc))
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"format-version", "table-uuid", "location", "last-sequence-number", "last-updated-ms",
		"last-column-id", "schemas", "current-schema-id", "partition-specs", "default-spec-id", "last-partition-id",
		"sort-orders", "default-sort-order-id"} {
		if _, ok := raw[k]; !ok {
			t.Fatalf("%s: required field %q missing", loc, k)
		}
	}
	var md metadataJSON
	if err := json.Unmarshal(data, &md); err != nil {
		t.Fatal(err)
	}
	return &md
}

// readAvro reads an Avro object container file with goavro and checks that
// its writer schema has the given top-level fields with the spec's field
// ids.
func readAvro(t *testing.T, loc string, fieldIDs map[string]int) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(localPath(loc))
	if err != nil {
		t.Fatal(err)
	}
	r, err := goavro.NewOCFReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", loc, err)
	}
	var schema struct {
		Fields []struct {
			Name    string `json:"name"`
			FieldID *int   `json:"field-id"`
		} `json:"fields"`
	}
	if err := json.Unmarshal([]byte(r.Codec().Schema()), &schema); err != nil {
		t.Fatalf("%s: schema: %v", loc, err)
	}
	ids := map[string]int{}
	for _, f := range schema.Fields {
		if f.FieldID != nil {
			ids[f.Name] = *f.FieldID
		}
	}
	for name, id := range fieldIDs {
		if got, ok := ids[name]; !ok || got != id {
			t.Fatalf("%s: field %s has field-id %v (present %v), the spec says %d", loc, name, got, ok, id)
		}
	}
	var out []map[string]any
	for r.Scan() {
		v, err := r.Read()
		if err != nil {
			t.Fatalf("%s: %v", loc, err)
		}
		rec, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%s: record %T", loc, v)
		}
		// goavro gives a union value as {"type": value}: unwrap them.
		for k, x := range rec {
			if u, ok := x.(map[string]any); ok && len(u) == 1 {
				for _, inner := range u {
					if _, isRec := inner.(map[string]any); isRec || k != "data_file" {
						rec[k] = inner
					}
				}
			}
		}
		out = append(out, rec)
	}
	if err := r.Err(); err != nil {
		t.Fatalf("%s: %v", loc, err)
	}
	return out
}

// checkParquet opens a data file with parquet-go and checks the manifest's
// record count and size and the Iceberg field ids in its schema.
func checkParquet(t *testing.T, loc string, rows, size int64) {
	t.Helper()
	f, err := os.Open(localPath(loc))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(f, fi.Size())
	if err != nil {
		t.Fatalf("%s: %v", loc, err)
	}
	if pf.NumRows() != rows || fi.Size() != size {
		t.Fatalf("%s: %d rows, %d bytes; the manifest says %d, %d", loc, pf.NumRows(), fi.Size(), rows, size)
	}
	want := map[string]int{"id": 1, "title": 2, "embedding": 3}
	for _, fld := range pf.Schema().Fields() {
		if id, ok := want[fld.Name()]; ok && fld.ID() != id {
			t.Fatalf("%s: column %s has field id %d, the table schema %d", loc, fld.Name(), fld.ID(), id)
		}
	}
}

// readParquetRows reads every row of a Parquet file with parquet-go,
// checking that the columns named in fieldIDs carry those Iceberg field ids.
func readParquetRows(t *testing.T, loc string, fieldIDs map[string]int) []map[string]any {
	t.Helper()
	f, err := os.Open(localPath(loc))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(f, fi.Size())
	if err != nil {
		t.Fatalf("%s: %v", loc, err)
	}
	ids := map[string]int{}
	for _, fld := range pf.Schema().Fields() {
		ids[fld.Name()] = fld.ID()
	}
	for name, id := range fieldIDs {
		if got, ok := ids[name]; !ok || got != id {
			t.Fatalf("%s: column %s has field id %d (present %v), want %d", loc, name, got, ok, id)
		}
	}
	var out []map[string]any
	for _, rg := range pf.RowGroups() {
		rows := rg.Rows()
		buf := make([]parquet.Row, 64)
		for {
			n, err := rows.ReadRows(buf)
			for _, r := range buf[:n] {
				m := map[string]any{}
				if err := pf.Schema().Reconstruct(&m, r); err != nil {
					t.Fatalf("%s: %v", loc, err)
				}
				out = append(out, m)
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", loc, err)
			}
		}
		rows.Close()
	}
	return out
}
