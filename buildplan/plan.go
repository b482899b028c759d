package buildplan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/parqdb/parqdb/location"
	"github.com/parqdb/parqdb/postings"
)

// FormatVersion is the only format-version of plans and shard manifests.
const FormatVersion = 1

// File names inside a build prefix.
const (
	// PlanName is the plan's file name inside the build prefix.
	PlanName = "plan.json"
	// ShardsFolder holds the shard manifests inside the build prefix.
	ShardsFolder = "shards/"
	// MaxShards bounds the number of shards of one plan.
	MaxShards = 100000
	// MaxFileSize is the largest plan or shard manifest Parse accepts.
	MaxFileSize = 256 << 20
)

// Plan operations: what the commit publishes.
const (
	OpCreate             = "create"              // the first snapshot of a new index
	OpRefresh            = "refresh"             // a successor that rebuilds every row with new centroids
	OpRefreshIncremental = "refresh-incremental" // a successor that adds appended files' rows to the base postings
)

// Plan is a sharded build's plan: what the coordinator decided (index,
// snapshot, centroids, source state) and which source files each shard
// reads. A plan is written once and never modified.
type Plan struct {
	FormatVersion int    `json:"format-version"`
	Operation     string `json:"operation"`
	IndexName     string `json:"index-name"`
	// IndexUUID is the index's UUID (dashed form), new for create.
	IndexUUID string `json:"index-uuid"`
	// SnapshotID is the id of the snapshot the commit publishes.
	SnapshotID int64 `json:"snapshot-id"`
	// BaseSnapshotID is the snapshot a refresh builds on; 0 for create.
	BaseSnapshotID int64 `json:"base-snapshot-id"`
	// PostingsLocation is the ivf_postings folder the commit publishes:
	// indexes/<index uuid32>/<snapshot-id>-<write-id>/ivf_postings/.
	PostingsLocation string `json:"postings-location"`
	// BaseManifest is, for refresh-incremental, the base snapshot's
	// postings manifest whose files the new manifest keeps; else "".
	BaseManifest string `json:"base-manifest"`
	CreatedAtMs  int64  `json:"created-at-ms"`
	// Source is the exact source state the plan indexes (every data file,
	// assigned to a shard or, for an incremental refresh, already indexed).
	Source      postings.SourceFiles `json:"source"`
	SourceLoc   string               `json:"source-location"`
	VectorField string               `json:"vector-field"`
	KeyFields   []string             `json:"key-fields"`
	Metric      string               `json:"metric"`
	Encoding    string               `json:"posting-encoding"`
	Dimension   int                  `json:"dimension"`
	NList       int                  `json:"nlist"`
	// Rows is the ntotal of the committed snapshot (all source rows).
	Rows int64 `json:"rows"`
	// CentroidsMetadata is the centroid artifact's metadata location.
	CentroidsMetadata string `json:"centroids-metadata"`
	ReusedCentroids   bool   `json:"reused-centroids"`
	SampleRows        int    `json:"sample-rows"`
	// Summary holds extra snapshot summary entries (refresh provenance).
	Summary map[string]string `json:"summary"`
	// Shards lists, per shard, the source files it reads.
	Shards []Shard `json:"shards"`
}

// Shard is one shard's share of a plan.
type Shard struct {
	// Files are source file keys, ascending; shards are disjoint.
	Files []string `json:"files"`
	// Rows is the sum of the files' rows.
	Rows int64 `json:"rows"`
}

var postingsRE = regexp.MustCompile(`^indexes/([0-9a-f]{32})/([1-9][0-9]*)-([0-9a-f]{16})/ivf_postings/$`)

// Prefix returns the build prefix of a postings location
// (indexes/<index uuid32>/<snapshot-id>-<write-id>/).
func Prefix(postingsLoc string) string {
	return strings.TrimSuffix(postingsLoc, "ivf_postings/")
}

// Location returns the plan's location for a postings location.
func Location(postingsLoc string) string { return Prefix(postingsLoc) + PlanName }

// ShardManifestLocation returns the location of shard i's manifest.
func ShardManifestLocation(postingsLoc string, i int) string {
	return Prefix(postingsLoc) + ShardsFolder + fmt.Sprintf("shard-%06d.json", i)
}

