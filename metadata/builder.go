package metadata

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// CurrentSnapshot returns the snapshot named by current-snapshot-id, or nil
// when it is not retained (never for valid metadata). The result points into
// m and must not be modified.
func (m *Metadata) CurrentSnapshot() *Snapshot {
	s, _ := m.Snapshot(m.CurrentSnapshotID)
	return s
}

// Snapshot returns the retained snapshot with snapshot-id id. The result
// points into m and must not be modified.
func (m *Metadata) Snapshot(id int64) (*Snapshot, bool) {
	for i := range m.Snapshots {
		if m.Snapshots[i].SnapshotID == id {
			return &m.Snapshots[i], true
		}
	}
	return nil, false
}

// Clone returns a deep copy of m that shares no maps or slices with it.
func (m *Metadata) Clone() *Metadata { return m.clone(0) }

// clone is Clone with room for extra more snapshots and log entries.
func (m *Metadata) clone(extra int) *Metadata {
	c := *m
	c.Properties = maps.Clone(m.Properties)
	c.Snapshots = make([]Snapshot, len(m.Snapshots), len(m.Snapshots)+extra)
	for i := range m.Snapshots {
		c.Snapshots[i] = m.Snapshots[i].Clone()
	}
	if m.SnapshotLog != nil {
		c.SnapshotLog = append(make([]LogEntry, 0, len(m.SnapshotLog)+extra), m.SnapshotLog...)
	}
	return &c
}

// Clone returns a deep copy of s that shares no maps or slices with it.
func (s Snapshot) Clone() Snapshot {
	c := s
	c.Summary = maps.Clone(s.Summary)
	if id := s.SourceTable.Identifier; id != nil {
		cp := *id
		cp.Namespace = slices.Clone(id.Namespace)
		c.SourceTable.Identifier = &cp
	}
	c.SourceTable.Properties = maps.Clone(s.SourceTable.Properties)
	c.SourceKeyFields = slices.Clone(s.SourceKeyFields)
	c.Parameters = maps.Clone(s.Parameters)
	c.IndexProvider.Properties = maps.Clone(s.IndexProvider.Properties)
	if s.IndexTables != nil {
		c.IndexTables = make(map[string]IndexTableDefinition, len(s.IndexTables))
		for k, t := range s.IndexTables {
			t.Properties = maps.Clone(t.Properties)
			c.IndexTables[k] = t
		}
	}
	return c
}

