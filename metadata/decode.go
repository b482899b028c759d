package metadata

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// decoder maps a parsed tree onto the Go types, reporting every structural
// problem: unknown fields, missing required fields, null, wrong JSON types,
// non-integer numbers in int/long fields and out-of-range integers.
type decoder struct {
	ps *problems
}

// field describes one member of a fixed-shape object. No member of any
// metadata object is nullable: an optional member is either present with a
// value or absent.
type field struct {
	name     string
	required bool
}

// Each object is decoded by a loop over its members that switches on the
// member's index in the object's field list:
//
//	seen, ok := d.begin(n, p)
//	for _, m := range n.members {  // if ok
//		mp := p.key(m.name)
//		switch d.field(&mp, fields, m.name, &seen) { case 0: …; case 1: … }
//	}
//	d.missing(p, fields, seen)
//
// This reports, as the spec's member order asks, an unknown field or the
// member's own problems for each member in document order, then each
// missing required field. (Callbacks would be shorter but make every path
// escape to the heap.)

// begin reports n unless it is an object.
func (d *decoder) begin(n *node, p *jpath) bool {
	if n.kind != '{' {
		d.ps.at(*p, "expected an object, got "+describe(n))
		return false
	}
	return true
}

// field returns the index of member name in fields and marks it in seen,
// or reports an unknown field at mp and returns -1.
func (d *decoder) field(mp *jpath, fields []field, name string, seen *uint32) int {
	i := fieldIndex(fields, name)
	if i < 0 {
		d.ps.at(*mp, "unknown field")
		return -1
	}
	*seen |= 1 << i
	return i
}

// missing reports each required field of fields not in seen.
func (d *decoder) missing(p *jpath, fields []field, seen uint32) {
	for i, f := range fields {
		if f.required && seen&(1<<i) == 0 {
			d.ps.at(p.key(f.name), "required field is missing")
		}
	}
}

func fieldIndex(fields []field, name string) int {
	for i, f := range fields {
		if f.name == name {
			return i
		}
	}
	return -1
}

func (d *decoder) str(n *node, p *jpath, dst *string) {
	if n.kind != '"' {
		d.ps.at(*p, "expected a string, got "+describe(n))
		return
	}
	*dst = n.text
}

func (d *decoder) integer(n *node, p *jpath, bits int) (int64, bool) {
	typ := "long"
	if bits == 32 {
		typ = "int"
	}
	if n.kind != '0' {
		d.ps.at(*p, "expected an integer ("+typ+"), got "+describe(n))
		return 0, false
	}
	if strings.ContainsAny(n.text, ".eE") {
		d.ps.at(*p, "expected an integer literal ("+typ+"), got "+n.text)
		return 0, false
	}
	v, err := strconv.ParseInt(n.text, 10, bits)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			d.ps.at(*p, fmt.Sprintf("integer %s is out of range for %s (signed %d-bit)", n.text, typ, bits))
		} else {
			d.ps.at(*p, "expected an integer literal ("+typ+"), got "+n.text)
		}
		return 0, false
	}
	return v, true
}

func (d *decoder) i32(n *node, p *jpath, dst *int32) {
	if v, ok := d.integer(n, p, 32); ok {
		*dst = int32(v)
	}
}

func (d *decoder) i64(n *node, p *jpath, dst *int64) {
	if v, ok := d.integer(n, p, 64); ok {
		*dst = v
	}
}

// strMap decodes a map<string,string>; an empty object gives a non-nil
// empty map so that "absent" (nil) and "{}" stay distinct.
func (d *decoder) strMap(n *node, p *jpath, dst *map[string]string) {
	if n.kind != '{' {
		d.ps.at(*p, "expected an object (map<string,string>), got "+describe(n))
		return
	}
	m := make(map[string]string, len(n.members))
	for _, mem := range n.members {
		if mem.val.kind != '"' {
			d.ps.at(p.key(mem.name), "expected a string, got "+describe(mem.val))
			continue
		}
		m[mem.name] = mem.val.text
	}
	*dst = m
}

func (d *decoder) strList(n *node, p *jpath, dst *[]string) {
	if n.kind != '[' {
		d.ps.at(*p, "expected a list of strings, got "+describe(n))
		return
	}
	l := make([]string, 0, len(n.elems))
	for i, e := range n.elems {
		if e.kind != '"' {
			d.ps.at(p.at(i), "expected a string, got "+describe(e))
			continue
		}
		l = append(l, e.text)
	}
	*dst = l
}

