package postings

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/parqdb/parqdb/location"
)

// ManifestName is the fixed name of the postings manifest inside the
// ivf_postings table folder (properties.location).
const ManifestName = "manifest.json"

// ManifestVersion is the manifest-version of a manifest without a key-rows
// table. A manifest with one (member "key-rows", profile §9.5) has version
// ManifestVersionKeyRows; ParseManifest reads both, and a reader that knows
// only version 1 refuses version 2 by its version rather than by an
// unknown member.
const ManifestVersion = 1

// ManifestVersionKeyRows is the manifest-version of a manifest with a
// key-rows table.
const ManifestVersionKeyRows = 2

// MaxManifestSize is the largest manifest ParseManifest accepts, in bytes.
const MaxManifestSize = 1 << 30

// Manifest is the postings manifest of one ivf_postings table. Build one
// with NewManifest, read one with ParseManifest; both validate every
// invariant listed in the profile, so a Manifest value is always valid.
// A Manifest is immutable and safe for concurrent readers.
type Manifest struct {
	// Encoding, Dim and KeyTypes give the postings schema; key names are
	// empty (the snapshot's source-key-fields name them).
	Encoding string
	Dim      int
	KeyTypes []KeyType
	// NList is the number of clusters C; every CID is in [0, NList).
	NList int32
	// Rows is the number of postings rows N.
	Rows int64
	// CIDs is the number of distinct CIDs with at least one row.
	CIDs int64
	// Files are the postings files.
	Files []FileEntry
	// RowGroups are every row group of every file, sorted by CID, file
	// and ordinal.
	RowGroups []Range
	// KeyRows is the key-rows table (version 2), or nil (version 1: readers
	// build the key → row map from the source).
	KeyRows *KeyRowsEntry
}

// KeyRowsEntry locates the key-rows table of a manifest.
type KeyRowsEntry struct {
	// Path is the table's full warehouse-relative location.
	Path string
	// Size is its length in bytes.
	Size int64
	// Rows is its row count: the manifest's rows, one per source row.
	Rows int64
}

