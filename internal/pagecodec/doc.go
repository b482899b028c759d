// Package pagecodec bounds every Parquet page decompression in the process
// by the page's declared uncompressed size.
//
// parquet-go (v0.32.0) decodes a compressed page by calling its codec's
// Decode with a destination buffer whose length is the page header's
// uncompressed_page_size, but its codecs treat that buffer only as a hint:
// the LZ4_RAW codec doubles its buffer forever when a block does not
// decode (a corrupt page grows memory without bound), and the GZIP, ZSTD,
// BROTLI and SNAPPY codecs grow the buffer to whatever the stream expands
// to (a small page can claim gigabytes). Parquet files are untrusted input
// here (a user's source, or an index table someone can tamper with), so
// importing this package replaces, at init, the decoders parquet-go looks
// up by codec with ones that decode into at most len(dst) bytes and fail
// with ErrOversize otherwise. Encoding is left to parquet-go's own codecs.
//
// The replacement writes parquet-go's unexported codec table (go:linkname);
// go.mod pins parquet-go, and TestInstalled fails if an upgrade changes the
// table so that the replacement no longer takes effect. See
// docs/upstream-parquet-go-lz4.md for the fix proposed upstream, after
// which this package can go.
//
// A caller that does not state a size (a nil or empty dst) is bounded by
// MaxUndeclared instead.
package pagecodec
