package metadata

import (
	"testing"
)

// S0 and S1 are the two snapshots of testdata/valid/base.json; S1 (id 6) is
// current. Targets below are exact canonical lines of that file.
const (
	s0FP    = `"ivf_centroids_fingerprint": "4098c264-c1d8-5dad-8692-3c8767fbb05c"`
	s0Loc   = `"ivf_centroids_metadata_location": "metadata/0a1b2c3d-4e5f-4a6b-8c7d-8e9fa0b1c2d3/v1.metadata.json"`
	s0UUID  = `"ivf_centroids_uuid": "0a1b2c3d-4e5f-4a6b-8c7d-8e9fa0b1c2d3"`
	s0CLoc  = `"location": "indexes/0a1b2c3d4e5f4a6b8c7d8e9fa0b1c2d3/1/ivf_centroids/"`
	s0PLoc  = `"location": "indexes/6f1d2a3b4c5d4e6f8a7b9c0d1e2f3a4b/4/ivf_postings/"`
	logE0   = "\"timestamp-ms\": 1750000100000,\n      \"snapshot-id\": 4\n"
	logE1   = "\"timestamp-ms\": 1750000200000,\n      \"snapshot-id\": 6\n"
	rootPrp = "\"properties\": {\n    \"owner\": \"search-team\"\n  }"
)