// WithKeyRows returns a copy of m (which it does not change) that lists
// the key-rows table e, validated.
func (m *Manifest) WithKeyRows(e KeyRowsEntry) (*Manifest, error) {
	c := *m
	c.KeyRows = &e
	if err := c.validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// Schema returns the postings schema the manifest declares (key names
// empty).
func (m *Manifest) Schema() Schema {
	return Schema{Encoding: m.Encoding, Dim: m.Dim, Keys: slices.Clone(m.KeyTypes)}
}

// Ranges returns the row groups holding cid, in file and ordinal order; nil
// if the CID is empty. The result aliases the manifest: do not modify it.
func (m *Manifest) Ranges(cid int32) []Range {
	i := sort.Search(len(m.RowGroups), func(i int) bool { return m.RowGroups[i].CID >= cid })
	j := i
	for j < len(m.RowGroups) && m.RowGroups[j].CID == cid {
		j++
	}
	if i == j {
		return nil
	}
	return m.RowGroups[i:j:j]
}

// CheckSchema reports whether the manifest's schema equals s (encoding,
// dimension and key types; key names are not compared).
func (m *Manifest) CheckSchema(s Schema) error {
	if m.Encoding != s.Encoding || m.Dim != s.Dim || len(m.KeyTypes) != len(s.Keys) {
		return errorf(ErrManifest, "manifest", "schema %s/%d/%d keys, want %s/%d/%d keys", m.Encoding, m.Dim, len(m.KeyTypes), s.Encoding, s.Dim, len(s.Keys))
	}
	for i, k := range s.Keys {
		if m.KeyTypes[i].TypeName() != k.TypeName() {
			return errorf(ErrManifest, fmt.Sprintf("manifest key-types[%d]", i), "%s, want %s", m.KeyTypes[i].TypeName(), k.TypeName())
		}
	}
	return nil
}

// CheckRoots checks the root-bucketed rule against the ivf_roots offsets
// (ReadRoots): nlist equals offsets[R], and every CID of a file lies in its
// bucket's interval [offsets[b], offsets[b+1]).
func (m *Manifest) CheckRoots(offsets []int32) error {
	if len(offsets) < 2 || offsets[len(offsets)-1] != m.NList {
		return errorf(ErrManifest, "manifest nlist", "%d, but the roots cover %d leaves", m.NList, offsets[max(len(offsets)-1, 0)])
	}
	for i, r := range m.RowGroups {
		b := m.Files[r.File].Bucket
		if int(b) >= len(offsets)-1 {
			return errorf(ErrManifest, fmt.Sprintf("manifest files[%d]", r.File), "bucket %d but only %d roots", b, len(offsets)-1)
		}
		if r.CID < offsets[b] || r.CID >= offsets[b+1] {
			return errorf(ErrManifest, fmt.Sprintf("manifest row-groups[%d]", i), "cid %d outside bucket %d interval [%d, %d)", r.CID, b, offsets[b], offsets[b+1])
		}
	}
	return nil
}

// CheckLocation checks every file path against the table location loc (the
// ivf_postings properties.location, "indexes/<uuid32>/<snapshot-id>-<write-id>/ivf_postings/"):
// each path must lie in the same index folder "indexes/<uuid32>/", so that
// a later snapshot can reuse an earlier snapshot's files but no index can
// reach another's.
func (m *Manifest) CheckLocation(loc string) error {
	idx, err := indexFolder(loc)
	if err != nil {
		return err
	}
	for i, f := range m.Files {
		if !strings.HasPrefix(f.Path, idx) {
			return errorf(ErrManifest, fmt.Sprintf("manifest files[%d].path", i), "%q is not under index folder %q", f.Path, idx)
		}
	}
	if m.KeyRows != nil && !strings.HasPrefix(m.KeyRows.Path, idx) {
		return errorf(ErrManifest, "manifest key-rows.path", "%q is not under index folder %q", m.KeyRows.Path, idx)
	}
	return nil
}

// minRowBytes is the fewest bytes one row occupies in a row group's column
// chunks (page headers not counted); it bounds Rows by Length.
func (s Schema) minRowBytes() int64 {
	n := int64(4) // cid
	for _, k := range s.Keys {
		switch k.Kind {
		case KindInt32, KindDate, KindBinary, KindString:
			n += 4
		case KindInt64:
			n += 8
		case KindFixed:
			n += int64(k.FixedLen)
		}
	}
	if s.HasCodes() {
		n += 12 + int64(s.CodeLen())
	}
	return n
}

// NewManifest builds and validates the manifest of files for schema s
// (key names ignored) and nlist clusters. Every file must come from
// BucketWriter.Close with Path set; File indexes are assigned in the order
// of files.
func NewManifest(s Schema, nlist int32, files []FileEntry) (*Manifest, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	m := &Manifest{Encoding: s.Encoding, Dim: s.Dim, NList: nlist, Files: make([]FileEntry, len(files))}
	for _, k := range s.Keys {
		m.KeyTypes = append(m.KeyTypes, KeyType{Kind: k.Kind, FixedLen: k.FixedLen})
	}
	cids := map[int32]bool{}
	for i, f := range files {
		if len(f.Ranges) != int(f.RowGroups) {
			return nil, errorf(ErrManifest, fmt.Sprintf("files[%d]", i), "%d ranges for %d row groups", len(f.Ranges), f.RowGroups)
		}
		f.Ranges = nil
		m.Files[i] = f
		for _, r := range files[i].Ranges {
			r.File = int32(i)
			m.RowGroups = append(m.RowGroups, r)
			m.Rows += r.Rows
			cids[r.CID] = true
		}
	}
	m.CIDs = int64(len(cids))
	sortRanges(m.RowGroups)
	if err := m.validate(); err != nil {
		return nil, err
	}
	return m, nil
}

func sortRanges(rs []Range) {
	slices.SortFunc(rs, func(a, b Range) int {
		if a.CID != b.CID {
			return int(a.CID) - int(b.CID)
		}
		if a.File != b.File {
			return int(a.File) - int(b.File)
		}
		return int(a.RowGroup) - int(b.RowGroup)
	})
}

// validate checks every intrinsic invariant (the profile's manifest rules
// M1–M12).
func (m *Manifest) validate() error {
	bad := func(where, format string, args ...any) error {
		return errorf(ErrManifest, "manifest "+where, format, args...)
	}
	if err := m.Schema().Validate(); err != nil {
		return bad("schema", "%v", err)
	}
	if m.NList < 1 {
		return bad("nlist", "%d not positive", m.NList)
	}
	if len(m.Files) == 0 {
		return bad("files", "no files")
	}
	paths := make(map[string]bool, len(m.Files))
	for i, f := range m.Files {
		w := fmt.Sprintf("files[%d]", i)
		switch {
		case location.Check(f.Path) != nil:
			return bad(w+".path", "%v", location.Check(f.Path))
		case strings.HasSuffix(f.Path, "/") || !strings.HasSuffix(f.Path, ".parquet"):
			return bad(w+".path", "%q is not a .parquet file", f.Path)
		case paths[f.Path]:
			return bad(w+".path", "duplicate path %q", f.Path)
		case f.Size < minFileSize:
			return bad(w+".size", "%d smaller than a Parquet file", f.Size)
		case f.Bucket < 0 || f.Bucket >= m.NList:
			return bad(w+".bucket", "%d out of range [0, %d)", f.Bucket, m.NList)
		case f.Rows < 1:
			return bad(w+".rows", "%d not positive", f.Rows)
		case f.RowGroups < 1 || f.RowGroups > MaxRowGroupsPerFile:
			return bad(w+".row-groups", "%d out of range [1, %d]", f.RowGroups, MaxRowGroupsPerFile)
		}
		paths[f.Path] = true
	}
	minRow := m.Schema().minRowBytes()
	// per file: ranges by ordinal, to check coverage, order and rows.
	byFile := make([][]Range, len(m.Files))
	var rows, cids int64
	for i, r := range m.RowGroups {
		w := "row-groups[" + strconv.Itoa(i) + "]"
		if r.CID < 0 || r.CID >= m.NList {
			return bad(w, "cid %d out of range [0, %d)", r.CID, m.NList)
		}
		if r.File < 0 || int(r.File) >= len(m.Files) {
			return bad(w, "file %d out of range [0, %d)", r.File, len(m.Files))
		}
		f := &m.Files[r.File]
		switch {
		case r.RowGroup < 0 || r.RowGroup >= f.RowGroups:
			return bad(w, "row group %d out of range [0, %d)", r.RowGroup, f.RowGroups)
		case r.Rows < 1:
			return bad(w, "rows %d not positive", r.Rows)
		case r.Offset < 4 || r.Length < 1 || r.Offset > f.Size-8-r.Length:
			return bad(w, "byte range [%d, +%d) outside the data of %d-byte file %d", r.Offset, r.Length, f.Size, r.File)
		case r.Rows > r.Length/minRow:
			return bad(w, "%d rows cannot fit in %d bytes", r.Rows, r.Length)
		}
		if i > 0 {
			p := m.RowGroups[i-1]
			if p.CID > r.CID || (p.CID == r.CID && (p.File > r.File || (p.File == r.File && p.RowGroup >= r.RowGroup))) {
				return bad(w, "not in (cid, file, row group) order or duplicate after row-groups[%d]", i-1)
			}
		}
		if i == 0 || m.RowGroups[i-1].CID != r.CID {
			cids++
		}
		rows += r.Rows
		byFile[r.File] = append(byFile[r.File], r)
	}
	for fi, rs := range byFile {
		f := &m.Files[fi]
		w := fmt.Sprintf("files[%d]", fi)
		if len(rs) != int(f.RowGroups) {
			return bad(w, "%d row groups listed, file has %d", len(rs), f.RowGroups)
		}
		slices.SortFunc(rs, func(a, b Range) int { return int(a.RowGroup) - int(b.RowGroup) })
		var frows int64
		for j, r := range rs {
			if int(r.RowGroup) != j {
				return bad(w, "row group %d not listed", j)
			}
			if j > 0 {
				p := rs[j-1]
				if r.Offset < p.Offset+p.Length {
					return bad(w, "row group %d range overlaps or precedes row group %d", j, j-1)
				}
				if r.CID < p.CID {
					return bad(w, "row group %d has cid %d after cid %d: cids not ascending", j, r.CID, p.CID)
				}
			}
			frows += r.Rows
		}
		if frows != f.Rows {
			return bad(w+".rows", "%d, row groups hold %d", f.Rows, frows)
		}
	}
	if rows != m.Rows {
		return bad("rows", "%d, row groups hold %d", m.Rows, rows)
	}
	if k := m.KeyRows; k != nil {
		switch {
		case location.Check(k.Path) != nil:
			return bad("key-rows.path", "%v", location.Check(k.Path))
		case !strings.HasSuffix(k.Path, "/"+KeyRowsName):
			return bad("key-rows.path", "%q does not name a %s", k.Path, KeyRowsName)
		case paths[k.Path]:
			return bad("key-rows.path", "%q is also a postings file", k.Path)
		case k.Size < minFileSize:
			return bad("key-rows.size", "%d smaller than a Parquet file", k.Size)
		case k.Rows != m.Rows:
			return bad("key-rows.rows", "%d, the manifest has %d rows", k.Rows, m.Rows)
		}
	}
	if cids != m.CIDs {
		return bad("cids", "%d, row groups hold %d distinct cids", m.CIDs, cids)
	}
	return nil
}

// minFileSize is "PAR1" + a minimal footer + 4-byte length + "PAR1".
const minFileSize = 12

// Marshal returns the manifest as canonical JSON: members in the profile's
// order, no insignificant whitespace except one newline before each file
// and row-group entry.
func (m *Manifest) Marshal() ([]byte, error) {
	if err := m.validate(); err != nil {
		return nil, err
	}
	b := make([]byte, 0, 256+len(m.Files)*128+len(m.RowGroups)*48)
	if m.KeyRows != nil {
		b = append(b, `{"manifest-version":2,"posting-encoding":`...)
	} else {
		b = append(b, `{"manifest-version":1,"posting-encoding":`...)
	}
	b = strconv.AppendQuote(b, m.Encoding)
	b = append(b, `,"dimension":`...)
	b = strconv.AppendInt(b, int64(m.Dim), 10)
	b = append(b, `,"nlist":`...)
	b = strconv.AppendInt(b, int64(m.NList), 10)
	b = append(b, `,"key-types":[`...)
	for i, k := range m.KeyTypes {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, k.TypeName())
	}
	b = append(b, `],"rows":`...)
	b = strconv.AppendInt(b, m.Rows, 10)
	b = append(b, `,"cids":`...)
	b = strconv.AppendInt(b, m.CIDs, 10)
	if k := m.KeyRows; k != nil {
		path, err := jsontext.AppendQuote(nil, k.Path)
		if err != nil {
			return nil, errorf(ErrManifest, "manifest key-rows.path", "%v", err)
		}
		b = append(b, `,"key-rows":{"path":`...)
		b = append(b, path...)
		b = append(b, `,"size":`...)
		b = strconv.AppendInt(b, k.Size, 10)
		b = append(b, `,"rows":`...)
		b = strconv.AppendInt(b, k.Rows, 10)
		b = append(b, '}')
	}
	b = append(b, `,"files":[`...)
	for i, f := range m.Files {
		if i > 0 {
			b = append(b, ',')
		}
		path, err := jsontext.AppendQuote(nil, f.Path)
		if err != nil {
			return nil, errorf(ErrManifest, fmt.Sprintf("manifest files[%d].path", i), "%v", err)
		}
		b = append(b, "\n{\"path\":"...)
		b = append(b, path...)
		b = append(b, `,"size":`...)
		b = strconv.AppendInt(b, f.Size, 10)
		b = append(b, `,"bucket":`...)
		b = strconv.AppendInt(b, int64(f.Bucket), 10)
		b = append(b, `,"rows":`...)
		b = strconv.AppendInt(b, f.Rows, 10)
		b = append(b, `,"row-groups":`...)
		b = strconv.AppendInt(b, int64(f.RowGroups), 10)
		b = append(b, '}')
	}
	b = append(b, `],"row-groups":[`...)
	for i, r := range m.RowGroups {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n["...)
		for j, v := range [...]int64{int64(r.CID), int64(r.File), int64(r.RowGroup), r.Offset, r.Length, r.Rows, int64(r.CRC32C)} {
			if j > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, v, 10)
		}
		b = append(b, ']')
	}
	b = append(b, "]}\n"...)
	return b, nil
}