// PiecesLocation returns the name prefix of one attempt of shard i's
// postings files: "<postingsLoc>shard-<I>-<attempt>-". They sit in the
// postings table folder itself (…/ivf_postings/shard-000003-<attempt>-bucket-000017-000.parquet),
// so that the committed table location holds every postings file at its
// top level and nothing else (profile §4).
func PiecesLocation(postingsLoc string, i int, attempt string) string {
	return postingsLoc + fmt.Sprintf("shard-%06d-%s-", i, attempt)
}

// PiecesMetaLocation returns the folder of one attempt of shard i's
// manifest.json and source-files.json:
// "<build prefix>_meta/shard-<I>-<attempt>/".
func PiecesMetaLocation(postingsLoc string, i int, attempt string) string {
	return Prefix(postingsLoc) + postings.MetaFolder + fmt.Sprintf("shard-%06d-%s/", i, attempt)
}

// PiecesPrefix returns the prefix shared by every attempt of shard i's
// postings files.
func PiecesPrefix(postingsLoc string, i int) string {
	return postingsLoc + fmt.Sprintf("shard-%06d-", i)
}

var planKeyRE = regexp.MustCompile(`^indexes/[0-9a-f]{32}/[1-9][0-9]*-[0-9a-f]{16}/plan\.json$`)

// IsPlanKey reports whether key is where a plan lives
// (indexes/<uuid32>/<snapshot-id>-<write-id>/plan.json).
func IsPlanKey(key string) bool { return planKeyRE.MatchString(key) }

// Marshal returns the plan's JSON form (indented, members in the order of
// the struct, a final newline).
func (p *Plan) Marshal() ([]byte, error) { return MarshalIndent(p) }

// MarshalIndent returns v's JSON form as plans and shard manifests are
// written: indented by one space, no HTML escaping, a final newline. The
// join's plan files (knnjoin) are written the same way.
func MarshalIndent(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// decodeStrict is DecodeStrict for this package's files.
func decodeStrict(name string, data []byte, v any) error {
	return DecodeStrict(name, data, v, ErrInvalid)
}

// DecodeStrict decodes the JSON file name (data) into v refusing more
// than MaxFileSize bytes, unknown members and trailing data, with an error
// that names the file and wraps class; null where a value is required is
// left to the validators.
func DecodeStrict(name string, data []byte, v any, class error) error {
	if len(data) > MaxFileSize {
		return fmt.Errorf("%s: %w: %d bytes, more than %d", name, class, len(data), MaxFileSize)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %w: %v", name, class, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%s: %w: data after the JSON object", name, class)
	}
	return nil
}

// Parse reads and validates the plan stored at loc (loc names it in
// errors).
func Parse(loc string, data []byte) (*Plan, error) {
	var p Plan
	if err := decodeStrict(loc, data, &p); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", loc, err)
	}
	return &p, nil
}

