// Package postings implements ParqDB's Parquet provider profile
// (docs/parquet-provider-profile.md): the physical layout of the IVF index
// tables ivf_centroids, ivf_roots and ivf_postings, and their writers and
// readers.
//
// The package never opens files. Writers take an io.Writer, readers an
// io.ReaderAt and a size; the build and query pipelines do the I/O through
// storage.Bucket and the layout helpers in layout.go name the objects.
//
// Postings use the "manifested, root-bucketed" layout: every Parquet file
// holds the CIDs of one root bucket in ascending order, every row group holds
// exactly one CID, and a JSON manifest (manifest.json) lists, for every row
// group, its CID, file, ordinal, byte range, row count and CRC-32C. A query
// reads the manifest once, then fetches only the byte ranges of the probed
// CIDs and decodes them with DecodeRowGroup without reading any footer.
//
// Source keys travel through the package as encoded keys (see Schema.AppendKey):
// the concatenation of an order-preserving encoding of each key field, so
// that two key tuples are equal exactly when their encodings are equal and
// compare in the spec's order byte for byte.
package postings

// Every page this package reads is decompressed within its declared size.
import _ "github.com/parqdb/parqdb/internal/pagecodec"