var (
	metadataFields = []field{
		{"format-version", true}, {"index-uuid", true}, {"last-updated-ms", true},
		{"last-sequence-number", true}, {"current-snapshot-id", true}, {"snapshots", true},
		{"snapshot-log", true}, {"properties", false},
	}
	logEntryFields = []field{{"timestamp-ms", true}, {"snapshot-id", true}}
	snapshotFields = []field{
		{"snapshot-id", true}, {"sequence-number", true}, {"timestamp-ms", true}, {"summary", true},
		{"source-table", true}, {"vector-field", true}, {"source-key-fields", true},
		{"indexed-rows", true}, {"index-family", true}, {"index-schema-version", true},
		{"metric", true}, {"parameters", true}, {"index-provider", true}, {"index-tables", true},
	}
	providerFields   = []field{{"provider", true}, {"properties", true}}
	indexTableFields = []field{{"definition-version", true}, {"properties", true}}
	tableFields      = []field{{"identifier", false}, {"provider", true}, {"properties", true}}
	identifierFields = []field{{"catalog", true}, {"namespace", true}, {"name", true}}
	centroidFields   = []field{
		{"format-version", true}, {"artifact-uuid", true}, {"fingerprint", true},
		{"created-at-ms", true}, {"descriptor", true}, {"centroids", true}, {"roots", true},
	}
	descriptorFields = []field{
		{"vector-field", true}, {"dimension", true}, {"metric", true}, {"nlist", true},
		{"clustering-profile-version", true},
	}
)

func (d *decoder) metadata(n *node, m *Metadata) {
	var root jpath
	if !d.begin(n, &root) {
		return
	}
	var seen uint32
	for _, mem := range n.members {
		v, p := mem.val, root.key(mem.name)
		switch d.field(&p, metadataFields, mem.name, &seen) {
		case 0:
			d.i32(v, &p, &m.FormatVersion)
		case 1:
			d.str(v, &p, &m.IndexUUID)
		case 2:
			d.i64(v, &p, &m.LastUpdatedMs)
		case 3:
			d.i64(v, &p, &m.LastSequenceNumber)
		case 4:
			d.i64(v, &p, &m.CurrentSnapshotID)
		case 5:
			if v.kind != '[' {
				d.ps.at(p, "expected a list of snapshots, got "+describe(v))
				continue
			}
			m.Snapshots = make([]Snapshot, len(v.elems))
			for i, e := range v.elems {
				ep := p.at(i)
				d.snapshot(e, &ep, &m.Snapshots[i])
			}
		case 6:
			if v.kind != '[' {
				d.ps.at(p, "expected a list of snapshot-log entries, got "+describe(v))
				continue
			}
			m.SnapshotLog = make([]LogEntry, len(v.elems))
			for i, e := range v.elems {
				ep := p.at(i)
				d.logEntry(e, &ep, &m.SnapshotLog[i])
			}
		case 7:
			d.strMap(v, &p, &m.Properties)
		}
	}
	d.missing(&root, metadataFields, seen)
}

func (d *decoder) logEntry(n *node, p *jpath, e *LogEntry) {
	if !d.begin(n, p) {
		return
	}
	var seen uint32
	for _, mem := range n.members {
		v, mp := mem.val, p.key(mem.name)
		switch d.field(&mp, logEntryFields, mem.name, &seen) {
		case 0:
			d.i64(v, &mp, &e.TimestampMs)
		case 1:
			d.i64(v, &mp, &e.SnapshotID)
		}
	}
	d.missing(p, logEntryFields, seen)
}

func (d *decoder) snapshot(n *node, p *jpath, s *Snapshot) {
	if !d.begin(n, p) {
		return
	}
	var seen uint32
	for _, mem := range n.members {
		v, mp := mem.val, p.key(mem.name)
		switch d.field(&mp, snapshotFields, mem.name, &seen) {
		case 0:
			d.i64(v, &mp, &s.SnapshotID)
		case 1:
			d.i64(v, &mp, &s.SequenceNumber)
		case 2:
			d.i64(v, &mp, &s.TimestampMs)
		case 3:
			d.strMap(v, &mp, &s.Summary)
		case 4:
			d.tableDefinition(v, &mp, &s.SourceTable)
		case 5:
			d.str(v, &mp, &s.VectorField)
		case 6:
			d.strList(v, &mp, &s.SourceKeyFields)
		case 7:
			d.i64(v, &mp, &s.IndexedRows)
		case 8:
			d.str(v, &mp, &s.IndexFamily)
		case 9:
			d.i32(v, &mp, &s.IndexSchemaVersion)
		case 10:
			d.str(v, &mp, &s.Metric)
		case 11:
			d.strMap(v, &mp, &s.Parameters)
		case 12:
			d.provider(v, &mp, &s.IndexProvider)
		case 13:
			d.indexTables(v, &mp, &s.IndexTables)
		}
	}
	d.missing(p, snapshotFields, seen)
}

