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

// field describes one member of a fixed-shape object of type T: its name
// as the spec writes it, whether it is required, and how its value is
// decoded into a T. No member of any metadata object is nullable: an
// optional member is either present with a value or absent.
//
// decode gets the member's path by value: only the path of the object
// being decoded (its parent) then moves to the heap, not one per member.
type field[T any] struct {
	name     string
	required bool
	decode   func(d *decoder, v *node, p jpath, dst *T)
}

// object decodes object n at p into dst, matching each of its members to
// fields by name. It reports, as the spec's member order asks, an unknown
// field or the member's own problems for each member in document order,
// then each missing required field. Objects have at most 32 members.
func object[T any](d *decoder, n *node, p *jpath, fields []field[T], dst *T) {
	if !d.begin(n, p) {
		return
	}
	var seen uint32
	for _, mem := range n.members {
		mp := p.key(mem.name)
		i := fieldIndex(fields, mem.name)
		if i < 0 {
			d.ps.at(mp, "unknown field")
			continue
		}
		seen |= 1 << i
		fields[i].decode(d, mem.val, mp, dst)
	}
	for i, f := range fields {
		if f.required && seen&(1<<i) == 0 {
			d.ps.at(p.key(f.name), "required field is missing")
		}
	}
}

// begin reports n unless it is an object.
func (d *decoder) begin(n *node, p *jpath) bool {
	if n.kind != '{' {
		d.ps.at(*p, "expected an object, got "+describe(n))
		return false
	}
	return true
}

