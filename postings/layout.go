package postings

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/parqdb/parqdb/location"
	"github.com/parqdb/parqdb/metadata"
)

// Warehouse layout of the parquet provider (profile "Folders and files").
// Every function here is pure: it names objects, the pipelines create them.

// Provider is the provider name of the Parquet table and index providers.
const Provider = "parquet"

// DefinitionVersion is the only definition-version of the parquet source
// table-definition ("1", a string property) and of the ivf_centroids
// index-table-definition (1, the definition-version field).
const DefinitionVersion = 1

// Definition versions of the ivf_postings index-table-definition (profile
// §3, §4). They differ only in where the table's manifest and side objects
// are: version 1 kept them inside the table location, beside the postings
// files, so that a reader taking the location as a table met a Parquet file
// of another schema (key-rows.parquet) and JSON files; version 2 keeps them
// in the sibling folder MetaFolder, and the table location holds the
// postings files alone. Writers write PostingsVersion; readers accept both.
const (
	PostingsVersionInline = 1
	PostingsVersion       = 2
)

// MetaFolder is the name of the folder, beside ivf_postings/ in the same
// "<snapshot-id>-<write-id>/" folder, that holds a version-2 postings
// table's manifest and side objects. The leading "_" marks it as not data
// for readers that follow the Hive/Spark convention (Spark, Arrow
// datasets, ParqDB's own folder sources).
const MetaFolder = "_meta/"

// Layout locates the objects of one ivf_postings table.
type Layout struct {
	// Table is the table location (properties.location), ending in "/".
	// In version 2 it holds postings files and nothing else.
	Table string
	// Meta is the folder, ending in "/", of the manifest, source-files.json,
	// the key-rows table, calibration files and the vectors file: Table
	// itself in version 1, the sibling MetaFolder in version 2.
	Meta string
}

// LayoutOf returns the layout of the postings table at loc written with
// definition version v (PostingsVersionInline or PostingsVersion). loc is
// a postings location (CheckIndexTable); other values of v are treated as
// PostingsVersion, which CheckIndexTable refuses before any read.
func LayoutOf(loc string, v int32) Layout {
	if v == PostingsVersionInline {
		return Layout{Table: loc, Meta: loc}
	}
	return Layout{Table: loc, Meta: strings.TrimSuffix(loc, "ivf_postings/") + MetaFolder}
}

// SnapshotLayout is LayoutOf the snapshot's ivf_postings table.
func SnapshotLayout(s *metadata.Snapshot) Layout {
	t := s.IndexTables[metadata.RolePostings]
	return LayoutOf(t.Properties["location"], t.DefinitionVersion)
}

// Manifest is the location of the table's manifest.json.
func (l Layout) Manifest() string { return l.Meta + ManifestName }

// SourceFiles is the location of the table's source-files.json.
func (l Layout) SourceFiles() string { return l.Meta + SourceFilesName }

// IsInlineSideObject reports whether name, a key relative to a version-1
// (PostingsVersionInline) table location, is one of the side objects that
// version kept there: manifest.json, source-files.json, key-rows.parquet,
// vectors.f32 or a calibration-<snapshot-id>.json, directly in the folder
// or (for a sharded build's pieces) in a shard-<I>-<attempt>/ subfolder.
func IsInlineSideObject(name string) bool {
	if dir, base, ok := strings.Cut(name, "/"); ok {
		if !strings.HasPrefix(dir, "shard-") || strings.Contains(base, "/") {
			return false
		}
		return base == ManifestName || base == SourceFilesName
	}
	switch {
	case name == ManifestName, name == SourceFilesName, name == KeyRowsName, name == "vectors.f32":
		return true
	case strings.HasPrefix(name, "calibration-") && strings.HasSuffix(name, ".json"):
		return isSnapshotID(strings.TrimSuffix(strings.TrimPrefix(name, "calibration-"), ".json"))
	}
	return false
}

// KeyRows is where a writer puts the table's key-rows table (a reader
// follows the manifest's key-rows.path).
func (l Layout) KeyRows() string { return l.Meta + KeyRowsName }

// File names inside the table folders.
const (
	CentroidsFile = "centroids.parquet"
	RootsFile     = "roots.parquet"
)

