package metadata

import (
	"cmp"
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
	checkUUID(ps, lit("index-uuid"), m.IndexUUID)
	nonNegative(ps, lit("last-updated-ms"), m.LastUpdatedMs)
	positive(ps, lit("last-sequence-number"), m.LastSequenceNumber)
	positive(ps, lit("current-snapshot-id"), m.CurrentSnapshotID)
	checkStringMap(ps, lit("properties"), m.Properties)

	if len(m.Snapshots) == 0 {
		ps.add("snapshots", "must not be empty: the current snapshot is always retained")
	}
	ids := newSnapshotIndex(m.Snapshots)
	snapshots := lit("snapshots")
	for i := range m.Snapshots {
		s := &m.Snapshots[i]
		p := snapshots.at(i)
		s.validate(ps, &p)
		if j, dup := ids.firstID(i); dup {
			ps.at(p.key("snapshot-id"), fmt.Sprintf("duplicate snapshot-id %d (also snapshots[%d])", s.SnapshotID, j))
		}
		if j, dup := ids.firstSeq(i); dup {
			ps.at(p.key("sequence-number"), fmt.Sprintf("duplicate sequence-number %d (also snapshots[%d])", s.SequenceNumber, j))
		}
		if s.SequenceNumber > m.LastSequenceNumber {
			ps.at(p.key("sequence-number"), fmt.Sprintf("sequence-number %d exceeds last-sequence-number %d", s.SequenceNumber, m.LastSequenceNumber))
		}
		if s.TimestampMs > m.LastUpdatedMs {
			ps.add("last-updated-ms", fmt.Sprintf("last-updated-ms %d is earlier than %s %d", m.LastUpdatedMs, member(p.String(), "timestamp-ms"), s.TimestampMs))
		}
	}
	ref, current := ids.lookup(m.CurrentSnapshotID)
	if !current && m.CurrentSnapshotID > 0 {
		ps.add("current-snapshot-id", fmt.Sprintf("names snapshot %d, which is not retained in snapshots", m.CurrentSnapshotID))
	}
	if len(m.Snapshots) > 0 {
		m.checkIdentity(ps, ref)
	}

	if len(m.SnapshotLog) == 0 {
		ps.add("snapshot-log", "must not be empty: its final entry names current-snapshot-id")
	}
	log := lit("snapshot-log")
	for j, e := range m.SnapshotLog {
		p := log.at(j)
		nonNegative(ps, p.key("timestamp-ms"), e.TimestampMs)
		if j > 0 && e.TimestampMs < m.SnapshotLog[j-1].TimestampMs {
			ps.at(p.key("timestamp-ms"), fmt.Sprintf("%d is earlier than snapshot-log[%d].timestamp-ms %d: log timestamps are non-decreasing", e.TimestampMs, j-1, m.SnapshotLog[j-1].TimestampMs))
		}
		if _, ok := ids.lookup(e.SnapshotID); !ok {
			ps.at(p.key("snapshot-id"), fmt.Sprintf("names snapshot %d, which is not retained in snapshots", e.SnapshotID))
		}
		if e.TimestampMs > m.LastUpdatedMs {
			ps.add("last-updated-ms", fmt.Sprintf("last-updated-ms %d is earlier than %s %d", m.LastUpdatedMs, member(p.String(), "timestamp-ms"), e.TimestampMs))
		}
	}
	if n := len(m.SnapshotLog); n > 0 && m.SnapshotLog[n-1].SnapshotID != m.CurrentSnapshotID {
		ps.add(member(index("snapshot-log", n-1), "snapshot-id"), fmt.Sprintf("the final snapshot-log entry names snapshot %d, not current-snapshot-id %d", m.SnapshotLog[n-1].SnapshotID, m.CurrentSnapshotID))
	}
}

// snapshotIndex finds snapshots by snapshot-id and reports duplicate
// snapshot-ids and sequence-numbers, in O(n) for any order. Metadata
// written by the builders lists both in strictly increasing order; then
// no maps are built and lookups are binary searches.
type snapshotIndex struct {
	snaps []Snapshot
	// byID and bySeq map a value to the first snapshot holding it; each is
	// nil when that value strictly increases along snaps (no duplicates).
	byID, bySeq map[int64]int
}