// ParseManifest parses and validates a manifest. It is strict: the JSON
// must be one object with exactly the profile's members (no unknown,
// missing, duplicate or null member), integers written as integer literals
// within their range, valid UTF-8, nothing after the object but
// whitespace. The error names the member.
func ParseManifest(data []byte) (*Manifest, error) {
	if len(data) > MaxManifestSize {
		return nil, errorf(ErrManifest, "manifest", "%d bytes exceed the %d limit", len(data), MaxManifestSize)
	}
	p := manifestParser{dec: jsontext.NewDecoder(bytes.NewReader(data))}
	m, err := p.parse()
	if err != nil {
		return nil, err
	}
	if err := m.validate(); err != nil {
		return nil, err
	}
	return m, nil
}

type manifestParser struct {
	dec *jsontext.Decoder
}

func (p *manifestParser) fail(where string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "jsontext: ")
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		msg = "unexpected end of JSON"
	}
	return errorf(ErrManifest, "manifest "+where, "%s", msg)
}

// object reads '{', then calls member for every name until '}'. Duplicate
// names are rejected by the decoder.
func (p *manifestParser) object(where string, member func(name string) error) error {
	tok, err := p.dec.ReadToken()
	if err != nil {
		return p.fail(where, err)
	}
	if tok.Kind() != '{' {
		return errorf(ErrManifest, "manifest "+where, "%s, want an object", tok.Kind())
	}
	for p.dec.PeekKind() != '}' {
		tok, err := p.dec.ReadToken()
		if err != nil {
			return p.fail(where, err)
		}
		if err := member(tok.String()); err != nil {
			return err
		}
	}
	if _, err := p.dec.ReadToken(); err != nil {
		return p.fail(where, err)
	}
	return nil
}