func fieldIndex[T any](fields []field[T], name string) int {
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

// The members of every metadata object, in the spec's order (the order
// Marshal writes: TestMemberOrder); decoding matches by name, so the order
// only decides which missing field is reported first.
var (
	metadataFields = []field[Metadata]{
		{"format-version", true, func(d *decoder, v *node, p jpath, m *Metadata) { d.i32(v, &p, &m.FormatVersion) }},
		{"index-uuid", true, func(d *decoder, v *node, p jpath, m *Metadata) { d.str(v, &p, &m.IndexUUID) }},
		{"last-updated-ms", true, func(d *decoder, v *node, p jpath, m *Metadata) { d.i64(v, &p, &m.LastUpdatedMs) }},
		{"last-sequence-number", true, func(d *decoder, v *node, p jpath, m *Metadata) { d.i64(v, &p, &m.LastSequenceNumber) }},
		{"current-snapshot-id", true, func(d *decoder, v *node, p jpath, m *Metadata) { d.i64(v, &p, &m.CurrentSnapshotID) }},
		{"snapshots", true, func(d *decoder, v *node, p jpath, m *Metadata) {
			if v.kind != '[' {
				d.ps.at(p, "expected a list of snapshots, got "+describe(v))
				return
			}
			m.Snapshots = make([]Snapshot, len(v.elems))
			for i, e := range v.elems {
				ep := p.at(i)
				object(d, e, &ep, snapshotFields, &m.Snapshots[i])
			}
		}},
		{"snapshot-log", true, func(d *decoder, v *node, p jpath, m *Metadata) {
			if v.kind != '[' {
				d.ps.at(p, "expected a list of snapshot-log entries, got "+describe(v))
				return
			}
			m.SnapshotLog = make([]LogEntry, len(v.elems))
			for i, e := range v.elems {
				ep := p.at(i)
				object(d, e, &ep, logEntryFields, &m.SnapshotLog[i])
			}
		}},
		{"properties", false, func(d *decoder, v *node, p jpath, m *Metadata) { d.strMap(v, &p, &m.Properties) }},
	}
	logEntryFields = []field[LogEntry]{
		{"timestamp-ms", true, func(d *decoder, v *node, p jpath, e *LogEntry) { d.i64(v, &p, &e.TimestampMs) }},
		{"snapshot-id", true, func(d *decoder, v *node, p jpath, e *LogEntry) { d.i64(v, &p, &e.SnapshotID) }},
	}
	snapshotFields = []field[Snapshot]{
		{"snapshot-id", true, func(d *decoder, v *node, p jpath, s *Snapshot) { d.i64(v, &p, &s.SnapshotID) }},
		{"sequence-number", true, func(d *decoder, v *node, p jpath, s *Snapshot) { d.i64(v, &p, &s.SequenceNumber) }},
		{"timestamp-ms", true, func(d *decoder, v *node, p jpath, s *Snapshot) { d.i64(v, &p, &s.TimestampMs) }},
		{"summary", true, func(d *decoder, v *node, p jpath, s *Snapshot) { d.strMap(v, &p, &s.Summary) }},
		{"source-table", true, func(d *decoder, v *node, p jpath, s *Snapshot) { object(d, v, &p, tableFields, &s.SourceTable) }},
		{"vector-field", true, func(d *decoder, v *node, p jpath, s *Snapshot) { d.str(v, &p, &s.VectorField) }},
		{"source-key-fields", true, func(d *decoder, v *node, p jpath, s *Snapshot) { d.strList(v, &p, &s.SourceKeyFields) }},
		{"indexed-rows", true, func(d *decoder, v *node, p jpath, s *Snapshot) { d.i64(v, &p, &s.IndexedRows) }},
		{"index-family", true, func(d *decoder, v *node, p jpath, s *Snapshot) { d.str(v, &p, &s.IndexFamily) }},
		{"index-schema-version", true, func(d *decoder, v *node, p jpath, s *Snapshot) { d.i32(v, &p, &s.IndexSchemaVersion) }},
		{"metric", true, func(d *decoder, v *node, p jpath, s *Snapshot) { d.str(v, &p, &s.Metric) }},
		{"parameters", true, func(d *decoder, v *node, p jpath, s *Snapshot) { d.strMap(v, &p, &s.Parameters) }},
		{"index-provider", true, func(d *decoder, v *node, p jpath, s *Snapshot) {
			object(d, v, &p, providerFields, &s.IndexProvider)
		}},
		{"index-tables", true, func(d *decoder, v *node, p jpath, s *Snapshot) { d.indexTables(v, &p, &s.IndexTables) }},
	}
	providerFields = []field[ProviderDefinition]{
		{"provider", true, func(d *decoder, v *node, p jpath, pd *ProviderDefinition) { d.str(v, &p, &pd.Provider) }},
		{"properties", true, func(d *decoder, v *node, p jpath, pd *ProviderDefinition) { d.strMap(v, &p, &pd.Properties) }},
	}
	indexTableFields = []field[IndexTableDefinition]{
		{"definition-version", true, func(d *decoder, v *node, p jpath, t *IndexTableDefinition) {
			d.i32(v, &p, &t.DefinitionVersion)
		}},
		{"properties", true, func(d *decoder, v *node, p jpath, t *IndexTableDefinition) { d.strMap(v, &p, &t.Properties) }},
	}
	tableFields = []field[TableDefinition]{
		{"identifier", false, func(d *decoder, v *node, p jpath, t *TableDefinition) {
			t.Identifier = &TableIdentifier{}
			object(d, v, &p, identifierFields, t.Identifier)
		}},
		{"provider", true, func(d *decoder, v *node, p jpath, t *TableDefinition) { d.str(v, &p, &t.Provider) }},
		{"properties", true, func(d *decoder, v *node, p jpath, t *TableDefinition) { d.strMap(v, &p, &t.Properties) }},
	}
	identifierFields = []field[TableIdentifier]{
		{"catalog", true, func(d *decoder, v *node, p jpath, id *TableIdentifier) { d.str(v, &p, &id.Catalog) }},
		{"namespace", true, func(d *decoder, v *node, p jpath, id *TableIdentifier) { d.strList(v, &p, &id.Namespace) }},
		{"name", true, func(d *decoder, v *node, p jpath, id *TableIdentifier) { d.str(v, &p, &id.Name) }},
	}
	centroidFields = []field[CentroidMetadata]{
		{"format-version", true, func(d *decoder, v *node, p jpath, c *CentroidMetadata) { d.i32(v, &p, &c.FormatVersion) }},
		{"artifact-uuid", true, func(d *decoder, v *node, p jpath, c *CentroidMetadata) { d.str(v, &p, &c.ArtifactUUID) }},
		{"fingerprint", true, func(d *decoder, v *node, p jpath, c *CentroidMetadata) { d.str(v, &p, &c.Fingerprint) }},
		{"created-at-ms", true, func(d *decoder, v *node, p jpath, c *CentroidMetadata) { d.i64(v, &p, &c.CreatedAtMs) }},
		{"descriptor", true, func(d *decoder, v *node, p jpath, c *CentroidMetadata) {
			object(d, v, &p, descriptorFields, &c.Descriptor)
		}},
		{"centroids", true, func(d *decoder, v *node, p jpath, c *CentroidMetadata) { d.str(v, &p, &c.Centroids) }},
		{"roots", true, func(d *decoder, v *node, p jpath, c *CentroidMetadata) { d.str(v, &p, &c.Roots) }},
	}
	descriptorFields = []field[Descriptor]{
		{"vector-field", true, func(d *decoder, v *node, p jpath, dd *Descriptor) { d.str(v, &p, &dd.VectorField) }},
		{"dimension", true, func(d *decoder, v *node, p jpath, dd *Descriptor) { d.i32(v, &p, &dd.Dimension) }},
		{"metric", true, func(d *decoder, v *node, p jpath, dd *Descriptor) { d.str(v, &p, &dd.Metric) }},
		{"nlist", true, func(d *decoder, v *node, p jpath, dd *Descriptor) { d.i32(v, &p, &dd.NList) }},
		{"clustering-profile-version", true, func(d *decoder, v *node, p jpath, dd *Descriptor) {
			d.i32(v, &p, &dd.ClusteringProfileVersion)
		}},
	}
)

// metadata decodes an index metadata document.
func (d *decoder) metadata(n *node, m *Metadata) {
	var root jpath
	object(d, n, &root, metadataFields, m)
}

// centroid decodes a centroid metadata document.
func (d *decoder) centroid(n *node, c *CentroidMetadata) {
	var root jpath
	object(d, n, &root, centroidFields, c)
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
		object(d, mem.val, &tp, indexTableFields, &t)
		tables[mem.name] = t
	}
	*dst = tables
}