func (d *decoder) provider(n *node, p *jpath, pd *ProviderDefinition) {
	if !d.begin(n, p) {
		return
	}
	var seen uint32
	for _, mem := range n.members {
		v, mp := mem.val, p.key(mem.name)
		switch d.field(&mp, providerFields, mem.name, &seen) {
		case 0:
			d.str(v, &mp, &pd.Provider)
		case 1:
			d.strMap(v, &mp, &pd.Properties)
		}
	}
	d.missing(p, providerFields, seen)
}

func (d *decoder) indexTables(n *node, p *jpath, dst *map[string]IndexTableDefinition) {
	if n.kind != '{' {
		d.ps.at(*p, "expected an object (map<string,index-table-definition>), got "+describe(n))
		return
	}
	tables := make(map[string]IndexTableDefinition, len(n.members))
	for _, mem := range n.members {
		var t IndexTableDefinition
		tp := p.key(mem.name)
		d.indexTable(mem.val, &tp, &t)
		tables[mem.name] = t
	}
	*dst = tables
}

func (d *decoder) indexTable(n *node, p *jpath, t *IndexTableDefinition) {
	if !d.begin(n, p) {
		return
	}
	var seen uint32
	for _, mem := range n.members {
		v, mp := mem.val, p.key(mem.name)
		switch d.field(&mp, indexTableFields, mem.name, &seen) {
		case 0:
			d.i32(v, &mp, &t.DefinitionVersion)
		case 1:
			d.strMap(v, &mp, &t.Properties)
		}
	}
	d.missing(p, indexTableFields, seen)
}

func (d *decoder) tableDefinition(n *node, p *jpath, t *TableDefinition) {
	if !d.begin(n, p) {
		return
	}
	var seen uint32
	for _, mem := range n.members {
		v, mp := mem.val, p.key(mem.name)
		switch d.field(&mp, tableFields, mem.name, &seen) {
		case 0:
			t.Identifier = &TableIdentifier{}
			d.identifier(v, &mp, t.Identifier)
		case 1:
			d.str(v, &mp, &t.Provider)
		case 2:
			d.strMap(v, &mp, &t.Properties)
		}
	}
	d.missing(p, tableFields, seen)
}

func (d *decoder) identifier(n *node, p *jpath, id *TableIdentifier) {
	if !d.begin(n, p) {
		return
	}
	var seen uint32
	for _, mem := range n.members {
		v, mp := mem.val, p.key(mem.name)
		switch d.field(&mp, identifierFields, mem.name, &seen) {
		case 0:
			d.str(v, &mp, &id.Catalog)
		case 1:
			d.strList(v, &mp, &id.Namespace)
		case 2:
			d.str(v, &mp, &id.Name)
		}
	}
	d.missing(p, identifierFields, seen)
}

func (d *decoder) centroid(n *node, c *CentroidMetadata) {
	var root jpath
	if !d.begin(n, &root) {
		return
	}
	var seen uint32
	for _, mem := range n.members {
		v, p := mem.val, root.key(mem.name)
		switch d.field(&p, centroidFields, mem.name, &seen) {
		case 0:
			d.i32(v, &p, &c.FormatVersion)
		case 1:
			d.str(v, &p, &c.ArtifactUUID)
		case 2:
			d.str(v, &p, &c.Fingerprint)
		case 3:
			d.i64(v, &p, &c.CreatedAtMs)
		case 4:
			d.descriptor(v, &p, &c.Descriptor)
		case 5:
			d.str(v, &p, &c.Centroids)
		case 6:
			d.str(v, &p, &c.Roots)
		}
	}
	d.missing(&root, centroidFields, seen)
}

func (d *decoder) descriptor(n *node, p *jpath, dd *Descriptor) {
	if !d.begin(n, p) {
		return
	}
	var seen uint32
	for _, mem := range n.members {
		v, mp := mem.val, p.key(mem.name)
		switch d.field(&mp, descriptorFields, mem.name, &seen) {
		case 0:
			d.str(v, &mp, &dd.VectorField)
		case 1:
			d.i32(v, &mp, &dd.Dimension)
		case 2:
			d.str(v, &mp, &dd.Metric)
		case 3:
			d.i32(v, &mp, &dd.NList)
		case 4:
			d.i32(v, &mp, &dd.ClusteringProfileVersion)
		}
	}
	d.missing(p, descriptorFields, seen)
}
