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
	decode   func(n *node, path string)
}

func (d *decoder) object(n *node, path string, fields []field) {
	if n.kind != '{' {
		d.ps.add(path, "expected an object, got "+describe(n))
		return
	}
	seen := make([]bool, len(fields))
	for _, m := range n.members {
		p := member(path, m.name)
		i := fieldIndex(fields, m.name)
		if i < 0 {
			d.ps.add(p, "unknown field")
			continue
		}
		seen[i] = true
		fields[i].decode(m.val, p)
	}
	for i, f := range fields {
		if f.required && !seen[i] {
			d.ps.add(member(path, f.name), "required field is missing")
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

func (d *decoder) str(dst *string) func(*node, string) {
	return func(n *node, path string) {
		if n.kind != '"' {
			d.ps.add(path, "expected a string, got "+describe(n))
			return
		}
		*dst = n.text
	}
}

func (d *decoder) integer(n *node, path string, bits int) (int64, bool) {
	typ := "long"
	if bits == 32 {
		typ = "int"
	}
	if n.kind != '0' {
		d.ps.add(path, "expected an integer ("+typ+"), got "+describe(n))
		return 0, false
	}
	if strings.ContainsAny(n.text, ".eE") {
		d.ps.add(path, "expected an integer literal ("+typ+"), got "+n.text)
		return 0, false
	}
	v, err := strconv.ParseInt(n.text, 10, bits)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			d.ps.add(path, fmt.Sprintf("integer %s is out of range for %s (signed %d-bit)", n.text, typ, bits))
		} else {
			d.ps.add(path, "expected an integer literal ("+typ+"), got "+n.text)
		}
		return 0, false
	}
	return v, true
}

func (d *decoder) i32(dst *int32) func(*node, string) {
	return func(n *node, path string) {
		if v, ok := d.integer(n, path, 32); ok {
			*dst = int32(v)
		}
	}
}

func (d *decoder) i64(dst *int64) func(*node, string) {
	return func(n *node, path string) {
		if v, ok := d.integer(n, path, 64); ok {
			*dst = v
		}
	}
}

// strMap decodes a map<string,string>; an empty object gives a non-nil
// empty map so that "absent" (nil) and "{}" stay distinct.
func (d *decoder) strMap(dst *map[string]string) func(*node, string) {
	return func(n *node, path string) {
		if n.kind != '{' {
			d.ps.add(path, "expected an object (map<string,string>), got "+describe(n))
			return
		}
		m := make(map[string]string, len(n.members))
		for _, mem := range n.members {
			p := member(path, mem.name)
			if mem.val.kind != '"' {
				d.ps.add(p, "expected a string, got "+describe(mem.val))
				continue
			}
			m[mem.name] = mem.val.text
		}
		*dst = m
	}
}

func (d *decoder) strList(dst *[]string) func(*node, string) {
	return func(n *node, path string) {
		if n.kind != '[' {
			d.ps.add(path, "expected a list of strings, got "+describe(n))
			return
		}
		l := make([]string, 0, len(n.elems))
		for i, e := range n.elems {
			if e.kind != '"' {
				d.ps.add(index(path, i), "expected a string, got "+describe(e))
				continue
			}
			l = append(l, e.text)
		}
		*dst = l
	}
}

func (d *decoder) metadata(n *node, m *Metadata) {
	d.object(n, "", []field{
		{"format-version", true, d.i32(&m.FormatVersion)},
		{"index-uuid", true, d.str(&m.IndexUUID)},
		{"last-updated-ms", true, d.i64(&m.LastUpdatedMs)},
		{"last-sequence-number", true, d.i64(&m.LastSequenceNumber)},
		{"current-snapshot-id", true, d.i64(&m.CurrentSnapshotID)},
		{"snapshots", true, func(n *node, path string) {
			if n.kind != '[' {
				d.ps.add(path, "expected a list of snapshots, got "+describe(n))
				return
			}
			m.Snapshots = make([]Snapshot, len(n.elems))
			for i, e := range n.elems {
				d.snapshot(e, index(path, i), &m.Snapshots[i])
			}
		}},
		{"snapshot-log", true, func(n *node, path string) {
			if n.kind != '[' {
				d.ps.add(path, "expected a list of snapshot-log entries, got "+describe(n))
				return
			}
			m.SnapshotLog = make([]LogEntry, len(n.elems))
			for i, e := range n.elems {
				le := &m.SnapshotLog[i]
				d.object(e, index(path, i), []field{
					{"timestamp-ms", true, d.i64(&le.TimestampMs)},
					{"snapshot-id", true, d.i64(&le.SnapshotID)},
				})
			}
		}},
		{"properties", false, d.strMap(&m.Properties)},
	})
}

func (d *decoder) snapshot(n *node, path string, s *Snapshot) {
	d.object(n, path, []field{
		{"snapshot-id", true, d.i64(&s.SnapshotID)},
		{"sequence-number", true, d.i64(&s.SequenceNumber)},
		{"timestamp-ms", true, d.i64(&s.TimestampMs)},
		{"summary", true, d.strMap(&s.Summary)},
		{"source-table", true, func(n *node, path string) { d.tableDefinition(n, path, &s.SourceTable) }},
		{"vector-field", true, d.str(&s.VectorField)},
		{"source-key-fields", true, d.strList(&s.SourceKeyFields)},
		{"indexed-rows", true, d.i64(&s.IndexedRows)},
		{"index-family", true, d.str(&s.IndexFamily)},
		{"index-schema-version", true, d.i32(&s.IndexSchemaVersion)},
		{"metric", true, d.str(&s.Metric)},
		{"parameters", true, d.strMap(&s.Parameters)},
		{"index-provider", true, func(n *node, path string) {
			d.object(n, path, []field{
				{"provider", true, d.str(&s.IndexProvider.Provider)},
				{"properties", true, d.strMap(&s.IndexProvider.Properties)},
			})
		}},
		{"index-tables", true, func(n *node, path string) {
			if n.kind != '{' {
				d.ps.add(path, "expected an object (map<string,index-table-definition>), got "+describe(n))
				return
			}
			s.IndexTables = make(map[string]IndexTableDefinition, len(n.members))
			for _, mem := range n.members {
				var t IndexTableDefinition
				d.object(mem.val, member(path, mem.name), []field{
					{"definition-version", true, d.i32(&t.DefinitionVersion)},
					{"properties", true, d.strMap(&t.Properties)},
				})
				s.IndexTables[mem.name] = t
			}
		}},
	})
}

func (d *decoder) tableDefinition(n *node, path string, t *TableDefinition) {
	d.object(n, path, []field{
		{"identifier", false, func(n *node, path string) {
			t.Identifier = &TableIdentifier{}
			d.object(n, path, []field{
				{"catalog", true, d.str(&t.Identifier.Catalog)},
				{"namespace", true, d.strList(&t.Identifier.Namespace)},
				{"name", true, d.str(&t.Identifier.Name)},
			})
		}},
		{"provider", true, d.str(&t.Provider)},
		{"properties", true, d.strMap(&t.Properties)},
	})
}

func (d *decoder) centroid(n *node, c *CentroidMetadata) {
	d.object(n, "", []field{
		{"format-version", true, d.i32(&c.FormatVersion)},
		{"artifact-uuid", true, d.str(&c.ArtifactUUID)},
		{"fingerprint", true, d.str(&c.Fingerprint)},
		{"created-at-ms", true, d.i64(&c.CreatedAtMs)},
		{"descriptor", true, func(n *node, path string) {
			dd := &c.Descriptor
			d.object(n, path, []field{
				{"vector-field", true, d.str(&dd.VectorField)},
				{"dimension", true, d.i32(&dd.Dimension)},
				{"metric", true, d.str(&dd.Metric)},
				{"nlist", true, d.i32(&dd.NList)},
				{"clustering-profile-version", true, d.i32(&dd.ClusteringProfileVersion)},
			})
		}},
		{"centroids", true, d.str(&c.Centroids)},
		{"roots", true, d.str(&c.Roots)},
	})
}
