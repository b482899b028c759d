package knnjoin

import (
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/parqdb/parqdb/buildplan"
	"github.com/parqdb/parqdb/postings"
)

// FormatVersion is the only format-version of plans, shard manifests and
// _SUCCESS files.
const FormatVersion = 1

// Keys inside the output folder DEST (docs/join.md, "Output protocol").
const (
	// WorkPrefix holds everything a join writes before it commits. Its
	// leading '_' hides it from Parquet readers (Spark, Trino, DuckDB's
	// hive listing and ParqDB's own source reader skip such names).
	WorkPrefix = "_parqdb_join/"
	// PlanKey is the plan's key.
	PlanKey = WorkPrefix + "plan.json"
	// SuccessKey is the commit marker, written last by Commit.
	SuccessKey = "_SUCCESS"
)

// ShardManifestKey is shard i's manifest, written when the shard finished.
func ShardManifestKey(i int) string { return fmt.Sprintf("%sshards/shard-%06d.json", WorkPrefix, i) }

// partKey is part n of one attempt of shard i.
func partKey(i int, attempt string, n int) string {
	return fmt.Sprintf("%sparts/shard-%06d-%s/part-%05d.parquet", WorkPrefix, i, attempt, n)
}

// publishedKey is the published name of shard i's part n.
func publishedKey(i, n int) string { return fmt.Sprintf("part-%06d-%05d.parquet", i, n) }

// Plan is what MakePlan decided: the index snapshot, the query table's
// state and its split into shards, the search options and the output.
// It is written once and never modified; every shard runs from it.
type Plan struct {
	FormatVersion int `json:"format-version"`
	// ID names this plan (16 hex digits): shard manifests name it, so a
	// manifest of an earlier plan at the same output is never taken.
	ID          string `json:"plan-id"`
	CreatedAtMs int64  `json:"created-at-ms"`
	Index       string `json:"index"`
	IndexUUID   string `json:"index-uuid"`
	SnapshotID  int64  `json:"snapshot-id"`
	// Queries is the query table's canonical location; QueriesIdentity
	// its identity when planned, Files its data files then.
	Queries         string                `json:"queries"`
	QueriesIdentity string                `json:"queries-identity"`
	Files           []postings.SourceFile `json:"files"`
	QueryKey        []string              `json:"query-key"`
	QueryVector     string                `json:"query-vector"`
	K               int                   `json:"k"`
	NProbe          int                   `json:"nprobe"`
	Refine          int                   `json:"refine"`
	Recall          float64               `json:"recall"`
	Where           string                `json:"where"`
	Self            bool                  `json:"self"`
	// MaxDistance, when set, drops neighbours farther than it
	// (--max-distance, or 1 − --min-similarity under cosine).
	MaxDistance *float64 `json:"max-distance"`
	// Output is the output folder's canonical location.
	Output string            `json:"output"`
	Shards []buildplan.Shard `json:"shards"`
}

var hex16 = regexp.MustCompile(`^[0-9a-f]{16}$`)

// Validate reports the first rule the plan breaks, naming the member.
func (p *Plan) Validate() error {
	bad := func(member, format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrInvalid, member, fmt.Sprintf(format, args...))
	}
	switch {
	case p.FormatVersion != FormatVersion:
		return bad("format-version", "%d, want %d", p.FormatVersion, FormatVersion)
	case !hex16.MatchString(p.ID):
		return bad("plan-id", "%q is not 16 lowercase hex digits", p.ID)
	case p.Index == "" || p.IndexUUID == "":
		return bad("index, index-uuid", "both are required")
	case p.SnapshotID < 1:
		return bad("snapshot-id", "%d, want at least 1", p.SnapshotID)
	case p.Queries == "" || p.QueryVector == "" || len(p.QueryKey) == 0:
		return bad("queries, query-vector, query-key", "all are required")
	case p.K < 1 || p.NProbe < 0 || p.Refine < 0 || p.Recall < 0 || p.Recall > 1:
		return bad("k, nprobe, refine, recall", "%d, %d, %d, %g out of range", p.K, p.NProbe, p.Refine, p.Recall)
	case p.Output == "":
		return bad("output", "empty")
	case len(p.Shards) < 1 || len(p.Shards) > buildplan.MaxShards:
		return bad("shards", "%d shards, want 1 … %d", len(p.Shards), buildplan.MaxShards)
	}
	if _, err := buildplan.CheckAssignment("files", p.Files, p.Shards, true); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return nil
}

// ShardFiles returns shard i's files, in key order.
func (p *Plan) ShardFiles(i int) []postings.SourceFile { return p.Shards[i].FilesOf(p.Files) }

// Part is one Parquet file of the output.
type Part struct {
	Key  string `json:"key"`
	Size int64  `json:"size"`
	Rows int64  `json:"rows"`
}

