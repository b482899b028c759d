// Package metadata models the ParqDB Index Metadata Spec and the IVF
// metadata rules (ivf-index-schema §2, §3) as Go types, with a strict
// parser, a validator whose errors carry JSON paths, a canonical writer, the
// centroid descriptor fingerprint and a successor builder.
//
// Reading: Parse/ParseFile (index metadata) and ParseCentroid/
// ParseCentroidFile (IVF centroid metadata) accept only strict RFC 8259 JSON
// that passes every rule; errors are *ValidationError values listing every
// problem as a JSON path and a rule, and wrap ErrInvalid. Writing: Marshal
// and MarshalCentroid produce the canonical bytes. Publishing: New,
// Successor and RemoveSnapshots derive new metadata from old; the catalog's
// compare-and-swap commits it. The format, every rule and every ruling made
// where the specs are silent are in docs/format.md.
//
// Values are plain data: safe to share between goroutines as long as no one
// mutates them.
package metadata