// array reads '[', calls elem for each element index until ']'.
func (p *manifestParser) array(where string, elem func(i int) error) error {
	tok, err := p.dec.ReadToken()
	if err != nil {
		return p.fail(where, err)
	}
	if tok.Kind() != '[' {
		return errorf(ErrManifest, "manifest "+where, "%s, want an array", tok.Kind())
	}
	for i := 0; p.dec.PeekKind() != ']'; i++ {
		if p.dec.PeekKind() == 0 {
			_, err := p.dec.ReadToken()
			return p.fail(where, err)
		}
		if err := elem(i); err != nil {
			return err
		}
	}
	if _, err := p.dec.ReadToken(); err != nil {
		return p.fail(where, err)
	}
	return nil
}

func (p *manifestParser) int(where string, lo, hi int64) (int64, error) {
	v, err := p.dec.ReadValue()
	if err != nil {
		return 0, p.fail(where, err)
	}
	if v.Kind() != '0' {
		return 0, errorf(ErrManifest, "manifest "+where, "%s, want an integer", v.Kind())
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return 0, errorf(ErrManifest, "manifest "+where, "%s is not an integer in range", v)
	}
	if n < lo || n > hi {
		return 0, errorf(ErrManifest, "manifest "+where, "%d out of range [%d, %d]", n, lo, hi)
	}
	return n, nil
}