// Validate reports the first rule the plan breaks, naming the member.
func (p *Plan) Validate() error {
	bad := func(member, format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrInvalid, member, fmt.Sprintf(format, args...))
	}
	if p.FormatVersion != FormatVersion {
		return bad("format-version", "%d, want %d", p.FormatVersion, FormatVersion)
	}
	switch p.Operation {
	case OpCreate:
		if p.BaseSnapshotID != 0 || p.SnapshotID != 1 || p.BaseManifest != "" {
			return bad("operation", "create publishes snapshot 1 with no base (snapshot-id %d, base-snapshot-id %d)", p.SnapshotID, p.BaseSnapshotID)
		}
	case OpRefresh, OpRefreshIncremental:
		if p.BaseSnapshotID < 1 || p.SnapshotID <= p.BaseSnapshotID {
			return bad("base-snapshot-id", "%d with snapshot-id %d: a refresh builds on an earlier snapshot", p.BaseSnapshotID, p.SnapshotID)
		}
		if (p.Operation == OpRefreshIncremental) != (p.BaseManifest != "") {
			return bad("base-manifest", "%q: set exactly for refresh-incremental", p.BaseManifest)
		}
	default:
		return bad("operation", "%q is not create, refresh or refresh-incremental", p.Operation)
	}
	if p.IndexName == "" {
		return bad("index-name", "empty")
	}
	u, err := uuid.Parse(p.IndexUUID)
	if err != nil || u.String() != p.IndexUUID {
		return bad("index-uuid", "%q is not a UUID in dashed lowercase form", p.IndexUUID)
	}
	m := postingsRE.FindStringSubmatch(p.PostingsLocation)
	if m == nil || m[1] != strings.ReplaceAll(p.IndexUUID, "-", "") || m[2] != fmt.Sprint(p.SnapshotID) {
		return bad("postings-location", "%q is not indexes/<index uuid32>/<snapshot-id>-<write-id>/ivf_postings/ of this index and snapshot", p.PostingsLocation)
	}
	for _, l := range []struct{ member, loc string }{{"base-manifest", p.BaseManifest}, {"centroids-metadata", p.CentroidsMetadata}} {
		if l.loc == "" && l.member == "base-manifest" {
			continue
		}
		if err := location.Check(l.loc); err != nil {
			return bad(l.member, "%v", err)
		}
	}
	if p.SourceLoc == "" {
		return bad("source-location", "empty")
	}
	if p.Source.FormatVersion != 1 || !strings.HasPrefix(p.Source.TableIdentity, "sha256:") {
		return bad("source", "format-version %d, table-identity %q", p.Source.FormatVersion, p.Source.TableIdentity)
	}
	if p.VectorField == "" || len(p.KeyFields) == 0 || p.Metric == "" || p.Encoding == "" {
		return bad("vector-field, key-fields, metric, posting-encoding", "all are required")
	}
	if p.Dimension < 1 || p.NList < 1 || p.Rows < 1 {
		return bad("dimension, nlist, rows", "%d, %d, %d: each must be at least 1", p.Dimension, p.NList, p.Rows)
	}
	if len(p.Shards) < 1 || len(p.Shards) > MaxShards {
		return bad("shards", "%d shards, want 1 … %d", len(p.Shards), MaxShards)
	}
	var srcRows int64
	for _, f := range p.Source.Files {
		srcRows += f.Rows
	}
	if srcRows != p.Rows {
		return bad("rows", "%d, but the source files hold %d", p.Rows, srcRows)
	}
	assigned, err := CheckAssignment("source.files", p.Source.Files, p.Shards, p.Operation != OpRefreshIncremental)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if assigned < 1 {
		return bad("shards", "no rows are assigned")
	}
	return nil
}

// CheckAssignment checks shards against the files they split (member
// names the files in errors): files in ascending key order, each shard's
// files files of the list, ascending, in no other shard, its rows their
// sum, and, with all, every file assigned. It returns the rows assigned;
// an error names the member and is not wrapped (callers add their class).
func CheckAssignment(member string, files []postings.SourceFile, shards []Shard, all bool) (int64, error) {
	bad := func(member, format string, args ...any) error {
		return fmt.Errorf("%s: %s", member, fmt.Sprintf(format, args...))
	}
	rowsOf := map[string]int64{}
	for i, f := range files {
		if i > 0 && files[i-1].Key >= f.Key {
			return 0, bad(fmt.Sprintf("%s[%d]", member, i), "key %q is not after %q", f.Key, files[i-1].Key)
		}
		rowsOf[f.Key] = f.Rows
	}
	seen := map[string]int{}
	var assigned int64
	for i, s := range shards {
		var rows int64
		for j, k := range s.Files {
			r, ok := rowsOf[k]
			if !ok {
				return 0, bad(fmt.Sprintf("shards[%d].files[%d]", i, j), "%q is not a file of the plan", k)
			}
			if prev, dup := seen[k]; dup {
				return 0, bad(fmt.Sprintf("shards[%d].files[%d]", i, j), "%q is also assigned to shard %d", k, prev)
			}
			if j > 0 && s.Files[j-1] >= k {
				return 0, bad(fmt.Sprintf("shards[%d].files[%d]", i, j), "%q is not after %q", k, s.Files[j-1])
			}
			seen[k] = i
			rows += r
		}
		if rows != s.Rows {
			return 0, bad(fmt.Sprintf("shards[%d].rows", i), "%d, but its files hold %d", s.Rows, rows)
		}
		assigned += rows
	}
	if all && len(seen) != len(rowsOf) {
		return 0, bad("shards", "%d of the %d files are assigned; every file must be", len(seen), len(rowsOf))
	}
	return assigned, nil
}