func metadataInvalidCases() []invalidCase {
	p0 := "snapshots[0]."
	p1 := "snapshots[1]."
	par0 := p0 + "parameters."
	tab0 := p0 + "index-tables."
	cases := []invalidCase{
		// Syntax (RFC 8259, clarification 8).
		{"bom", prepend("\ufeff"), "", "byte-order mark"},
		{"invalid-utf8", repl(`"search-team"`, "\"search-\xff\""), "", "invalid UTF-8 at byte offset"},
		{"invalid-utf8-surrogate", repl(`"search-team"`, "\"search-\xed\xa0\x80\""), "", "invalid UTF-8"},
		{"lone-surrogate-escape", repl(`"search-team"`, `"search-\ud800"`), "properties.owner", "JSON syntax error"},
		{"trailing-value", appendText("{}\n"), "", "trailing data"},
		{"trailing-garbage", appendText("x"), "", "trailing data"},
		{"trailing-comma", repl(`"owner": "search-team"`, `"owner": "search-team",`), "properties", "JSON syntax error"},
		{"syntax-error", repl(`"format-version": 1,`, `"format-version": 1,,`), "", "JSON syntax error"},
		{"truncated", func(_ *testing.T, d string) string { return d[:len(d)/2] }, p1 + "sequence-number", "JSON syntax error: unexpected EOF"},
		{"empty", whole(""), "", "empty document"},
		{"whitespace-only", whole(" \n"), "", "empty document"},
		{"not-object", whole("[]\n"), "", "expected an object, got a list"},
		{"single-quotes", repl(`"owner"`, `'owner'`), "properties", "JSON syntax error"},
		{"leading-zero-number", repl(`"last-sequence-number": 7`, `"last-sequence-number": 07`), "", "JSON syntax error"},
		{"plus-number", repl(`"last-sequence-number": 7`, `"last-sequence-number": +7`), "last-sequence-number", "JSON syntax error"},
		{"nan", repl(`"last-sequence-number": 7`, `"last-sequence-number": NaN`), "last-sequence-number", "JSON syntax error"},
		{"comment", repl(`"format-version": 1,`, `"format-version": 1, // one`), "", "JSON syntax error"},
		{"raw-control-in-string", repl(`"search-team"`, "\"search\tteam\""), "properties.owner", "JSON syntax error"},

		// Duplicate keys at any depth.
		{"duplicate-key-root", repl(`"format-version": 1,`, `"format-version": 1, "format-version": 1,`), "format-version", "duplicate key"},
		{"duplicate-key-parameters", repl(`"nlist": "32",`, `"nlist": "32", "nlist": "32",`), p1 + "parameters.nlist", "duplicate key"},
		{"duplicate-key-escaped", repl(`"owner": "search-team"`, `"owner": "search-team", "\u006fwner": "x"`), "properties.owner", "duplicate key"},
		{"duplicate-key-log-entry", repl(logE0, "\"timestamp-ms\": 1750000100000, \"snapshot-id\": 4, \"snapshot-id\": 4\n"), "snapshot-log[0].snapshot-id", "duplicate key"},
		{"duplicate-key-identifier", repl(`"name": "documents"`, `"name": "documents", "name": "documents"`), p0 + "source-table.identifier.name", "duplicate key"},

		// Unknown fields.
		{"unknown-root", repl(`"format-version": 1,`, `"format-version": 1, "format-version-2": 1,`), "format-version-2", "unknown field"},
		{"unknown-snapshot", repl(`"snapshot-id": 4,`, `"snapshot-id": 4, "parent-id": 3,`), p0 + "parent-id", "unknown field"},
		{"unknown-log-entry", repl(logE0, "\"timestamp-ms\": 1750000100000, \"snapshot-id\": 4, \"note\": \"x\"\n"), "snapshot-log[0].note", "unknown field"},
		{"unknown-source-table", repl(`"source-table": {`, `"source-table": {"format": "x",`), p0 + "source-table.format", "unknown field"},
		{"unknown-identifier", repl(`"name": "documents"`, `"name": "documents", "schema": "x"`), p0 + "source-table.identifier.schema", "unknown field"},
		{"unknown-index-provider", repl(`"index-provider": {`, `"index-provider": {"kind": "x",`), p0 + "index-provider.kind", "unknown field"},
		{"unknown-index-table", repl(`"definition-version": 2,`, `"definition-version": 2, "format": "x",`), p1 + "index-tables.ivf_postings.format", "unknown field"},
		{"unknown-field-case", repl(`"format-version": 1,`, `"Format-Version": 1,`), "Format-Version", "unknown field"},

		// Missing required fields (renamed so that nothing else changes).
		{"missing-format-version", repl(`"format-version"`, `"x-format-version"`), "format-version", "required field is missing"},
		{"missing-index-uuid", repl(`"index-uuid"`, `"x-index-uuid"`), "index-uuid", "required field is missing"},
		{"missing-last-updated-ms", repl(`"last-updated-ms"`, `"x-last-updated-ms"`), "last-updated-ms", "required field is missing"},
		{"missing-last-sequence-number", repl(`"last-sequence-number"`, `"x-last-sequence-number"`), "last-sequence-number", "required field is missing"},
		{"missing-current-snapshot-id", repl(`"current-snapshot-id"`, `"x-current-snapshot-id"`), "current-snapshot-id", "required field is missing"},
		{"missing-snapshots", repl(`"snapshots"`, `"x-snapshots"`), "snapshots", "required field is missing"},
		{"missing-snapshot-log", repl(`"snapshot-log"`, `"x-snapshot-log"`), "snapshot-log", "required field is missing"},
		{"missing-snapshot-id", repl(`"snapshot-id": 4,`, `"x-snapshot-id": 4,`), p0 + "snapshot-id", "required field is missing"},
		{"missing-sequence-number", repl(`"sequence-number"`, `"x-sequence-number"`), p0 + "sequence-number", "required field is missing"},
		{"missing-timestamp-ms", repl(`"timestamp-ms"`, `"x-timestamp-ms"`), p0 + "timestamp-ms", "required field is missing"},
		{"missing-summary", repl(`"summary"`, `"x-summary"`), p0 + "summary", "required field is missing"},
		{"missing-source-table", repl(`"source-table"`, `"x-source-table"`), p0 + "source-table", "required field is missing"},
		{"missing-vector-field", repl(`"vector-field"`, `"x-vector-field"`), p0 + "vector-field", "required field is missing"},
		{"missing-source-key-fields", repl(`"source-key-fields"`, `"x-source-key-fields"`), p0 + "source-key-fields", "required field is missing"},
		{"missing-indexed-rows", repl(`"indexed-rows"`, `"x-indexed-rows"`), p0 + "indexed-rows", "required field is missing"},
		{"missing-index-family", repl(`"index-family"`, `"x-index-family"`), p0 + "index-family", "required field is missing"},
		{"missing-index-schema-version", repl(`"index-schema-version"`, `"x-index-schema-version"`), p0 + "index-schema-version", "required field is missing"},
		{"missing-metric", repl(`"metric"`, `"x-metric"`), p0 + "metric", "required field is missing"},
		{"missing-parameters", repl(`"parameters"`, `"x-parameters"`), p0 + "parameters", "required field is missing"},
		{"missing-index-provider", repl(`"index-provider"`, `"x-index-provider"`), p0 + "index-provider", "required field is missing"},
		{"missing-index-tables", repl(`"index-tables"`, `"x-index-tables"`), p0 + "index-tables", "required field is missing"},
		{"missing-source-provider", repl(`"provider": "parquet",`, `"x-provider": "parquet",`), p0 + "source-table.provider", "required field is missing"},
		{"missing-source-properties", repl(`"properties": {
          "definition-version"`, `"x-properties": {
          "definition-version"`), p0 + "source-table.properties", "required field is missing"},
		{"missing-identifier-catalog", repl(`"catalog"`, `"x-catalog"`), p0 + "source-table.identifier.catalog", "required field is missing"},
		{"missing-identifier-namespace", repl(`"namespace"`, `"x-namespace"`), p0 + "source-table.identifier.namespace", "required field is missing"},
		{"missing-identifier-name", repl(`"name": "documents"`, `"x-name": "documents"`), p0 + "source-table.identifier.name", "required field is missing"},
		{"missing-index-provider-provider", repl(`"index-provider": {
        "provider"`, `"index-provider": {
        "x-provider"`), p0 + "index-provider.provider", "required field is missing"},
		{"missing-index-provider-properties", repl(`"properties": {}`, `"x-properties": {}`), p0 + "index-provider.properties", "required field is missing"},
		{"missing-definition-version", repl(`"definition-version": 1,`, `"x-definition-version": 1,`), tab0 + "ivf_centroids.definition-version", "required field is missing"},
		{"missing-index-table-properties", repl(`"definition-version": 2,
          "properties"`, `"definition-version": 2,
          "x-properties"`), p1 + "index-tables.ivf_postings.properties", "required field is missing"},
		{"missing-log-timestamp", repl(logE0, "\"x-timestamp-ms\": 1750000100000,\n      \"snapshot-id\": 4\n"), "snapshot-log[0].timestamp-ms", "required field is missing"},
		{"missing-log-snapshot-id", repl(logE1, "\"timestamp-ms\": 1750000200000,\n      \"x-snapshot-id\": 6\n"), "snapshot-log[1].snapshot-id", "required field is missing"},

		// Wrong types, null, non-integers and out-of-range integers.
		{"int-as-string", repl(`"format-version": 1,`, `"format-version": "1",`), "format-version", "expected an integer (int), got a string"},
		{"int-as-float", repl(`"format-version": 1,`, `"format-version": 1.0,`), "format-version", "expected an integer literal (int), got 1.0"},
		{"int-as-exponent", repl(`"last-sequence-number": 7`, `"last-sequence-number": 7e0`), "last-sequence-number", "expected an integer literal (long), got 7e0"},
		{"int-as-bool", repl(`"format-version": 1,`, `"format-version": true,`), "format-version", "got a boolean"},
		{"long-null", repl(`"last-sequence-number": 7`, `"last-sequence-number": null`), "last-sequence-number", "got null"},
		{"int32-overflow", repl(`"index-schema-version": 1,`, `"index-schema-version": 2147483648,`), p0 + "index-schema-version", "out of range for int"},
		{"int32-underflow", repl(`"definition-version": 1,`, `"definition-version": -2147483649,`), tab0 + "ivf_centroids.definition-version", "out of range for int"},
		{"int64-overflow", repl(`"last-updated-ms": 1750000300000`, `"last-updated-ms": 9223372036854775808`), "last-updated-ms", "out of range for long"},
		{"int64-underflow", repl(`"indexed-rows": 5000`, `"indexed-rows": -9223372036854775809`), p0 + "indexed-rows", "out of range for long"},
		{"string-as-number", repl(`"vector-field": "embedding"`, `"vector-field": 7`), p0 + "vector-field", "expected a string, got the number 7"},
		{"string-null", repl(`"index-family": "ivf"`, `"index-family": null`), p0 + "index-family", "expected a string, got null"},
		{"map-value-number", repl(`"operation": "create"`, `"operation": 1`), p0 + "summary.operation", "expected a string"},
		{"map-value-null", repl(`"nlist": "16"`, `"nlist": null`), par0 + "nlist", "expected a string, got null"},
		{"map-as-list", repl(`"index-provider": {
        "provider": "parquet",
        "properties": {}`, `"index-provider": {
        "provider": "parquet",
        "properties": []`), p0 + "index-provider.properties", "expected an object"},
		{"optional-properties-null", repl(rootPrp, `"properties": null`), "properties", "got null"},
		{"optional-identifier-null", repl(`"identifier": {`, `"identifier": null, "x-identifier": {`), p0 + "source-table.identifier", "expected an object, got null"},
		{"list-element-number", repl(`"tenant",`, `1,`), p0 + "source-key-fields[0]", "expected a string"},
		{"list-as-string", repl(`"namespace": [`, `"namespace": "public", "x-namespace": [`), p0 + "source-table.identifier.namespace", "expected a list of strings"},
		{"snapshots-as-object", repl(`"snapshots": [`, `"snapshots": {}, "x-snapshots": [`), "snapshots", "expected a list of snapshots"},
		{"snapshot-as-list", repl(`"snapshots": [`, `"snapshots": [[],`), "snapshots[0]", "expected an object, got a list"},
		{"log-as-object", repl(`"snapshot-log": [`, `"snapshot-log": {}, "x-snapshot-log": [`), "snapshot-log", "expected a list of snapshot-log entries"},
		{"index-table-as-number", repl(`"ivf_postings": {`, `"ivf_postings": 1, "x": {`), tab0 + "ivf_postings", "expected an object, got the number 1"},
		{"index-tables-as-list", repl(`"index-tables": {`, `"index-tables": [], "x-index-tables": {`), p0 + "index-tables", "expected an object"},
		{"quoted-path-key", repl(`"owner": "search-team"`, `"owner": "search-team", "a.b": 1`), `properties["a.b"]`, "expected a string"},

		// Root rules.
		{"format-version-2", repl(`"format-version": 1,`, `"format-version": 2,`), "format-version", "must be 1, got 2"},
		{"index-uuid-uppercase", repl(`"6f1d2a3b-4c5d-4e6f-8a7b-9c0d1e2f3a4b"`, `"6F1D2A3B-4C5D-4E6F-8A7B-9C0D1E2F3A4B"`), "index-uuid", "lowercase 8-4-4-4-12"},
		{"index-uuid-no-hyphens", repl(`"6f1d2a3b-4c5d-4e6f-8a7b-9c0d1e2f3a4b"`, `"6f1d2a3b4c5d4e6f8a7b9c0d1e2f3a4b"`), "index-uuid", "lowercase 8-4-4-4-12"},
		{"index-uuid-braces", repl(`"6f1d2a3b-4c5d-4e6f-8a7b-9c0d1e2f3a4b"`, `"{6f1d2a3b-4c5d-4e6f-8a7b-9c0d1e2f3a4b}"`), "index-uuid", "lowercase 8-4-4-4-12"},
		{"index-uuid-nil", repl(`"6f1d2a3b-4c5d-4e6f-8a7b-9c0d1e2f3a4b"`, `"00000000-0000-0000-0000-000000000000"`), "index-uuid", "nil UUID"},
		{"last-updated-negative", repl(`"last-updated-ms": 1750000300000`, `"last-updated-ms": -1`), "last-updated-ms", "must not be negative"},
		{"last-updated-before-snapshot", repl(`"last-updated-ms": 1750000300000`, `"last-updated-ms": 1750000150000`), "last-updated-ms", "earlier than snapshots[1].timestamp-ms 1750000200000"},
		{"last-updated-before-log", repl(logE1, "\"timestamp-ms\": 1750000400000,\n      \"snapshot-id\": 6\n"), "last-updated-ms", "earlier than snapshot-log[1].timestamp-ms 1750000400000"},
		{"last-sequence-zero", repl(`"last-sequence-number": 7`, `"last-sequence-number": 0`), "last-sequence-number", "must be positive"},
		{"sequence-above-last", repl(`"last-sequence-number": 7`, `"last-sequence-number": 5`), p1 + "sequence-number", "exceeds last-sequence-number 5"},
		{"current-not-retained", repl(`"current-snapshot-id": 6`, `"current-snapshot-id": 5`), "current-snapshot-id", "not retained"},
		{"current-zero", repl(`"current-snapshot-id": 6`, `"current-snapshot-id": 0`), "current-snapshot-id", "must be positive"},
		{"snapshots-empty", cut(`"snapshots": [`, `"snapshot-log"`, "\"snapshots\": [],\n  "), "snapshots", "must not be empty"},
		{"log-empty", cut(`"snapshot-log": [`, `"properties"`, "\"snapshot-log\": [],\n  "), "snapshot-log", "must not be empty"},
		{"log-decreasing", repl(logE1, "\"timestamp-ms\": 1750000000000,\n      \"snapshot-id\": 6\n"), "snapshot-log[1].timestamp-ms", "non-decreasing"},
		{"log-negative-timestamp", repl(logE0, "\"timestamp-ms\": -1,\n      \"snapshot-id\": 4\n"), "snapshot-log[0].timestamp-ms", "must not be negative"},
		{"log-not-retained", repl(logE0, "\"timestamp-ms\": 1750000100000,\n      \"snapshot-id\": 3\n"), "snapshot-log[0].snapshot-id", "names snapshot 3, which is not retained"},
		{"log-final-not-current", repl(logE1, "\"timestamp-ms\": 1750000200000,\n      \"snapshot-id\": 4\n"), "snapshot-log[1].snapshot-id", "not current-snapshot-id 6"},

		// Snapshot rules.
		{"snapshot-id-zero", repl(`"snapshot-id": 4,`, `"snapshot-id": 0,`), p0 + "snapshot-id", "must be positive, got 0"},
		{"snapshot-id-negative", repl(`"snapshot-id": 4,`, `"snapshot-id": -4,`), p0 + "snapshot-id", "must be positive, got -4"},
		{"snapshot-id-duplicate", repl(`"snapshot-id": 6,`, `"snapshot-id": 4,`), p1 + "snapshot-id", "duplicate snapshot-id 4 (also snapshots[0])"},
		{"sequence-zero", repl(`"sequence-number": 4,`, `"sequence-number": 0,`), p0 + "sequence-number", "must be positive"},
		{"sequence-duplicate", repl(`"sequence-number": 6,`, `"sequence-number": 4,`), p1 + "sequence-number", "duplicate sequence-number 4 (also snapshots[0])"},
		{"timestamp-negative", repl(`"timestamp-ms": 1750000100000,
      "summary"`, `"timestamp-ms": -5,
      "summary"`), p0 + "timestamp-ms", "must not be negative"},
		{"identity-vector-field", repl(`"vector-field": "embedding"`, `"vector-field": "embedding2"`), p0 + "vector-field", "identity field differs from snapshots[1]"},
		{"identity-key-order", repl(`"tenant",
        "doc_id"`, `"doc_id",
        "tenant"`), p0 + "source-key-fields", "identity field differs"},
		{"identity-metric", repl(`"metric": "cosine"`, `"metric": "l2_squared"`), p0 + "metric", "identity field differs"},
		{"identity-family", repl(`"index-family": "ivf"`, `"index-family": "ivf2"`), p0 + "index-family", "identity field differs"},
		{"key-fields-empty", replAll(`"source-key-fields": [
        "tenant",
        "doc_id"
      ]`, `"source-key-fields": []`), p0 + "source-key-fields", "must not be empty"},
		{"key-field-duplicate", replAll(`"doc_id"`, `"tenant"`), p0 + "source-key-fields[1]", `duplicate source key field "tenant" (also source-key-fields[0])`},
		{"key-field-empty", replAll(`"doc_id"`, `""`), p0 + "source-key-fields[1]", "must not be empty"},
		{"key-field-is-vector", replAll(`"doc_id"`, `"embedding"`), p0 + "source-key-fields[1]", "is the vector-field"},
		{"key-field-reserved", replAll(`"doc_id"`, `"_distance"`), p0 + "source-key-fields[1]", "reserved"},
		{"vector-field-empty", replAll(`"vector-field": "embedding"`, `"vector-field": ""`), p0 + "vector-field", "must not be empty"},
		{"vector-field-reserved", replAll(`"vector-field": "embedding"`, `"vector-field": "_distance"`), p0 + "vector-field", "reserved"},
		{"indexed-rows-zero", repl(`"indexed-rows": 5000`, `"indexed-rows": 0`), p0 + "indexed-rows", "must be positive"},
		{"source-provider-empty", repl(`"provider": "parquet",`, `"provider": "",`), p0 + "source-table.provider", "must not be empty"},
		{"identifier-catalog-empty", repl(`"catalog": "datafusion"`, `"catalog": ""`), p0 + "source-table.identifier.catalog", "must not be empty"},
		{"identifier-namespace-empty-element", repl(`"public",`, `"",`), p0 + "source-table.identifier.namespace[0]", "must not be empty"},
		{"identifier-name-empty", repl(`"name": "documents"`, `"name": ""`), p0 + "source-table.identifier.name", "must not be empty"},
		{"index-provider-empty", repl(`"index-provider": {
        "provider": "parquet"`, `"index-provider": {
        "provider": ""`), p0 + "index-provider.provider", "must not be empty"},
		{"definition-version-zero", repl(`"definition-version": 2,`, `"definition-version": 0,`), p1 + "index-tables.ivf_postings.definition-version", "must be positive"},

		// Family and version (clarification 10).
		{"family-unknown", replAll(`"index-family": "ivf"`, `"index-family": "hnsw"`), p0 + "index-family", `unsupported index family "hnsw" at index-schema-version 1`},
		{"family-case", replAll(`"index-family": "ivf"`, `"index-family": "IVF"`), p1 + "index-family", `unsupported index family "IVF" at index-schema-version 1`},
		{"schema-version-2", repl(`"index-schema-version": 1,`, `"index-schema-version": 2,`), p0 + "index-schema-version", `unsupported index family "ivf" at index-schema-version 2`},
		{"schema-version-0", repl(`"index-schema-version": 1,`, `"index-schema-version": 0,`), p0 + "index-schema-version", `"ivf" at index-schema-version 0`},

		// IVF rules (ivf-index-schema §1, §2).
		{"metric-unknown", replAll(`"metric": "cosine"`, `"metric": "dot"`), p0 + "metric", `unsupported metric "dot"`},
		{"metric-case", replAll(`"metric": "cosine"`, `"metric": "Cosine"`), p1 + "metric", `unsupported metric "Cosine"`},
		{"param-missing", repl(`"nlist": "16",`, ``), par0 + "nlist", "required ivf parameter is missing"},
		{"param-unknown", repl(`"nlist": "16",`, `"nlist": "16", "nprobe": "8",`), par0 + "nprobe", "unknown ivf parameter"},
		{"param-case", repl(`"dimension": "8"`, `"Dimension": "8"`), par0 + "Dimension", "unknown ivf parameter"},
		{"dimension-leading-zero", repl(`"dimension": "8"`, `"dimension": "08"`), par0 + "dimension", `"08" has a leading zero`},
		{"dimension-plus", repl(`"dimension": "8"`, `"dimension": "+8"`), par0 + "dimension", "not a canonical positive base-10 integer"},
		{"dimension-negative", repl(`"dimension": "8"`, `"dimension": "-8"`), par0 + "dimension", "not a canonical positive base-10 integer"},
		{"dimension-zero", repl(`"dimension": "8"`, `"dimension": "0"`), par0 + "dimension", "must be positive, got 0"},
		{"dimension-empty", repl(`"dimension": "8"`, `"dimension": ""`), par0 + "dimension", "empty"},
		{"dimension-space", repl(`"dimension": "8"`, `"dimension": " 8"`), par0 + "dimension", "not a canonical positive base-10 integer"},
		{"dimension-decimal", repl(`"dimension": "8"`, `"dimension": "8.0"`), par0 + "dimension", "not a canonical positive base-10 integer"},
		{"dimension-non-ascii-digit", repl(`"dimension": "8"`, `"dimension": "８"`), par0 + "dimension", "not a canonical positive base-10 integer"},
		{"dimension-overflow", repl(`"dimension": "8"`, `"dimension": "2147483648"`), par0 + "dimension", "exceeds the maximum 2147483647"},
		{"nlist-overflow", repl(`"nlist": "16"`, `"nlist": "99999999999999999999"`), par0 + "nlist", "exceeds the maximum 2147483647"},
		{"nlist-above-ntotal", repl(`"nlist": "16"`, `"nlist": "5001"`), par0 + "nlist", "nlist 5001 exceeds ntotal 5000"},
		{"ntotal-overflow", repl(`"ntotal": "5000"`, `"ntotal": "9223372036854775808"`), par0 + "ntotal", "exceeds the maximum 9223372036854775807"},
		{"ntotal-exponent", repl(`"ntotal": "5000"`, `"ntotal": "5e3"`), par0 + "ntotal", "not a canonical positive base-10 integer"},
		{"ntotal-mismatch", repl(`"indexed-rows": 5000`, `"indexed-rows": 4999`), p0 + "indexed-rows", "indexed-rows 4999 does not equal parameters.ntotal 5000"},
		{"encoding-unknown", repl(`"posting_encoding": "lvq4"`, `"posting_encoding": "pq"`), par0 + "posting_encoding", `unsupported posting_encoding "pq"`},
		{"encoding-case", repl(`"posting_encoding": "lvq4"`, `"posting_encoding": "LVQ4"`), par0 + "posting_encoding", `unsupported posting_encoding "LVQ4"`},
		{"fingerprint-not-uuid", repl(s0FP, `"ivf_centroids_fingerprint": "abc"`), par0 + "ivf_centroids_fingerprint", "lowercase 8-4-4-4-12"},
		{"fingerprint-uppercase", repl(s0FP, `"ivf_centroids_fingerprint": "4098C264-C1D8-5DAD-8692-3C8767FBB05C"`), par0 + "ivf_centroids_fingerprint", "lowercase 8-4-4-4-12"},
		{"fingerprint-nil", repl(s0FP, `"ivf_centroids_fingerprint": "00000000-0000-0000-0000-000000000000"`), par0 + "ivf_centroids_fingerprint", "nil UUID"},
		{"fingerprint-not-v5", repl(s0FP, `"ivf_centroids_fingerprint": "4098c264-c1d8-4dad-8692-3c8767fbb05c"`), par0 + "ivf_centroids_fingerprint", "not a version-5"},
		{"fingerprint-bad-variant", repl(s0FP, `"ivf_centroids_fingerprint": "4098c264-c1d8-5dad-c692-3c8767fbb05c"`), par0 + "ivf_centroids_fingerprint", "not a version-5"},
		{"centroids-uuid-nil", repl(s0UUID, `"ivf_centroids_uuid": "00000000-0000-0000-0000-000000000000"`), par0 + "ivf_centroids_uuid", "nil UUID"},
		{"centroids-uuid-uppercase", repl(s0UUID, `"ivf_centroids_uuid": "0A1B2C3D-4E5F-4A6B-8C7D-8E9FA0B1C2D3"`), par0 + "ivf_centroids_uuid", "lowercase"},
		{"centroids-location-absolute", repl(s0Loc, `"ivf_centroids_metadata_location": "/metadata/c.json"`), par0 + "ivf_centroids_metadata_location", "absolute path"},
		{"centroids-location-scheme", repl(s0Loc, `"ivf_centroids_metadata_location": "s3://bucket/metadata/c.json"`), par0 + "ivf_centroids_metadata_location", "not a warehouse-relative location"},
		{"centroids-location-dotdot", repl(s0Loc, `"ivf_centroids_metadata_location": "metadata/../../c.json"`), par0 + "ivf_centroids_metadata_location", `".." path segment`},
		{"centroids-location-empty-segment", repl(s0Loc, `"ivf_centroids_metadata_location": "metadata//c.json"`), par0 + "ivf_centroids_metadata_location", "empty path segment"},
		{"centroids-location-empty", repl(s0Loc, `"ivf_centroids_metadata_location": ""`), par0 + "ivf_centroids_metadata_location", "empty"},
		{"role-missing", repl(`"ivf_postings": {`, `"postings": {`), tab0 + "ivf_postings", "required ivf index-table role is missing"},
		{"role-unknown", repl(`"ivf_postings": {`, `"ivf_roots": {"definition-version": 1, "properties": {"location": "r/"}}, "ivf_postings": {`), tab0 + "ivf_roots", "unknown index-table role"},
		{"table-location-missing", repl(s0CLoc, `"path": "indexes/c/"`), tab0 + "ivf_centroids.properties.location", "required"},
		{"table-location-absolute", repl(s0CLoc, `"location": "/indexes/c/"`), tab0 + "ivf_centroids.properties.location", "absolute path"},
		{"table-location-scheme", repl(s0PLoc, `"location": "file:///tmp/p/"`), tab0 + "ivf_postings.properties.location", "not a warehouse-relative location"},
		{"table-location-dot", repl(s0PLoc, `"location": "indexes/./p/"`), tab0 + "ivf_postings.properties.location", `"." path segment`},
		{"table-location-backslash", repl(s0PLoc, `"location": "indexes\\p"`), tab0 + "ivf_postings.properties.location", "backslash"},
		{"table-location-control", repl(s0PLoc, `"location": "indexes/p\n"`), tab0 + "ivf_postings.properties.location", "control character"},
		{"table-location-shared", repl(s0PLoc, s0CLoc), tab0 + "ivf_postings.properties.location", "equals the ivf_centroids location"},
	}
	return cases
}

