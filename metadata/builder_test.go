package metadata

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"testing"
)

// ivfSnapshot returns a valid ivf snapshot template (ids unset) with nlist
// clusters over ntotal rows.
func ivfSnapshot(nlist, ntotal int64) Snapshot {
	return Snapshot{
		Summary:            map[string]string{"operation": "build"},
		SourceTable:        TableDefinition{Provider: "parquet", Properties: map[string]string{"location": "/data/docs/"}},
		VectorField:        "embedding",
		SourceKeyFields:    []string{"id"},
		IndexedRows:        ntotal,
		IndexFamily:        FamilyIVF,
		IndexSchemaVersion: IVFSchemaVersion,
		Metric:             MetricL2Squared,
		Parameters: map[string]string{
			ParamDimension: "4", ParamNList: strconv.FormatInt(nlist, 10), ParamNTotal: strconv.FormatInt(ntotal, 10),
			ParamPostingEncoding: EncodingLVQ8, ParamFingerprint: "29b9e391-b94f-5182-b8b3-f117784d8e12",
			ParamCentroidsUUID: "00000000-0000-4000-8000-000000000002", ParamCentroidsLocation: "metadata/c.json",
		},
		IndexProvider: ProviderDefinition{Provider: "parquet", Properties: map[string]string{}},
		IndexTables: map[string]IndexTableDefinition{
			RoleCentroids: {DefinitionVersion: 1, Properties: map[string]string{"location": "indexes/c/"}},
			RolePostings:  {DefinitionVersion: 1, Properties: map[string]string{"location": "indexes/p-" + strconv.FormatInt(ntotal, 10) + "/"}},
		},
	}
}

const testUUID = "6f1d2a3b-4c5d-4e6f-8a7b-9c0d1e2f3a4b"

func TestNew(t *testing.T) {
	snap := ivfSnapshot(2, 10)
	snap.SnapshotID, snap.SequenceNumber = 99, 42 // ignored
	m, err := New(testUUID, snap, 1000)
	if err != nil {
		t.Fatal(err)
	}
	s := m.CurrentSnapshot()
	if m.LastSequenceNumber != 1 || m.CurrentSnapshotID != 1 || s.SnapshotID != 1 || s.SequenceNumber != 1 ||
		s.TimestampMs != 1000 || m.LastUpdatedMs != 1000 || !reflect.DeepEqual(m.SnapshotLog, []LogEntry{{1000, 1}}) {
		t.Fatalf("New = %+v", m)
	}
	if m.Properties != nil {
		t.Errorf("Properties = %v, want absent", m.Properties)
	}
	// The caller keeps ownership of its maps.
	snap.Parameters[ParamNList] = "3"
	if s.Parameters[ParamNList] != "2" {
		t.Error("New shares the caller's parameters map")
	}
	out, err := Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(out); err != nil {
		t.Fatal(err)
	}
	t.Run("invalid snapshot", func(t *testing.T) {
		bad := ivfSnapshot(20, 10)
		_, err := New(testUUID, bad, 1000)
		ve := asValidationError(t, err)
		if !problemPaths(ve)["snapshots[0].parameters.nlist"] {
			t.Errorf("got %v", err)
		}
	})
	t.Run("invalid uuid", func(t *testing.T) {
		if _, err := New("nope", ivfSnapshot(2, 10), 1); !errors.Is(err, ErrInvalid) {
			t.Errorf("err = %v", err)
		}
	})
}