// ShardFiles returns the source files of shard i, in key order, with the
// size, version and rows the plan recorded.
func (p *Plan) ShardFiles(i int) []postings.SourceFile { return p.Shards[i].FilesOf(p.Source.Files) }

// FilesOf returns the files of all (in key order) that s holds.
func (s Shard) FilesOf(all []postings.SourceFile) []postings.SourceFile {
	want := map[string]bool{}
	for _, k := range s.Files {
		want[k] = true
	}
	var out []postings.SourceFile
	for _, f := range all {
		if want[f.Key] {
			out = append(out, f)
		}
	}
	return out
}

// Assign splits files (in key order) into n disjoint shards of about equal
// rows: largest file first to the shard with the fewest rows (ties to the
// lower shard), each shard's files then in key order. It is deterministic.
func Assign(files []postings.SourceFile, n int) []Shard {
	order := slices.Clone(files)
	slices.SortStableFunc(order, func(a, b postings.SourceFile) int {
		if a.Rows != b.Rows {
			if a.Rows > b.Rows {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Key, b.Key)
	})
	shards := make([]Shard, n)
	for _, f := range order {
		best := 0
		for i := range shards {
			if shards[i].Rows < shards[best].Rows {
				best = i
			}
		}
		shards[best].Files = append(shards[best].Files, f.Key)
		shards[best].Rows += f.Rows
	}
	for i := range shards {
		slices.Sort(shards[i].Files)
		if shards[i].Files == nil {
			shards[i].Files = []string{}
		}
	}
	return shards
}

// ShardManifest is what a shard task writes when it has finished: the
// source files it read (as found) and the folder of its postings pieces.
// A rerun of the shard writes a new attempt folder and replaces the shard
// manifest, so the manifest always names one complete attempt.
type ShardManifest struct {
	FormatVersion int `json:"format-version"`
	// Plan is the plan's location.
	Plan  string `json:"plan"`
	Shard int    `json:"shard"`
	// Attempt is the 16 hex digits naming this run's pieces.
	Attempt string `json:"attempt"`
	// Files are the source files read, as listed when the shard ran.
	Files []postings.SourceFile `json:"files"`
	Rows  int64                 `json:"rows"`
	// Pieces is the name prefix of the attempt's postings files
	// (PiecesLocation; their manifest is in PiecesMetaLocation); "" when
	// the shard has no rows.
	Pieces string `json:"pieces"`
}

var attemptRE = regexp.MustCompile(`^[0-9a-f]{16}$`)

// Marshal returns the shard manifest's JSON form.
func (s *ShardManifest) Marshal() ([]byte, error) { return MarshalIndent(s) }

// ParseShardManifest reads and validates the shard manifest stored at
// loc against plan p (stored at planLoc) and shard number i.
func ParseShardManifest(loc string, data []byte, p *Plan, planLoc string, i int) (*ShardManifest, error) {
	var s ShardManifest
	if err := decodeStrict(loc, data, &s); err != nil {
		return nil, err
	}
	bad := func(member, format string, args ...any) error {
		return fmt.Errorf("%s: %w: %s: %s", loc, ErrInvalid, member, fmt.Sprintf(format, args...))
	}
	switch {
	case s.FormatVersion != FormatVersion:
		return nil, bad("format-version", "%d, want %d", s.FormatVersion, FormatVersion)
	case s.Plan != planLoc:
		return nil, bad("plan", "%q, want %q", s.Plan, planLoc)
	case s.Shard != i:
		return nil, bad("shard", "%d, want %d", s.Shard, i)
	case !attemptRE.MatchString(s.Attempt):
		return nil, bad("attempt", "%q is not 16 lowercase hex digits", s.Attempt)
	}
	want := ""
	if s.Rows > 0 {
		want = PiecesLocation(p.PostingsLocation, i, s.Attempt)
	}
	if s.Pieces != want {
		return nil, bad("pieces", "%q, want %q", s.Pieces, want)
	}
	return &s, nil
}