func newSnapshotIndex(snaps []Snapshot) snapshotIndex {
	x := snapshotIndex{snaps: snaps}
	idsUp, seqsUp := true, true
	for i := 1; i < len(snaps); i++ {
		idsUp = idsUp && snaps[i-1].SnapshotID < snaps[i].SnapshotID
		seqsUp = seqsUp && snaps[i-1].SequenceNumber < snaps[i].SequenceNumber
	}
	if !idsUp {
		x.byID = firstIndex(snaps, func(s *Snapshot) int64 { return s.SnapshotID })
	}
	if !seqsUp {
		x.bySeq = firstIndex(snaps, func(s *Snapshot) int64 { return s.SequenceNumber })
	}
	return x
}

func firstIndex(snaps []Snapshot, key func(*Snapshot) int64) map[int64]int {
	m := make(map[int64]int, len(snaps))
	for i := range snaps {
		if _, dup := m[key(&snaps[i])]; !dup {
			m[key(&snaps[i])] = i
		}
	}
	return m
}

// firstID reports whether snapshots[i] repeats the snapshot-id of an
// earlier snapshot, and the first such snapshot.
func (x *snapshotIndex) firstID(i int) (int, bool) {
	if x.byID == nil {
		return 0, false
	}
	j := x.byID[x.snaps[i].SnapshotID]
	return j, j < i
}

// firstSeq is firstID for sequence-numbers.
func (x *snapshotIndex) firstSeq(i int) (int, bool) {
	if x.bySeq == nil {
		return 0, false
	}
	j := x.bySeq[x.snaps[i].SequenceNumber]
	return j, j < i
}

// lookup returns the first snapshot with snapshot-id id.
func (x *snapshotIndex) lookup(id int64) (int, bool) {
	if x.byID != nil {
		j, ok := x.byID[id]
		return j, ok
	}
	j, ok := slices.BinarySearchFunc(x.snaps, id, func(s Snapshot, id int64) int { return cmp.Compare(s.SnapshotID, id) })
	if !ok {
		return 0, false
	}
	return j, true
}

// checkIdentity compares the identity fields of every retained snapshot
// with those of snapshots[ref] (the current snapshot when it is retained).
func (m *Metadata) checkIdentity(ps *problems, ref int) {
	r := &m.Snapshots[ref]
	for i := range m.Snapshots {
		if i == ref || sameIdentity(r, &m.Snapshots[i]) {
			continue
		}
		p := index("snapshots", i)
		for _, f := range identityDiff(r, &m.Snapshots[i]) {
			ps.add(member(p, f), fmt.Sprintf("identity field differs from snapshots[%d] (the current snapshot); changing it makes a new index", ref))
		}
	}
}