// Table roles of the centroid artifact that are not index-table roles.
const RoleRoots = "ivf_roots"

func hex32(id uuid.UUID) string { return hex.EncodeToString(id[:]) }

// CentroidsLocation is the ivf_centroids folder of centroid artifact
// artifact: "indexes/<artifact-uuid, 32 hex>/1/ivf_centroids/". The "1"
// is the artifact's only version (artifacts are immutable).
func CentroidsLocation(artifact uuid.UUID) string {
	return "indexes/" + hex32(artifact) + "/1/ivf_centroids/"
}

// RootsLocation is the ivf_roots folder of centroid artifact artifact.
func RootsLocation(artifact uuid.UUID) string {
	return "indexes/" + hex32(artifact) + "/1/ivf_roots/"
}

// CentroidMetadataLocation is the centroid artifact's metadata file:
// "metadata/<artifact-uuid>/v1.metadata.json".
func CentroidMetadataLocation(artifact uuid.UUID) string {
	return "metadata/" + artifact.String() + "/v1.metadata.json"
}

// PostingsLocation is the ivf_postings folder written for one snapshot:
// "indexes/<index-uuid, 32 hex>/<snapshot-id>-<write-id, 16 hex>/ivf_postings/".
// The random write id makes the folder unique to one writer, so that two
// writers racing to publish the same snapshot-id never write into the same
// folder (only one of them commits; the other's folder is an orphan).
func PostingsLocation(index uuid.UUID, snapshotID int64, writeID uint64) string {
	return fmt.Sprintf("indexes/%s/%d-%016x/ivf_postings/", hex32(index), snapshotID, writeID)
}

// BucketFileName names the seq-th postings file of root bucket:
// "bucket-<bucket, 6+ digits>-<seq, 3+ digits>.parquet". Names carry no
// meaning for readers, which follow the manifest.
func BucketFileName(bucket int32, seq int) string {
	return fmt.Sprintf("bucket-%06d-%03d.parquet", bucket, seq)
}

// indexFolder returns "indexes/<uuid32>/" for a postings location, after
// checking loc is one (see CheckIndexTable).
func indexFolder(loc string) (string, error) {
	parts := strings.Split(loc, "/")
	if location.Check(loc) != nil || len(parts) != 5 || parts[0] != "indexes" || !isHex32(parts[1]) ||
		!isWriteFolder(parts[2]) || parts[3] != "ivf_postings" || parts[4] != "" {
		return "", errorf(ErrProperties, "ivf_postings location", "%q is not indexes/<index-uuid, 32 lowercase hex>/<snapshot-id>-<write-id, 16 lowercase hex>/ivf_postings/", loc)
	}
	return "indexes/" + parts[1] + "/", nil
}

func isHex32(s string) bool {
	if len(s) != 32 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return s != strings.Repeat("0", 32)
}