func (p *manifestParser) string(where string) (string, error) {
	tok, err := p.dec.ReadToken()
	if err != nil {
		return "", p.fail(where, err)
	}
	if tok.Kind() != '"' {
		return "", errorf(ErrManifest, "manifest "+where, "%s, want a string", tok.Kind())
	}
	return tok.String(), nil
}

func (p *manifestParser) parse() (*Manifest, error) {
	m := &Manifest{}
	seen := map[string]bool{}
	var version int64
	err := p.object("", func(name string) error {
		seen[name] = true
		var err error
		var n int64
		switch name {
		case "manifest-version":
			if n, err = p.int(name, 0, math.MaxInt32); err == nil && n != ManifestVersion && n != ManifestVersionKeyRows {
				err = errorf(ErrManifest, "manifest "+name, "%d, want %d or %d", n, ManifestVersion, ManifestVersionKeyRows)
			}
			version = n
		case "key-rows":
			m.KeyRows, err = p.keyRows(name)
		case "posting-encoding":
			m.Encoding, err = p.string(name)
		case "dimension":
			n, err = p.int(name, 1, MaxDim)
			m.Dim = int(n)
		case "nlist":
			n, err = p.int(name, 1, math.MaxInt32)
			m.NList = int32(n)
		case "key-types":
			err = p.array(name, func(i int) error {
				s, err := p.string(fmt.Sprintf("%s[%d]", name, i))
				if err != nil {
					return err
				}
				k, err := ParseKeyType(s)
				if err != nil {
					return errorf(ErrManifest, fmt.Sprintf("manifest %s[%d]", name, i), "unknown key type %q", s)
				}
				m.KeyTypes = append(m.KeyTypes, k)
				return nil
			})
		case "rows":
			m.Rows, err = p.int(name, 1, math.MaxInt64)
		case "cids":
			m.CIDs, err = p.int(name, 1, math.MaxInt32)
		case "files":
			err = p.array(name, func(i int) error { return p.file(m, fmt.Sprintf("files[%d]", i)) })
		case "row-groups":
			err = p.array(name, func(i int) error { return p.rowGroup(m, i) })
		default:
			err = errorf(ErrManifest, "manifest", "unknown member %q", name)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, name := range [...]string{"manifest-version", "posting-encoding", "dimension", "nlist", "key-types", "rows", "cids", "files", "row-groups"} {
		if !seen[name] {
			return nil, errorf(ErrManifest, "manifest", "missing member %q", name)
		}
	}
	if _, err := p.dec.ReadToken(); err != io.EOF {
		if err == nil {
			err = errors.New("data after the manifest object")
		}
		return nil, p.fail("", err)
	}
	switch {
	case version == ManifestVersion && m.KeyRows != nil:
		return nil, errorf(ErrManifest, "manifest key-rows", "not allowed in manifest-version %d (key-rows needs %d)", ManifestVersion, ManifestVersionKeyRows)
	case version == ManifestVersionKeyRows && m.KeyRows == nil:
		return nil, errorf(ErrManifest, "manifest", "missing member %q (required by manifest-version %d)", "key-rows", ManifestVersionKeyRows)
	}
	return m, nil
}

// keyRows reads the key-rows object {"path", "size", "rows"}.
func (p *manifestParser) keyRows(where string) (*KeyRowsEntry, error) {
	var k KeyRowsEntry
	seen := map[string]bool{}
	err := p.object(where, func(name string) error {
		seen[name] = true
		w := where + "." + name
		var err error
		switch name {
		case "path":
			k.Path, err = p.string(w)
		case "size":
			k.Size, err = p.int(w, 0, math.MaxInt64)
		case "rows":
			k.Rows, err = p.int(w, 0, math.MaxInt64)
		default:
			err = errorf(ErrManifest, "manifest "+where, "unknown member %q", name)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, name := range [...]string{"path", "size", "rows"} {
		if !seen[name] {
			return nil, errorf(ErrManifest, "manifest "+where, "missing member %q", name)
		}
	}
	return &k, nil
}

func (p *manifestParser) file(m *Manifest, where string) error {
	var f FileEntry
	seen := map[string]bool{}
	err := p.object(where, func(name string) error {
		seen[name] = true
		w := where + "." + name
		var err error
		var n int64
		switch name {
		case "path":
			f.Path, err = p.string(w)
		case "size":
			f.Size, err = p.int(w, 0, math.MaxInt64)
		case "bucket":
			n, err = p.int(w, 0, math.MaxInt32)
			f.Bucket = int32(n)
		case "rows":
			f.Rows, err = p.int(w, 0, math.MaxInt64)
		case "row-groups":
			n, err = p.int(w, 0, MaxRowGroupsPerFile)
			f.RowGroups = int32(n)
		default:
			err = errorf(ErrManifest, "manifest "+where, "unknown member %q", name)
		}
		return err
	})
	if err != nil {
		return err
	}
	for _, name := range [...]string{"path", "size", "bucket", "rows", "row-groups"} {
		if !seen[name] {
			return errorf(ErrManifest, "manifest "+where, "missing member %q", name)
		}
	}
	m.Files = append(m.Files, f)
	return nil
}

// rowGroup reads [cid, file, row-group, offset, length, rows, crc32c].
func (p *manifestParser) rowGroup(m *Manifest, index int) error {
	where := "row-groups[" + strconv.Itoa(index) + "]"
	var v [7]int64
	hi := [7]int64{math.MaxInt32, math.MaxInt32, MaxRowGroupsPerFile - 1, math.MaxInt64, math.MaxInt64, math.MaxInt64, math.MaxUint32}
	names := [7]string{"cid", "file", "row-group", "offset", "length", "rows", "crc32c"}
	n := 0
	err := p.array(where, func(i int) error {
		if i >= 7 {
			return errorf(ErrManifest, "manifest "+where, "more than 7 elements")
		}
		var err error
		v[i], err = p.int(names[i], 0, hi[i])
		var e *Error
		if errors.As(err, &e) {
			e.Where = "manifest " + where + " " + names[i]
		}
		n++
		return err
	})
	if err != nil {
		return err
	}
	if n != 7 {
		return errorf(ErrManifest, "manifest "+where, "%d elements, want 7", n)
	}
	m.RowGroups = append(m.RowGroups, Range{
		CID: int32(v[0]), File: int32(v[1]), RowGroup: int32(v[2]),
		Offset: v[3], Length: v[4], Rows: v[5], CRC32C: uint32(v[6]),
	})
	return nil
}
