package metadata

// Metadata is the root object of an index metadata file (index-metadata-spec
// "Index Metadata"). A Metadata value is immutable once published: writers
// derive new metadata with Successor and RemoveSnapshots, which copy, instead
// of mutating a loaded value. Parse and the builders return values that
// validate; Marshal writes the canonical form (docs/format.md).
type Metadata struct {
	FormatVersion      int32             `json:"format-version"`
	IndexUUID          string            `json:"index-uuid"`
	LastUpdatedMs      int64             `json:"last-updated-ms"`
	LastSequenceNumber int64             `json:"last-sequence-number"`
	CurrentSnapshotID  int64             `json:"current-snapshot-id"`
	Snapshots          []Snapshot        `json:"snapshots"`
	SnapshotLog        []LogEntry        `json:"snapshot-log"`
	Properties         map[string]string `json:"properties,omitzero"` // optional; nil means absent
}

// Snapshot is one index snapshot (index-metadata-spec "Index Snapshot").
type Snapshot struct {
	SnapshotID         int64                           `json:"snapshot-id"`
	SequenceNumber     int64                           `json:"sequence-number"`
	TimestampMs        int64                           `json:"timestamp-ms"`
	Summary            map[string]string               `json:"summary"`
	SourceTable        TableDefinition                 `json:"source-table"`
	VectorField        string                          `json:"vector-field"`
	SourceKeyFields    []string                        `json:"source-key-fields"`
	IndexedRows        int64                           `json:"indexed-rows"`
	IndexFamily        string                          `json:"index-family"`
	IndexSchemaVersion int32                           `json:"index-schema-version"`
	Metric             string                          `json:"metric"`
	Parameters         map[string]string               `json:"parameters"`
	IndexProvider      ProviderDefinition              `json:"index-provider"`
	IndexTables        map[string]IndexTableDefinition `json:"index-tables"`
}

// TableDefinition names a table provider and its versioned, non-secret
// properties. For the parquet provider see docs/parquet-provider-profile.md.
type TableDefinition struct {
	Identifier *TableIdentifier  `json:"identifier,omitzero"` // optional
	Provider   string            `json:"provider"`
	Properties map[string]string `json:"properties"`
}

// TableIdentifier is the optional engine-level name of a source table.
type TableIdentifier struct {
	Catalog   string   `json:"catalog"`
	Namespace []string `json:"namespace"`
	Name      string   `json:"name"`
}

// ProviderDefinition selects the provider of a snapshot's physical index tables.
type ProviderDefinition struct {
	Provider   string            `json:"provider"`
	Properties map[string]string `json:"properties"`
}

// IndexTableDefinition is one physical index table of a snapshot.
type IndexTableDefinition struct {
	DefinitionVersion int32             `json:"definition-version"`
	Properties        map[string]string `json:"properties"`
}

// LogEntry is one snapshot-log entry.
type LogEntry struct {
	TimestampMs int64 `json:"timestamp-ms"`
	SnapshotID  int64 `json:"snapshot-id"`
}

// CentroidMetadata is an immutable IVF centroid artifact metadata document
// (ivf-index-schema §3).
type CentroidMetadata struct {
	FormatVersion int32      `json:"format-version"`
	ArtifactUUID  string     `json:"artifact-uuid"`
	Fingerprint   string     `json:"fingerprint"`
	CreatedAtMs   int64      `json:"created-at-ms"`
	Descriptor    Descriptor `json:"descriptor"`
	Centroids     string     `json:"centroids"`
	Roots         string     `json:"roots"`
}

// Descriptor is the semantic identity of a centroid artifact; its field
// order is the order of the fingerprint name (clarification 6).
type Descriptor struct {
	VectorField              string `json:"vector-field"`
	Dimension                int32  `json:"dimension"`
	Metric                   string `json:"metric"`
	NList                    int32  `json:"nlist"`
	ClusteringProfileVersion int32  `json:"clustering-profile-version"`
}

// Well-known values of the ivf family (ivf-index-schema §1–§3).
const (
	FamilyIVF              = "ivf"
	IVFSchemaVersion       = 1
	MetricL2Squared        = "l2_squared"
	MetricCosine           = "cosine"
	EncodingSource         = "source"
	EncodingLVQ4           = "lvq4"
	EncodingLVQ8           = "lvq8"
	RoleCentroids          = "ivf_centroids"
	RolePostings           = "ivf_postings"
	ParamDimension         = "dimension"
	ParamNList             = "nlist"
	ParamNTotal            = "ntotal"
	ParamPostingEncoding   = "posting_encoding"
	ParamFingerprint       = "ivf_centroids_fingerprint"
	ParamCentroidsUUID     = "ivf_centroids_uuid"
	ParamCentroidsLocation = "ivf_centroids_metadata_location"
	// FingerprintNamespace is the UUIDv5 namespace of centroid fingerprints.
	FingerprintNamespace = "2fb71e63-a27c-4fc5-9d6d-5070698dc398"
)