// ShardManifest is what a shard writes when it has finished: the attempt
// whose parts hold its rows. A rerun writes a new attempt and replaces the
// manifest, so it always names one complete attempt.
type ShardManifest struct {
	FormatVersion int    `json:"format-version"`
	PlanID        string `json:"plan-id"`
	Shard         int    `json:"shard"`
	Attempt       string `json:"attempt"`
	// Queries is the query rows read, Rows the output rows written.
	Queries int64  `json:"queries"`
	Rows    int64  `json:"rows"`
	Parts   []Part `json:"parts"`
}

// Success is the _SUCCESS file: what the committed output holds.
type Success struct {
	FormatVersion int    `json:"format-version"`
	PlanID        string `json:"plan-id"`
	Index         string `json:"index"`
	SnapshotID    int64  `json:"snapshot-id"`
	Queries       string `json:"queries"`
	QueryRows     int64  `json:"query-rows"`
	Rows          int64  `json:"rows"`
	// Parts are the published files, in shard then part order.
	Parts         []Part `json:"parts"`
	CommittedAtMs int64  `json:"committed-at-ms"`
}

// ParsePlan reads and validates a plan (name names it in errors).
func ParsePlan(name string, data []byte) (*Plan, error) {
	var p Plan
	if err := decodeStrict(name, data, &p); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &p, nil
}

// ParseShardManifest reads shard i's manifest and checks it belongs to p.
func ParseShardManifest(name string, data []byte, p *Plan, i int) (*ShardManifest, error) {
	var s ShardManifest
	if err := decodeStrict(name, data, &s); err != nil {
		return nil, err
	}
	bad := func(member, format string, args ...any) error {
		return fmt.Errorf("%s: %w: %s: %s", name, ErrInvalid, member, fmt.Sprintf(format, args...))
	}
	switch {
	case s.FormatVersion != FormatVersion:
		return nil, bad("format-version", "%d, want %d", s.FormatVersion, FormatVersion)
	case s.PlanID != p.ID:
		return nil, bad("plan-id", "%q, want %q (a manifest of an earlier plan)", s.PlanID, p.ID)
	case s.Shard != i:
		return nil, bad("shard", "%d, want %d", s.Shard, i)
	case !hex16.MatchString(s.Attempt):
		return nil, bad("attempt", "%q is not 16 lowercase hex digits", s.Attempt)
	}
	var rows int64
	for j, pt := range s.Parts {
		if pt.Key != partKey(i, s.Attempt, j) {
			return nil, bad(fmt.Sprintf("parts[%d].key", j), "%q, want %q", pt.Key, partKey(i, s.Attempt, j))
		}
		rows += pt.Rows
	}
	if rows != s.Rows {
		return nil, bad("rows", "%d, but the parts hold %d", s.Rows, rows)
	}
	return &s, nil
}

// ParseSuccess reads a _SUCCESS file.
func ParseSuccess(name string, data []byte) (*Success, error) {
	var s Success
	if err := decodeStrict(name, data, &s); err != nil {
		return nil, err
	}
	if s.FormatVersion != FormatVersion {
		return nil, fmt.Errorf("%s: %w: format-version: %d, want %d", name, ErrInvalid, s.FormatVersion, FormatVersion)
	}
	return &s, nil
}

func marshal(v any) ([]byte, error) { return buildplan.MarshalIndent(v) }

// decodeStrict decodes data into v refusing unknown members and trailing
// data (ErrInvalid).
func decodeStrict(name string, data []byte, v any) error {
	return buildplan.DecodeStrict(name, data, v, ErrInvalid)
}

// OutputLocation returns the canonical form of an output location: an
// absolute local path (from a path or file:// URL) or an s3://bucket/prefix
// URL, without a trailing '/'.
func OutputLocation(loc string) (string, error) {
	switch {
	case loc == "":
		return "", fmt.Errorf("%w: output (--output): empty", ErrOptions)
	case strings.HasPrefix(loc, "s3://"):
		u, err := url.Parse(loc)
		if err != nil || u.Host == "" {
			return "", fmt.Errorf("%w: output (--output) %q: not an s3://bucket/prefix location", ErrOptions, loc)
		}
		return strings.TrimSuffix(loc, "/"), nil
	case strings.HasPrefix(loc, "file://"):
		u, err := url.Parse(loc)
		if err != nil || u.Path == "" {
			return "", fmt.Errorf("%w: output (--output) %q: not a file:///path URL", ErrOptions, loc)
		}
		loc = u.Path
	case strings.Contains(loc, "://"):
		return "", fmt.Errorf("%w: output (--output) %q: unsupported scheme (use a local folder, file:// or s3://)", ErrOptions, loc)
	}
	abs, err := filepath.Abs(loc)
	if err != nil {
		return "", fmt.Errorf("%w: output (--output) %q: %v", ErrOptions, loc, err)
	}
	return abs, nil
}

// PlanLocation returns where the plan of output lives (what join
// --shards prints and join-shard and join-commit take).
func PlanLocation(output string) string { return output + "/" + PlanKey }

// outputOfPlan returns the output folder of a plan location; the output
// folder itself is accepted too.
func outputOfPlan(planLoc string) (string, error) {
	return OutputLocation(strings.TrimSuffix(strings.TrimSuffix(planLoc, "/"), "/"+PlanKey))
}