// sameIdentity reports whether identityDiff(a, b) is empty.
func sameIdentity(a, b *Snapshot) bool {
	return a.VectorField == b.VectorField && slices.Equal(a.SourceKeyFields, b.SourceKeyFields) &&
		a.IndexFamily == b.IndexFamily && a.Metric == b.Metric
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

func (s *Snapshot) validate(ps *problems, p *jpath) {
	positive(ps, p.key("snapshot-id"), s.SnapshotID)
	positive(ps, p.key("sequence-number"), s.SequenceNumber)
	nonNegative(ps, p.key("timestamp-ms"), s.TimestampMs)
	checkStringMap(ps, p.key("summary"), s.Summary)
	stp := p.key("source-table")
	s.SourceTable.validate(ps, &stp)
	checkFieldName(ps, p.key("vector-field"), s.VectorField)
	kfp := p.key("source-key-fields")
	if len(s.SourceKeyFields) == 0 {
		ps.at(kfp, "must not be empty")
	}
	var firstKey map[string]int // long lists only, to stay linear
	if len(s.SourceKeyFields) > 32 {
		firstKey = make(map[string]int, len(s.SourceKeyFields))
	}
	for i, k := range s.SourceKeyFields {
		kp := kfp.at(i)
		checkFieldName(ps, kp, k)
		j := -1
		if firstKey == nil {
			j = slices.Index(s.SourceKeyFields[:i], k)
		} else if f, dup := firstKey[k]; dup {
			j = f
		} else {
			firstKey[k] = i
		}
		if j >= 0 {
			ps.at(kp, fmt.Sprintf("duplicate source key field %q (also source-key-fields[%d])", k, j))
		}
		if k == s.VectorField && k != "" {
			ps.at(kp, fmt.Sprintf("%q is the vector-field; a vector cannot be a key field", k))
		}
	}
	positive(ps, p.key("indexed-rows"), s.IndexedRows)
	ipp := p.key("index-provider")
	checkName(ps, ipp.key("provider"), s.IndexProvider.Provider)
	checkStringMap(ps, ipp.key("properties"), s.IndexProvider.Properties)
	if !indexTablesOK(s.IndexTables) {
		tp := p.key("index-tables")
		for _, role := range sortedKeys(s.IndexTables) {
			t := s.IndexTables[role]
			rp := tp.key(role)
			checkUTF8(ps, rp, role)
			positive(ps, rp.key("definition-version"), int64(t.DefinitionVersion))
			checkStringMap(ps, rp.key("properties"), t.Properties)
		}
	}
	switch {
	case s.IndexFamily != FamilyIVF:
		ps.at(p.key("index-family"), unsupportedFamily(s.IndexFamily, s.IndexSchemaVersion))
	case s.IndexSchemaVersion != IVFSchemaVersion:
		ps.at(p.key("index-schema-version"), unsupportedFamily(s.IndexFamily, s.IndexSchemaVersion))
	default:
		s.validateIVF(ps, p)
	}
}

// indexTablesOK reports whether the role loop of Snapshot.validate finds
// nothing, without sorting the roles.
func indexTablesOK(tables map[string]IndexTableDefinition) bool {
	for role, t := range tables {
		if !utf8.ValidString(role) || t.DefinitionVersion <= 0 || !stringMapOK(t.Properties) {
			return false
		}
	}
	return true
}

func unsupportedFamily(family string, version int32) string {
	return fmt.Sprintf("unsupported index family %q at index-schema-version %d: only family %q version %d is defined", family, version, FamilyIVF, IVFSchemaVersion)
}

func (t *TableDefinition) validate(ps *problems, p *jpath) {
	if id := t.Identifier; id != nil {
		ip := p.key("identifier")
		checkName(ps, ip.key("catalog"), id.Catalog)
		nsp := ip.key("namespace")
		for i, ns := range id.Namespace {
			checkName(ps, nsp.at(i), ns)
		}
		checkName(ps, ip.key("name"), id.Name)
	}
	checkName(ps, p.key("provider"), t.Provider)
	// Source-table properties belong to the source provider (a location
	// there may lie outside the warehouse): only their encoding is checked.
	checkStringMap(ps, p.key("properties"), t.Properties)
}

func positive(ps *problems, p jpath, v int64) {
	if v <= 0 {
		ps.at(p, fmt.Sprintf("must be positive, got %d", v))
	}
}

func nonNegative(ps *problems, p jpath, v int64) {
	if v < 0 {
		ps.at(p, fmt.Sprintf("must not be negative, got %d", v))
	}
}

func checkUTF8(ps *problems, p jpath, s string) bool {
	if !utf8.ValidString(s) {
		ps.at(p, "not valid UTF-8")
		return false
	}
	return true
}

// checkName requires a non-empty, valid UTF-8 string.
func checkName(ps *problems, p jpath, s string) {
	if s == "" {
		ps.at(p, "must not be empty")
		return
	}
	checkUTF8(ps, p, s)
}

// checkFieldName checks a source field name: non-empty, UTF-8, not the
// reserved result column.
func checkFieldName(ps *problems, p jpath, s string) {
	checkName(ps, p, s)
	if s == ReservedField {
		ps.at(p, fmt.Sprintf("%q is reserved for query results and cannot name a source field", ReservedField))
	}
}

// checkStringMap requires valid UTF-8 keys and values, reporting in key
// order; the common all-valid case is decided without sorting.
func checkStringMap(ps *problems, p jpath, m map[string]string) {
	if stringMapOK(m) {
		return
	}
	for _, k := range sortedKeys(m) {
		kp := p.key(k)
		if checkUTF8(ps, kp, k) {
			checkUTF8(ps, kp, m[k])
		}
	}
}

func stringMapOK(m map[string]string) bool {
	for k, v := range m {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return false
		}
	}
	return true
}

// checkUUID requires the lowercase 8-4-4-4-12 form and a non-nil value.
func checkUUID(ps *problems, p jpath, s string) bool {
	if !uuidForm(s) {
		ps.at(p, fmt.Sprintf("%q is not a lowercase 8-4-4-4-12 hexadecimal UUID", s))
		return false
	}
	if s == nilUUID {
		ps.at(p, "must not be the nil UUID")
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