func TestInvalidMetadata(t *testing.T) {
	checkInvalidCases(t, "testdata/valid/base.json", "testdata/invalid", metadataInvalidCases(),
		func(file string, data []byte) error { _, err := ParseFile(file, data); return err })
}

const (
	cFP   = `"fingerprint": "4098c264-c1d8-5dad-8692-3c8767fbb05c"`
	cUUID = `"artifact-uuid": "0a1b2c3d-4e5f-4a6b-8c7d-8e9fa0b1c2d3"`
	cCen  = `"centroids": "indexes/0a1b2c3d4e5f4a6b8c7d8e9fa0b1c2d3/1/ivf_centroids/"`
	cRoot = `"roots": "indexes/0a1b2c3d4e5f4a6b8c7d8e9fa0b1c2d3/1/ivf_roots/"`
)

func centroidInvalidCases() []invalidCase {
	return []invalidCase{
		{"bom", prepend("\ufeff"), "", "byte-order mark"},
		{"trailing-data", appendText("[]"), "", "trailing data"},
		{"duplicate-key", repl(`"nlist": 16,`, `"nlist": 16, "nlist": 16,`), "descriptor.nlist", "duplicate key"},
		{"unknown-field", repl(cRoot, cRoot+`, "manifest": "m/"`), "manifest", "unknown field"},
		{"unknown-descriptor-field", repl(`"nlist": 16,`, `"nlist": 16, "seed": 1,`), "descriptor.seed", "unknown field"},
		{"missing-roots", repl(`"roots"`, `"x-roots"`), "roots", "required field is missing"},
		{"missing-fingerprint", repl(`"fingerprint"`, `"x-fingerprint"`), "fingerprint", "required field is missing"},
		{"missing-descriptor-profile", repl(`"clustering-profile-version"`, `"x-clustering-profile-version"`), "descriptor.clustering-profile-version", "required field is missing"},
		{"dimension-as-string", repl(`"dimension": 8,`, `"dimension": "8",`), "descriptor.dimension", "expected an integer (int), got a string"},
		{"dimension-overflow", repl(`"dimension": 8,`, `"dimension": 2147483648,`), "descriptor.dimension", "out of range for int"},
		{"nlist-float", repl(`"nlist": 16,`, `"nlist": 16.0,`), "descriptor.nlist", "expected an integer literal"},
		{"created-null", repl(`"created-at-ms": 1750000050000`, `"created-at-ms": null`), "created-at-ms", "got null"},
		{"descriptor-as-list", repl(`"descriptor": {`, `"descriptor": [], "x": {`), "descriptor", "expected an object, got a list"},
		{"format-version-2", repl(`"format-version": 1,`, `"format-version": 2,`), "format-version", "must be 1, got 2"},
		{"artifact-uuid-nil", repl(cUUID, `"artifact-uuid": "00000000-0000-0000-0000-000000000000"`), "artifact-uuid", "nil UUID"},
		{"artifact-uuid-uppercase", repl(cUUID, `"artifact-uuid": "0A1B2C3D-4E5F-4A6B-8C7D-8E9FA0B1C2D3"`), "artifact-uuid", "lowercase"},
		{"fingerprint-mismatch", repl(cFP, `"fingerprint": "a0577fb8-dfa5-596e-8bc3-ee20a78aa06d"`), "fingerprint", "is not the fingerprint of the descriptor (4098c264-c1d8-5dad-8692-3c8767fbb05c)"},
		{"fingerprint-after-descriptor-change", repl(`"nlist": 16,`, `"nlist": 32,`), "fingerprint", "is not the fingerprint of the descriptor (a0577fb8-dfa5-596e-8bc3-ee20a78aa06d)"},
		{"fingerprint-not-uuid", repl(cFP, `"fingerprint": "4098c264c1d85dad86923c8767fbb05c"`), "fingerprint", "lowercase 8-4-4-4-12"},
		{"created-negative", repl(`"created-at-ms": 1750000050000`, `"created-at-ms": -1`), "created-at-ms", "must not be negative"},
		{"vector-field-empty", repl(`"vector-field": "embedding"`, `"vector-field": ""`), "descriptor.vector-field", "must not be empty"},
		{"vector-field-reserved", repl(`"vector-field": "embedding"`, `"vector-field": "_distance"`), "descriptor.vector-field", "reserved"},
		{"dimension-zero", repl(`"dimension": 8,`, `"dimension": 0,`), "descriptor.dimension", "must be positive"},
		{"metric-unknown", repl(`"metric": "cosine"`, `"metric": "inner_product"`), "descriptor.metric", `unsupported metric "inner_product"`},
		{"nlist-negative", repl(`"nlist": 16,`, `"nlist": -16,`), "descriptor.nlist", "must be positive"},
		{"profile-version-2", repl(`"clustering-profile-version": 1`, `"clustering-profile-version": 2`), "descriptor.clustering-profile-version", "unsupported clustering profile version 2"},
		{"centroids-absolute", repl(cCen, `"centroids": "/c/"`), "centroids", "absolute path"},
		{"centroids-scheme", repl(cCen, `"centroids": "s3://b/c/"`), "centroids", "not a warehouse-relative location"},
		{"roots-dotdot", repl(cRoot, `"roots": "../r/"`), "roots", `".." path segment`},
		{"roots-equal-centroids", repl(cRoot, `"roots": "indexes/0a1b2c3d4e5f4a6b8c7d8e9fa0b1c2d3/1/ivf_centroids/"`), "roots", "equals centroids"},
	}
}

func TestInvalidCentroid(t *testing.T) {
	checkInvalidCases(t, "testdata/centroid/valid/base.json", "testdata/centroid/invalid", centroidInvalidCases(),
		func(file string, data []byte) error { _, err := ParseCentroidFile(file, data); return err })
}

func TestValidCanonical(t *testing.T) {
	t.Run("metadata", func(t *testing.T) {
		checkCanonical(t, "testdata/valid", "testdata/canonical", ParseFile, Marshal)
	})
	t.Run("centroid", func(t *testing.T) {
		checkCanonical(t, "testdata/centroid/valid", "testdata/centroid/canonical", ParseCentroidFile, MarshalCentroid)
	})
}
