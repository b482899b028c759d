// Package metadata models the ParqDB Index Metadata Spec and the IVF
// metadata rules (ivf-index-schema §2, §3) as Go types, with a strict
// parser, a validator whose errors carry JSON paths, a canonical writer, the
// centroid descriptor fingerprint and a successor builder.
package metadata
