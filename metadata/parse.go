package metadata

// Parse strictly parses and validates an index metadata document; see
// ParseFile. Errors name no file.
func Parse(data []byte) (*Metadata, error) { return ParseFile("", data) }

// ParseFile strictly parses an index metadata document (RFC 8259 JSON, see
// docs/format.md) and validates it. file only names the document in errors.
//
// Checking runs in three phases, and each reports every problem it finds:
//  1. syntax: a byte-order mark, invalid UTF-8, a JSON syntax error (which
//     stops reading) or trailing data; duplicate keys at any depth;
//  2. structure: unknown fields, missing required fields, null, wrong JSON
//     types, non-integer numbers in int/long fields, out-of-range integers;
//  3. semantics: every rule of Validate.
//
// A later phase runs only when the earlier ones found nothing, because its
// findings would be guesses about values that could not be read. The error
// is then a *ValidationError wrapping ErrInvalid. The result shares no memory
// with data.
func ParseFile(file string, data []byte) (*Metadata, error) {
	var ps problems
	root := parseTree(data, &ps)
	if len(ps.list) > 0 {
		return nil, ps.err(file)
	}
	m := new(Metadata)
	(&decoder{ps: &ps}).metadata(root, m)
	if len(ps.list) > 0 {
		return nil, ps.err(file)
	}
	m.validate(&ps)
	if len(ps.list) > 0 {
		return nil, ps.err(file)
	}
	return m, nil
}

// ParseCentroid strictly parses and validates an IVF centroid metadata
// document; see ParseCentroidFile. Errors name no file.
func ParseCentroid(data []byte) (*CentroidMetadata, error) { return ParseCentroidFile("", data) }

// ParseCentroidFile strictly parses an IVF centroid metadata document
// (ivf-index-schema §3) and validates it, in the same phases and with the
// same JSON rules as ParseFile. file only names the document in errors.
func ParseCentroidFile(file string, data []byte) (*CentroidMetadata, error) {
	var ps problems
	root := parseTree(data, &ps)
	if len(ps.list) > 0 {
		return nil, ps.err(file)
	}
	c := new(CentroidMetadata)
	(&decoder{ps: &ps}).centroid(root, c)
	if len(ps.list) > 0 {
		return nil, ps.err(file)
	}
	c.validate(&ps)
	if len(ps.list) > 0 {
		return nil, ps.err(file)
	}
	return c, nil
}
