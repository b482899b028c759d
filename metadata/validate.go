package metadata

import (
	"fmt"
	"slices"
	"unicode/utf8"
)

// ReservedField is the result column every query adds; no source field that
// an index names may be called this (ivf-index-schema §8).
const ReservedField = "_distance"

// Validate checks every rule of the index metadata spec, the IVF rules of
// ivf-index-schema §2 and ParqDB's rulings (docs/format.md) and returns a
// *ValidationError (wrapping ErrInvalid) that lists every problem with its
// JSON path, or nil. It does not compare a snapshot with its centroid
// metadata document: that is CheckSnapshotAgainstCentroid. A nil map or
// slice counts as empty, except Metadata.Properties, where nil means absent.
func (m *Metadata) Validate() error {
	var ps problems
	m.validate(&ps)
	return ps.err("")
}

func (m *Metadata) validate(ps *problems) {
	if m.FormatVersion != 1 {
		ps.add("format-version", fmt.Sprintf("must be 1, got %d", m.FormatVersion))
	}
	checkUUID(ps, "index-uuid", m.IndexUUID)
	nonNegative(ps, "last-updated-ms", m.LastUpdatedMs)
	positive(ps, "last-sequence-number", m.LastSequenceNumber)
	positive(ps, "current-snapshot-id", m.CurrentSnapshotID)
	checkStringMap(ps, "properties", m.Properties)

	if len(m.Snapshots) == 0 {
		ps.add("snapshots", "must not be empty: the current snapshot is always retained")
	}
	byID := make(map[int64]int, len(m.Snapshots))
	bySeq := make(map[int64]int, len(m.Snapshots))
	for i := range m.Snapshots {
		s := &m.Snapshots[i]
		p := index("snapshots", i)
		s.validate(ps, p)
		if j, dup := byID[s.SnapshotID]; dup {
			ps.add(member(p, "snapshot-id"), fmt.Sprintf("duplicate snapshot-id %d (also snapshots[%d])", s.SnapshotID, j))
		} else {
			byID[s.SnapshotID] = i
		}
		if j, dup := bySeq[s.SequenceNumber]; dup {
			ps.add(member(p, "sequence-number"), fmt.Sprintf("duplicate sequence-number %d (also snapshots[%d])", s.SequenceNumber, j))
		} else {
			bySeq[s.SequenceNumber] = i
		}
		if s.SequenceNumber > m.LastSequenceNumber {
			ps.add(member(p, "sequence-number"), fmt.Sprintf("sequence-number %d exceeds last-sequence-number %d", s.SequenceNumber, m.LastSequenceNumber))
		}
		if s.TimestampMs > m.LastUpdatedMs {
			ps.add("last-updated-ms", fmt.Sprintf("last-updated-ms %d is earlier than %s %d", m.LastUpdatedMs, member(p, "timestamp-ms"), s.TimestampMs))
		}
	}
	ref, current := byID[m.CurrentSnapshotID]
	if !current && m.CurrentSnapshotID > 0 {
		ps.add("current-snapshot-id", fmt.Sprintf("names snapshot %d, which is not retained in snapshots", m.CurrentSnapshotID))
	}
	if len(m.Snapshots) > 0 {
		m.checkIdentity(ps, ref)
	}

	if len(m.SnapshotLog) == 0 {
		ps.add("snapshot-log", "must not be empty: its final entry names current-snapshot-id")
	}
	for j, e := range m.SnapshotLog {
		p := index("snapshot-log", j)
		nonNegative(ps, member(p, "timestamp-ms"), e.TimestampMs)
		if j > 0 && e.TimestampMs < m.SnapshotLog[j-1].TimestampMs {
			ps.add(member(p, "timestamp-ms"), fmt.Sprintf("%d is earlier than snapshot-log[%d].timestamp-ms %d: log timestamps are non-decreasing", e.TimestampMs, j-1, m.SnapshotLog[j-1].TimestampMs))
		}
		if _, ok := byID[e.SnapshotID]; !ok {
			ps.add(member(p, "snapshot-id"), fmt.Sprintf("names snapshot %d, which is not retained in snapshots", e.SnapshotID))
		}
		if e.TimestampMs > m.LastUpdatedMs {
			ps.add("last-updated-ms", fmt.Sprintf("last-updated-ms %d is earlier than %s %d", m.LastUpdatedMs, member(p, "timestamp-ms"), e.TimestampMs))
		}
	}
	if n := len(m.SnapshotLog); n > 0 && m.SnapshotLog[n-1].SnapshotID != m.CurrentSnapshotID {
		ps.add(member(index("snapshot-log", n-1), "snapshot-id"), fmt.Sprintf("the final snapshot-log entry names snapshot %d, not current-snapshot-id %d", m.SnapshotLog[n-1].SnapshotID, m.CurrentSnapshotID))
	}
}

// checkIdentity compares the identity fields of every retained snapshot
// with those of snapshots[ref] (the current snapshot when it is retained).
func (m *Metadata) checkIdentity(ps *problems, ref int) {
	r := &m.Snapshots[ref]
	for i := range m.Snapshots {
		if i == ref {
			continue
		}
		p := index("snapshots", i)
		for _, f := range identityDiff(r, &m.Snapshots[i]) {
			ps.add(member(p, f), fmt.Sprintf("identity field differs from snapshots[%d] (the current snapshot); changing it makes a new index", ref))
		}
	}
}

