// Package vecfile is the vectors file: an optional, non-semantic side
// artifact of an index snapshot that holds the exact (canonical) float32
// source vectors of every postings row in postings order — list by list in
// ascending CID, each list's rows in the order its row groups give them —
// so that the exact vector of a candidate (cid, pos) is one ranged read of
// D·4 bytes at a computable offset (docs/parquet-provider-profile.md §4.2).
//
// The package is a format: it opens no file itself. Writer streams vectors
// to an io.Writer and appends the footer; Open reads and checks the footer
// through an io.ReaderAt of known size; File.ReadRows and File.Gather read
// rows by global position, coalescing adjacent ranges; File.Verify checks
// the data checksum. Starts maps the manifest's per-list row counts to the
// global position of each list's first row.
package vecfile
