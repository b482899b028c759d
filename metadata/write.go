package metadata

import (
	"strconv"
)

// Marshal returns the canonical bytes of m after validating it (an invalid
// m gives a *ValidationError and no bytes). Canonical form
// (docs/format.md): UTF-8 JSON indented by two spaces, object members in the
// spec's field order, map keys sorted by byte order, strings with only the
// mandatory escapes (no HTML escaping), integers in plain base 10, and one
// trailing newline. Optional members are written when set: a nil
// Metadata.Properties or TableDefinition.Identifier is omitted, an empty
// non-nil Properties is written as {}. Parse(Marshal(m)) yields an equal value
// and Marshal of that is byte-identical.
func Marshal(m *Metadata) ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return marshal(m), nil
}

// marshal writes the canonical bytes of m, which must validate.
func marshal(m *Metadata) []byte {
	// Room for a typical snapshot (1.5 to 2 KB written) each, so that a
	// large document is not copied over and over as it grows.
	w := writer{b: make([]byte, 0, 1024+2048*len(m.Snapshots)+80*len(m.SnapshotLog))}
	w.beginObject()
	w.name("format-version")
	w.int(int64(m.FormatVersion))
	w.name("index-uuid")
	w.str(m.IndexUUID)
	w.name("last-updated-ms")
	w.int(m.LastUpdatedMs)
	w.name("last-sequence-number")
	w.int(m.LastSequenceNumber)
	w.name("current-snapshot-id")
	w.int(m.CurrentSnapshotID)
	w.name("snapshots")
	w.beginArray()
	for i := range m.Snapshots {
		w.elem()
		w.snapshot(&m.Snapshots[i])
	}
	w.endArray()
	w.name("snapshot-log")
	w.beginArray()
	for _, e := range m.SnapshotLog {
		w.elem()
		w.beginObject()
		w.name("timestamp-ms")
		w.int(e.TimestampMs)
		w.name("snapshot-id")
		w.int(e.SnapshotID)
		w.endObject()
	}
	w.endArray()
	if m.Properties != nil {
		w.name("properties")
		w.strMap(m.Properties)
	}
	w.endObject()
	return w.finish()
}

// MarshalCentroid returns the canonical bytes of c after validating it, in
// the same canonical form as Marshal, fields in ivf-index-schema §3 order.
func MarshalCentroid(c *CentroidMetadata) ([]byte, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	var w writer
	w.beginObject()
	w.name("format-version")
	w.int(int64(c.FormatVersion))
	w.name("artifact-uuid")
	w.str(c.ArtifactUUID)
	w.name("fingerprint")
	w.str(c.Fingerprint)
	w.name("created-at-ms")
	w.int(c.CreatedAtMs)
	w.name("descriptor")
	w.beginObject()
	w.name("vector-field")
	w.str(c.Descriptor.VectorField)
	w.name("dimension")
	w.int(int64(c.Descriptor.Dimension))
	w.name("metric")
	w.str(c.Descriptor.Metric)
	w.name("nlist")
	w.int(int64(c.Descriptor.NList))
	w.name("clustering-profile-version")
	w.int(int64(c.Descriptor.ClusteringProfileVersion))
	w.endObject()
	w.name("centroids")
	w.str(c.Centroids)
	w.name("roots")
	w.str(c.Roots)
	w.endObject()
	return w.finish(), nil
}

func (w *writer) snapshot(s *Snapshot) {
	w.beginObject()
	w.name("snapshot-id")
	w.int(s.SnapshotID)
	w.name("sequence-number")
	w.int(s.SequenceNumber)
	w.name("timestamp-ms")
	w.int(s.TimestampMs)
	w.name("summary")
	w.strMap(s.Summary)
	w.name("source-table")
	w.beginObject()
	if id := s.SourceTable.Identifier; id != nil {
		w.name("identifier")
		w.beginObject()
		w.name("catalog")
		w.str(id.Catalog)
		w.name("namespace")
		w.strList(id.Namespace)
		w.name("name")
		w.str(id.Name)
		w.endObject()
	}
	w.name("provider")
	w.str(s.SourceTable.Provider)
	w.name("properties")
	w.strMap(s.SourceTable.Properties)
	w.endObject()
	w.name("vector-field")
	w.str(s.VectorField)
	w.name("source-key-fields")
	w.strList(s.SourceKeyFields)
	w.name("indexed-rows")
	w.int(s.IndexedRows)
	w.name("index-family")
	w.str(s.IndexFamily)
	w.name("index-schema-version")
	w.int(int64(s.IndexSchemaVersion))
	w.name("metric")
	w.str(s.Metric)
	w.name("parameters")
	w.strMap(s.Parameters)
	w.name("index-provider")
	w.beginObject()
	w.name("provider")
	w.str(s.IndexProvider.Provider)
	w.name("properties")
	w.strMap(s.IndexProvider.Properties)
	w.endObject()
	w.name("index-tables")
	w.beginObject()
	var buf [8]string
	for _, role := range appendSortedKeys(buf[:0], s.IndexTables) {
		t := s.IndexTables[role]
		w.name(role)
		w.beginObject()
		w.name("definition-version")
		w.int(int64(t.DefinitionVersion))
		w.name("properties")
		w.strMap(t.Properties)
		w.endObject()
	}
	w.endObject()
	w.endObject()
}

// writer produces the canonical indented form. first holds, per open
// object or array, whether no member or element has been written yet.
type writer struct {
	b     []byte
	first []bool
}

const indent = "                                " // 16 levels

func (w *writer) newline() {
	w.b = append(w.b, '\n')
	n := 2 * len(w.first)
	for n > len(indent) {
		w.b = append(w.b, indent...)
		n -= len(indent)
	}
	w.b = append(w.b, indent[:n]...)
}

func (w *writer) begin(c byte) {
	w.b = append(w.b, c)
	w.first = append(w.first, true)
}

func (w *writer) end(c byte) {
	empty := w.first[len(w.first)-1]
	w.first = w.first[:len(w.first)-1]
	if !empty {
		w.newline()
	}
	w.b = append(w.b, c)
}

// elem starts the next member or element.
func (w *writer) elem() {
	top := len(w.first) - 1
	if !w.first[top] {
		w.b = append(w.b, ',')
	}
	w.first[top] = false
	w.newline()
}

func (w *writer) beginObject() { w.begin('{') }
func (w *writer) endObject()   { w.end('}') }
func (w *writer) beginArray()  { w.begin('[') }
func (w *writer) endArray()    { w.end(']') }

func (w *writer) name(n string) {
	w.elem()
	w.b = appendQuoted(w.b, n)
	w.b = append(w.b, ':', ' ')
}

func (w *writer) str(s string) { w.b = appendQuoted(w.b, s) }
func (w *writer) int(v int64)  { w.b = strconv.AppendInt(w.b, v, 10) }

func (w *writer) strMap(m map[string]string) {
	w.beginObject()
	var buf [16]string
	for _, k := range appendSortedKeys(buf[:0], m) {
		w.name(k)
		w.str(m[k])
	}
	w.endObject()
}

func (w *writer) strList(l []string) {
	w.beginArray()
	for _, s := range l {
		w.elem()
		w.str(s)
	}
	w.endArray()
}

func (w *writer) finish() []byte { return append(w.b, '\n') }