// identityDiff names the identity fields in which a and b differ.
func identityDiff(a, b *Snapshot) []string {
	var d []string
	if a.VectorField != b.VectorField {
		d = append(d, "vector-field")
	}
	if !slices.Equal(a.SourceKeyFields, b.SourceKeyFields) {
		d = append(d, "source-key-fields")
	}
	if a.IndexFamily != b.IndexFamily {
		d = append(d, "index-family")
	}
	if a.Metric != b.Metric {
		d = append(d, "metric")
	}
	return d
}

func (s *Snapshot) validate(ps *problems, p string) {
	positive(ps, member(p, "snapshot-id"), s.SnapshotID)
	positive(ps, member(p, "sequence-number"), s.SequenceNumber)
	nonNegative(ps, member(p, "timestamp-ms"), s.TimestampMs)
	checkStringMap(ps, member(p, "summary"), s.Summary)
	s.SourceTable.validate(ps, member(p, "source-table"))
	checkFieldName(ps, member(p, "vector-field"), s.VectorField)
	if len(s.SourceKeyFields) == 0 {
		ps.add(member(p, "source-key-fields"), "must not be empty")
	}
	for i, k := range s.SourceKeyFields {
		kp := index(member(p, "source-key-fields"), i)
		checkFieldName(ps, kp, k)
		if j := slices.Index(s.SourceKeyFields[:i], k); j >= 0 {
			ps.add(kp, fmt.Sprintf("duplicate source key field %q (also source-key-fields[%d])", k, j))
		}
		if k == s.VectorField && k != "" {
			ps.add(kp, fmt.Sprintf("%q is the vector-field; a vector cannot be a key field", k))
		}
	}
	positive(ps, member(p, "indexed-rows"), s.IndexedRows)
	ipp := member(p, "index-provider")
	checkName(ps, member(ipp, "provider"), s.IndexProvider.Provider)
	checkStringMap(ps, member(ipp, "properties"), s.IndexProvider.Properties)
	tp := member(p, "index-tables")
	for _, role := range sortedKeys(s.IndexTables) {
		t := s.IndexTables[role]
		rp := member(tp, role)
		checkUTF8(ps, rp, role)
		positive(ps, member(rp, "definition-version"), int64(t.DefinitionVersion))
		checkStringMap(ps, member(rp, "properties"), t.Properties)
	}
	switch {
	case s.IndexFamily != FamilyIVF:
		ps.add(member(p, "index-family"), unsupportedFamily(s.IndexFamily, s.IndexSchemaVersion))
	case s.IndexSchemaVersion != IVFSchemaVersion:
		ps.add(member(p, "index-schema-version"), unsupportedFamily(s.IndexFamily, s.IndexSchemaVersion))
	default:
		s.validateIVF(ps, p)
	}
}

func unsupportedFamily(family string, version int32) string {
	return fmt.Sprintf("unsupported index family %q at index-schema-version %d: only family %q version %d is defined", family, version, FamilyIVF, IVFSchemaVersion)
}

func (t *TableDefinition) validate(ps *problems, p string) {
	if id := t.Identifier; id != nil {
		ip := member(p, "identifier")
		checkName(ps, member(ip, "catalog"), id.Catalog)
		for i, ns := range id.Namespace {
			checkName(ps, index(member(ip, "namespace"), i), ns)
		}
		checkName(ps, member(ip, "name"), id.Name)
	}
	checkName(ps, member(p, "provider"), t.Provider)
	// Source-table properties belong to the source provider (a location
	// there may lie outside the warehouse): only their encoding is checked.
	checkStringMap(ps, member(p, "properties"), t.Properties)
}

func positive(ps *problems, path string, v int64) {
	if v <= 0 {
		ps.add(path, fmt.Sprintf("must be positive, got %d", v))
	}
}

func nonNegative(ps *problems, path string, v int64) {
	if v < 0 {
		ps.add(path, fmt.Sprintf("must not be negative, got %d", v))
	}
}

func checkUTF8(ps *problems, path, s string) bool {
	if !utf8.ValidString(s) {
		ps.add(path, "not valid UTF-8")
		return false
	}
	return true
}

// checkName requires a non-empty, valid UTF-8 string.
func checkName(ps *problems, path, s string) {
	if s == "" {
		ps.add(path, "must not be empty")
		return
	}
	checkUTF8(ps, path, s)
}

// checkFieldName checks a source field name: non-empty, UTF-8, not the
// reserved result column.
func checkFieldName(ps *problems, path, s string) {
	checkName(ps, path, s)
	if s == ReservedField {
		ps.add(path, fmt.Sprintf("%q is reserved for query results and cannot name a source field", ReservedField))
	}
}

func checkStringMap(ps *problems, path string, m map[string]string) {
	for _, k := range sortedKeys(m) {
		kp := member(path, k)
		if checkUTF8(ps, kp, k) {
			checkUTF8(ps, kp, m[k])
		}
	}
}

// checkUUID requires the lowercase 8-4-4-4-12 form and a non-nil value.
func checkUUID(ps *problems, path, s string) bool {
	if !uuidForm(s) {
		ps.add(path, fmt.Sprintf("%q is not a lowercase 8-4-4-4-12 hexadecimal UUID", s))
		return false
	}
	if s == nilUUID {
		ps.add(path, "must not be the nil UUID")
		return false
	}
	return true
}

const nilUUID = "00000000-0000-0000-0000-000000000000"

func uuidForm(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return false
			}
		}
	}
	return true
}
