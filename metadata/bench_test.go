package metadata

import (
	"fmt"
	"os"
	"strconv"
	"testing"
)

func BenchmarkParse(b *testing.B) {
	data, err := os.ReadFile("testdata/valid/base.json")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMarshal(b *testing.B) {
	data, err := os.ReadFile("testdata/valid/base.json")
	if err != nil {
		b.Fatal(err)
	}
	m, err := Parse(data)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Marshal(m); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFingerprint(b *testing.B) {
	d := Descriptor{"embedding", 768, MetricL2Squared, 4096, 1}
	for b.Loop() {
		_ = Fingerprint(d)
	}
}

// largeSnapshots is the size of the metadata the catalog's concurrency
// tests end with (16 writers × 50 commits): about 1.2 MB of JSON.
const largeSnapshots = 800

// largeMetadata returns valid metadata with n snapshots, each a copy of
// the current snapshot of testdata/valid/base.json with its own summary,
// as a long run of Successor calls would leave it (built directly, so that
// setup stays linear in n).
func largeMetadata(tb testing.TB, n int) *Metadata {
	tb.Helper()
	data, err := os.ReadFile("testdata/valid/base.json")
	if err != nil {
		tb.Fatal(err)
	}
	base, err := Parse(data)
	if err != nil {
		tb.Fatal(err)
	}
	cur := base.CurrentSnapshot()
	m := &Metadata{
		FormatVersion: 1,
		IndexUUID:     base.IndexUUID,
		Properties:    base.Properties,
	}
	for i := 1; i <= n; i++ {
		s := cur.Clone()
		s.SnapshotID = int64(i)
		s.SequenceNumber = int64(i)
		s.TimestampMs = 1750000000000 + int64(i)
		s.Summary = map[string]string{"operation": "append", "writer": fmt.Sprintf("h%d-%d", i%2, i%8), "step": strconv.Itoa(i / 16)}
		m.Snapshots = append(m.Snapshots, s)
		m.SnapshotLog = append(m.SnapshotLog, LogEntry{TimestampMs: s.TimestampMs, SnapshotID: s.SnapshotID})
	}
	m.LastSequenceNumber = int64(n)
	m.CurrentSnapshotID = int64(n)
	m.LastUpdatedMs = m.Snapshots[n-1].TimestampMs
	if err := m.Validate(); err != nil {
		tb.Fatal(err)
	}
	return m
}

// BenchmarkLarge measures each step of a catalog commit on metadata that
// holds largeSnapshots snapshots: Parse of the current file, Validate,
// Successor and Marshal of the result.
func BenchmarkLarge(b *testing.B) {
	m := largeMetadata(b, largeSnapshots)
	data, err := Marshal(m)
	if err != nil {
		b.Fatal(err)
	}
	name := fmt.Sprintf("snapshots=%d", largeSnapshots)
	b.Run("Parse/"+name, func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Parse(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Validate/"+name, func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := m.Validate(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Marshal/"+name, func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Marshal(m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Successor/"+name, func(b *testing.B) {
		snap := m.CurrentSnapshot().Clone()
		snap.TimestampMs = 0
		snap.Summary = map[string]string{"writer": "h1-7", "step": "50"}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Successor(m, snap, 1760000000000); err != nil {
				b.Fatal(err)
			}
		}
	})
}