func TestSuccessor(t *testing.T) {
	m1, err := New(testUUID, ivfSnapshot(2, 10), 1000)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := Marshal(m1)
	m2, err := Successor(m1, ivfSnapshot(3, 20), 2000)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := Marshal(m1)
	if !bytes.Equal(before, after) {
		t.Fatal("Successor modified its base")
	}
	s := m2.CurrentSnapshot()
	if s.SnapshotID != 2 || s.SequenceNumber != 2 || m2.LastSequenceNumber != 2 || s.TimestampMs != 2000 ||
		m2.LastUpdatedMs != 2000 || len(m2.Snapshots) != 2 || !reflect.DeepEqual(m2.SnapshotLog, []LogEntry{{1000, 1}, {2000, 2}}) {
		t.Fatalf("Successor = %+v", m2)
	}
	if m2.IndexUUID != testUUID {
		t.Errorf("index-uuid changed")
	}

	t.Run("clock went back", func(t *testing.T) {
		m3, err := Successor(m2, ivfSnapshot(3, 30), 500)
		if err != nil {
			t.Fatal(err)
		}
		if m3.LastUpdatedMs != 2000 || m3.SnapshotLog[2].TimestampMs != 2000 || m3.CurrentSnapshot().TimestampMs != 2000 {
			t.Errorf("timestamps not monotone: %+v", m3)
		}
	})
	t.Run("caller timestamp kept", func(t *testing.T) {
		snap := ivfSnapshot(3, 30)
		snap.TimestampMs = 5000
		m3, err := Successor(m2, snap, 3000)
		if err != nil {
			t.Fatal(err)
		}
		if m3.CurrentSnapshot().TimestampMs != 5000 || m3.LastUpdatedMs != 5000 || m3.SnapshotLog[2].TimestampMs != 3000 {
			t.Errorf("got %+v", m3)
		}
	})
	t.Run("properties carried over", func(t *testing.T) {
		b := m2.Clone()
		b.Properties = map[string]string{}
		m3, err := Successor(b, ivfSnapshot(3, 30), 3000)
		if err != nil {
			t.Fatal(err)
		}
		if m3.Properties == nil {
			t.Error("empty properties became absent")
		}
	})
	t.Run("identity changes refused", func(t *testing.T) {
		for _, edit := range []func(*Snapshot){
			func(s *Snapshot) { s.VectorField = "other" },
			func(s *Snapshot) { s.SourceKeyFields = []string{"id", "tenant"} },
			func(s *Snapshot) { s.Metric = MetricCosine },
			func(s *Snapshot) { s.IndexFamily = "hnsw" },
		} {
			snap := ivfSnapshot(3, 30)
			edit(&snap)
			if _, err := Successor(m2, snap, 3000); !errors.Is(err, ErrIdentityChanged) {
				t.Errorf("err = %v, want ErrIdentityChanged", err)
			}
		}
	})
	t.Run("non-identity changes allowed", func(t *testing.T) {
		snap := ivfSnapshot(5, 40)
		snap.Parameters[ParamDimension] = "8"
		snap.Parameters[ParamPostingEncoding] = EncodingSource
		snap.SourceTable.Properties["table-identity"] = "v2"
		snap.IndexTables[RolePostings].Properties["location"] = "indexes/other/"
		if _, err := Successor(m2, snap, 3000); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("invalid snapshot", func(t *testing.T) {
		snap := ivfSnapshot(3, 30)
		snap.IndexedRows = 31
		_, err := Successor(m2, snap, 3000)
		ve := asValidationError(t, err)
		if !problemPaths(ve)["snapshots[2].indexed-rows"] {
			t.Errorf("got %v", err)
		}
	})
	t.Run("invalid base", func(t *testing.T) {
		b := m2.Clone()
		b.FormatVersion = 2
		if _, err := Successor(b, ivfSnapshot(3, 30), 3000); !errors.Is(err, ErrInvalid) {
			t.Errorf("err = %v", err)
		}
	})
}

func TestSuccessorOfSpecExample(t *testing.T) {
	// Foreign ids (701 at sequence 1): the new id exceeds every retained id.
	m := mustParse(t, "testdata/valid/spec-example.json")
	snap := m.CurrentSnapshot().Clone()
	m2, err := Successor(m, snap, 1750000001000)
	if err != nil {
		t.Fatal(err)
	}
	if s := m2.CurrentSnapshot(); s.SnapshotID != 702 || s.SequenceNumber != 2 {
		t.Errorf("successor id %d sequence %d, want 702 and 2", s.SnapshotID, s.SequenceNumber)
	}
}

func TestRemoveSnapshots(t *testing.T) {
	m, err := New(testUUID, ivfSnapshot(2, 10), 1000)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if m, err = Successor(m, ivfSnapshot(2, int64(11+i)), int64(2000+i)); err != nil {
			t.Fatal(err)
		}
	}
	// ids 1..4, current 4.
	r, err := RemoveSnapshots(m, []int64{2, 4 - 1}, 900)
	if err != nil {
		t.Fatal(err)
	}
	if ids := snapshotIDs(r); !slices.Equal(ids, []int64{1, 4}) {
		t.Errorf("retained %v", ids)
	}
	if !reflect.DeepEqual(r.SnapshotLog, []LogEntry{{1000, 1}, {2002, 4}}) {
		t.Errorf("log %v", r.SnapshotLog)
	}
	if r.LastSequenceNumber != 4 || r.LastUpdatedMs != m.LastUpdatedMs {
		t.Errorf("last-sequence-number %d last-updated-ms %d", r.LastSequenceNumber, r.LastUpdatedMs)
	}
	if len(m.Snapshots) != 4 {
		t.Error("RemoveSnapshots modified its base")
	}
	// Removing the newest non-current snapshot does not let its id come back.
	r2, err := RemoveSnapshots(r, []int64{1}, 3000)
	if err != nil {
		t.Fatal(err)
	}
	if r2.LastUpdatedMs != 3000 {
		t.Errorf("last-updated-ms %d", r2.LastUpdatedMs)
	}
	n, err := Successor(r2, ivfSnapshot(2, 20), 3001)
	if err != nil {
		t.Fatal(err)
	}
	if id := n.CurrentSnapshotID; id != 5 {
		t.Errorf("new id %d, want 5", id)
	}
	if _, err := RemoveSnapshots(m, []int64{4}, 0); !errors.Is(err, ErrCurrentSnapshot) {
		t.Errorf("removing current: %v", err)
	}
	if _, err := RemoveSnapshots(m, []int64{7}, 0); !errors.Is(err, ErrNoSnapshot) {
		t.Errorf("removing unknown: %v", err)
	}
}

func snapshotIDs(m *Metadata) []int64 {
	var ids []int64
	for _, s := range m.Snapshots {
		ids = append(ids, s.SnapshotID)
	}
	slices.Sort(ids)
	return ids
}

// TestBuilderSequences runs seeded random sequences of successors and
// removals, with a clock that sometimes goes back, and checks after every
// step that the result validates, round-trips canonically and never
// reuses a snapshot id or sequence number.
func TestBuilderSequences(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 1))
		now := int64(1000)
		m, err := New(testUUID, ivfSnapshot(2, 10), now)
		if err != nil {
			t.Fatal(err)
		}
		usedIDs := map[int64]bool{1: true}
		usedSeqs := map[int64]bool{1: true}
		for step := range 40 {
			now += rng.Int64N(100) - 30
			if rng.IntN(3) == 0 && len(m.Snapshots) > 1 {
				var ids []int64
				for _, s := range m.Snapshots {
					if s.SnapshotID != m.CurrentSnapshotID && rng.IntN(2) == 0 {
						ids = append(ids, s.SnapshotID)
					}
				}
				last := m.LastSequenceNumber
				if m, err = RemoveSnapshots(m, ids, now); err != nil {
					t.Fatalf("seed %d step %d: %v", seed, step, err)
				}
				if m.LastSequenceNumber != last {
					t.Fatalf("removal changed last-sequence-number")
				}
			} else {
				prev := m.LastUpdatedMs
				if m, err = Successor(m, ivfSnapshot(2, 10+rng.Int64N(100)), now); err != nil {
					t.Fatalf("seed %d step %d: %v", seed, step, err)
				}
				s := m.CurrentSnapshot()
				if usedIDs[s.SnapshotID] || usedSeqs[s.SequenceNumber] {
					t.Fatalf("seed %d step %d: reused id %d or sequence %d", seed, step, s.SnapshotID, s.SequenceNumber)
				}
				if s.SnapshotID != s.SequenceNumber {
					t.Fatalf("ParqDB-only history: id %d != sequence %d", s.SnapshotID, s.SequenceNumber)
				}
				if m.LastUpdatedMs < prev {
					t.Fatalf("last-updated-ms went back")
				}
				usedIDs[s.SnapshotID], usedSeqs[s.SequenceNumber] = true, true
			}
			out, err := Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			back, err := Parse(out)
			if err != nil {
				t.Fatalf("seed %d step %d: builder output rejected: %v", seed, step, err)
			}
			out2, _ := Marshal(back)
			if !bytes.Equal(out, out2) {
				t.Fatal("round trip not byte-identical")
			}
		}
	}
}