// New returns the initial metadata of a new index (index-metadata-spec
// "Snapshot Log and Updates"): last-sequence-number 1, one snapshot and one
// snapshot-log entry. It assigns snap's SnapshotID and SequenceNumber (both
// 1; any values in snap are ignored); snap.TimestampMs, when zero, becomes
// nowMs. last-updated-ms is the greater of nowMs and snap's timestamp; the log
// entry's timestamp is nowMs. Properties are absent. snap is copied, so the
// caller keeps ownership of its maps and slices. The result always validates;
// otherwise the error is a *ValidationError wrapping ErrInvalid.
func New(indexUUID string, snap Snapshot, nowMs int64) (*Metadata, error) {
	s := snap.Clone()
	s.SnapshotID = 1
	s.SequenceNumber = 1
	if s.TimestampMs == 0 {
		s.TimestampMs = nowMs
	}
	m := &Metadata{
		FormatVersion:      1,
		IndexUUID:          indexUUID,
		LastUpdatedMs:      max(nowMs, s.TimestampMs),
		LastSequenceNumber: 1,
		CurrentSnapshotID:  1,
		Snapshots:          []Snapshot{s},
		SnapshotLog:        []LogEntry{{TimestampMs: nowMs, SnapshotID: 1}},
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}

// NextSnapshotID returns the snapshot-id the next successor of m gets:
// max(last-sequence-number + 1, greatest retained snapshot-id + 1). For
// metadata written only by ParqDB every snapshot-id equals its
// sequence-number, so this is the new sequence number; see docs/format.md
// for why an id is never reused, even after removal.
func NextSnapshotID(m *Metadata) (int64, error) {
	next := m.LastSequenceNumber
	for i := range m.Snapshots {
		next = max(next, m.Snapshots[i].SnapshotID)
	}
	if next == math.MaxInt64 {
		return 0, fmt.Errorf("%w: snapshot ids or sequence numbers are exhausted", ErrInvalid)
	}
	return next + 1, nil
}

// Successor performs steps 1–5 of publishing a successor snapshot
// (index-metadata-spec "Snapshot Log and Updates"); step 6, the catalog
// compare-and-swap, is the caller's. It returns new metadata and leaves base
// untouched:
//  1. snap gets a new positive snapshot-id, NextSnapshotID(base);
//  2. its sequence-number is base.last-sequence-number + 1;
//  3. it is appended to the snapshots;
//  4. last-sequence-number and current-snapshot-id advance to it;
//  5. a snapshot-log entry with timestamp max(nowMs, base.last-updated-ms) is
//     appended, so that log timestamps stay non-decreasing even if the clock
//     went back.
//
// snap.TimestampMs, when zero, becomes that log timestamp; last-updated-ms is
// the greatest of nowMs, base.last-updated-ms and snap's timestamp.
// Properties are carried over. base must validate; snap's identity fields
// (vector-field, source-key-fields, index-family, metric) must equal base's,
// or the error wraps ErrIdentityChanged: a changed identity is a new index
// with a new index-uuid (use New). The result always validates; otherwise the
// error is a *ValidationError wrapping ErrInvalid.
func Successor(base *Metadata, snap Snapshot, nowMs int64) (*Metadata, error) {
	m, err := successor(base, snap, nowMs)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// successor is Successor, except that when only the new snapshot breaks a
// rule it returns the result beside the error, for tests to validate.
//
// The result is checked without validating it in full: base validated, so
// every rule that spans snapshots or concerns the root holds for the result
// by construction (a new snapshot-id and sequence-number greater than every
// retained one, non-decreasing log timestamps, last-updated-ms at least
// every timestamp, identity fields equal to base's current snapshot and
// hence to every retained snapshot's). Only the new snapshot's own rules
// remain; they are checked at its path, which yields exactly the problems
// Validate would report for the result.
func successor(base *Metadata, snap Snapshot, nowMs int64) (*Metadata, error) {
	if err := base.Validate(); err != nil {
		return nil, fmt.Errorf("base metadata: %w", err)
	}
	if !sameIdentity(base.CurrentSnapshot(), &snap) {
		d := identityDiff(base.CurrentSnapshot(), &snap)
		return nil, fmt.Errorf("%w: %s", ErrIdentityChanged, strings.Join(d, ", "))
	}
	id, err := NextSnapshotID(base)
	if err != nil {
		return nil, err
	}
	m := base.clone(1)
	s := snap.Clone()
	s.SnapshotID = id
	s.SequenceNumber = base.LastSequenceNumber + 1
	logTs := max(nowMs, base.LastUpdatedMs)
	if s.TimestampMs == 0 {
		s.TimestampMs = logTs
	}
	m.Snapshots = append(m.Snapshots, s)
	m.LastSequenceNumber = s.SequenceNumber
	m.CurrentSnapshotID = id
	m.SnapshotLog = append(m.SnapshotLog, LogEntry{TimestampMs: logTs, SnapshotID: id})
	m.LastUpdatedMs = max(logTs, s.TimestampMs)
	var ps problems
	snapshots := lit("snapshots")
	p := snapshots.at(len(m.Snapshots) - 1)
	m.Snapshots[len(m.Snapshots)-1].validate(&ps, &p)
	return m, ps.err("")
}

// RemoveSnapshots returns new metadata without the snapshots named by ids
// and without their snapshot-log entries, keeping last-sequence-number (so
// neither a sequence number nor, by NextSnapshotID, a snapshot id is ever
// reused). last-updated-ms becomes max(nowMs, base.last-updated-ms). base must
// validate; removing the current snapshot fails with ErrCurrentSnapshot and an
// id naming no retained snapshot fails with ErrNoSnapshot. base is left
// untouched and the result always validates.
func RemoveSnapshots(base *Metadata, ids []int64, nowMs int64) (*Metadata, error) {
	if err := base.Validate(); err != nil {
		return nil, fmt.Errorf("base metadata: %w", err)
	}
	drop := make(map[int64]bool, len(ids))
	for _, id := range ids {
		if id == base.CurrentSnapshotID {
			return nil, fmt.Errorf("snapshot %d: %w", id, ErrCurrentSnapshot)
		}
		if _, ok := base.Snapshot(id); !ok {
			return nil, fmt.Errorf("snapshot %d: %w", id, ErrNoSnapshot)
		}
		drop[id] = true
	}
	m := base.Clone()
	m.Snapshots = slices.DeleteFunc(m.Snapshots, func(s Snapshot) bool { return drop[s.SnapshotID] })
	m.SnapshotLog = slices.DeleteFunc(m.SnapshotLog, func(e LogEntry) bool { return drop[e.SnapshotID] })
	m.LastUpdatedMs = max(nowMs, base.LastUpdatedMs)
	if err := m.Validate(); err != nil {
		return nil, errors.Join(fmt.Errorf("remove snapshots %v", ids), err)
	}
	return m, nil
}