// isWriteFolder reports whether s is "<snapshot-id>-<16 lowercase hex>".
func isWriteFolder(s string) bool {
	id, w, ok := strings.Cut(s, "-")
	if !ok || len(w) != 16 || !isSnapshotID(id) {
		return false
	}
	for _, c := range w {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func isSnapshotID(s string) bool {
	n, err := strconv.ParseInt(s, 10, 64)
	return err == nil && n > 0 && strconv.FormatInt(n, 10) == s
}

// CheckIndexProvider validates a snapshot's index-provider definition:
// this implementation serves only the parquet provider (Provider), which
// takes no properties. Any other provider name or any property is an
// ErrProperties error naming the field: the index's tables are laid out by
// a provider ParqDB does not know, so no reader may interpret them.
func CheckIndexProvider(provider string, props map[string]string) error {
	if provider != Provider {
		return errorf(ErrProperties, "index-provider.provider", "%q is not supported: this ParqDB serves only provider %q", provider, Provider)
	}
	for k := range props {
		return errorf(ErrProperties, "index-provider.properties", "unknown property %q: provider %q takes no properties", k, Provider)
	}
	return nil
}

// CheckSourceProvider validates the provider name of a source
// table-definition: only Provider is supported. The properties are
// CheckSourceProperties's.
func CheckSourceProvider(provider string) error {
	if provider != Provider {
		return errorf(ErrProperties, "source-table.provider", "%q is not supported: this ParqDB reads only provider %q", provider, Provider)
	}
	return nil
}

// CheckIndexTable validates an index-table-definition of the parquet
// index provider (profile §3): definition-version 1 for ivf_centroids, 1
// or 2 for ivf_postings (PostingsVersionInline, PostingsVersion), and
// exactly one property, location, of the shape the role requires.
// ivf_centroids: "indexes/<32 hex>/1/ivf_centroids/"; ivf_postings:
// "indexes/<32 hex>/<snapshot-id>-<write-id>/ivf_postings/". For ivf_postings with a
// non-zero index UUID the hex must be that UUID's.
func CheckIndexTable(role string, definitionVersion int32, props map[string]string, index uuid.UUID) error {
	where := "index-tables." + role
	switch {
	case role == metadata.RolePostings && definitionVersion != PostingsVersionInline && definitionVersion != PostingsVersion:
		return errorf(ErrProperties, where+".definition-version", "%d, want %d or %d", definitionVersion, PostingsVersionInline, PostingsVersion)
	case role != metadata.RolePostings && definitionVersion != DefinitionVersion:
		return errorf(ErrProperties, where+".definition-version", "%d, want %d", definitionVersion, DefinitionVersion)
	}
	loc, ok := props["location"]
	if !ok || len(props) != 1 {
		return errorf(ErrProperties, where+".properties", "want exactly the property location, have %d properties", len(props))
	}
	parts := strings.Split(loc, "/")
	switch role {
	case "ivf_centroids":
		if location.Check(loc) != nil || len(parts) != 5 || parts[0] != "indexes" || !isHex32(parts[1]) || parts[2] != "1" || parts[3] != "ivf_centroids" || parts[4] != "" {
			return errorf(ErrProperties, where+".properties.location", "%q is not indexes/<artifact-uuid, 32 lowercase hex>/1/ivf_centroids/", loc)
		}
	case "ivf_postings":
		if _, err := indexFolder(loc); err != nil {
			return errorf(ErrProperties, where+".properties.location", "%q is not indexes/<index-uuid, 32 lowercase hex>/<snapshot-id>-<write-id>/ivf_postings/", loc)
		}
		if index != uuid.Nil && parts[1] != hex32(index) {
			return errorf(ErrProperties, where+".properties.location", "%q is not in the folder of index %s", loc, index)
		}
	default:
		return errorf(ErrProperties, where, "unknown role %q", role)
	}
	return nil
}

// RootsLocationFor returns the ivf_roots folder next to an ivf_centroids
// folder ("…/1/ivf_centroids/" → "…/1/ivf_roots/").
func RootsLocationFor(centroids string) string {
	return strings.TrimSuffix(centroids, "ivf_centroids/") + "ivf_roots/"
}

// CheckSourceProperties validates the properties of a parquet source
// table-definition: exactly definition-version "1", a non-empty location
// (a Parquet file, or a folder ending in "/": an absolute local path or an
// s3:// URL) without NUL, TAB or newline, and a table-identity of the form
// "sha256:" and 64 lowercase hex digits (the recipe is source.Table.Identity).
func CheckSourceProperties(props map[string]string) error {
	const where = "source-table.properties"
	for k := range props {
		switch k {
		case "definition-version", "location", "table-identity":
		default:
			return errorf(ErrProperties, where, "unknown property %q", k)
		}
	}
	if v := props["definition-version"]; v != "1" {
		return errorf(ErrProperties, where+".definition-version", "%q, want \"1\"", v)
	}
	loc := props["location"]
	if loc == "" || strings.ContainsAny(loc, "\x00\n\t") {
		return errorf(ErrProperties, where+".location", "%q is empty or holds NUL, TAB or newline", loc)
	}
	id := props["table-identity"]
	if h, ok := strings.CutPrefix(id, "sha256:"); !ok || len(h) != 64 || strings.ToLower(h) != h {
		return errorf(ErrProperties, where+".table-identity", "%q is not sha256:<64 lowercase hex>", id)
	} else if _, err := hex.DecodeString(h); err != nil {
		return errorf(ErrProperties, where+".table-identity", "%q is not sha256:<64 lowercase hex>", id)
	}
	return nil
}
