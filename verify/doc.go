// Package verify checks a stored ParqDB index against every invariant of
// the index-metadata spec, the IVF index schema, their clarifications and
// the Parquet provider profile (docs/parquet-provider-profile.md), and
// reports each check by name: `parqdb index verify NAME`.
//
// # Checks
//
// Run reports, in this order (the Check* constants):
//
//   - catalog entry: the catalog's name, metadata location and binding are
//     well formed.
//   - index metadata: the metadata file parses strictly and validates
//     (metadata.ParseFile).
//   - snapshot: the selected snapshot exists and has valid IVF parameters.
//   - catalog binding: the catalog's source binding equals the current
//     snapshot's source-table (skipped for an older snapshot).
//   - index tables: index-provider and both index-table definitions
//     (postings.CheckIndexTable, with the index's own UUID for postings).
//   - centroid metadata: the centroid document parses and validates, agrees
//     with the snapshot (metadata.CheckSnapshotAgainstCentroid), and lives
//     where the profile puts it.
//   - centroid fingerprint: metadata.Fingerprint recomputed both from the
//     snapshot's identity fields and from the document's descriptor, and
//     compared with the document and the snapshot parameter. When the
//     document fails strict parsing it is decoded leniently, so that this
//     check and the table checks still report on their own.
//   - ivf_roots, ivf_centroids: read through their Parquet footers
//     (postings.ReadRoots, postings.ReadCentroids), C = nlist,
//     postings.CheckHierarchy, ivf.Centroids validation; each folder holds
//     exactly its one file.
//   - manifest: postings.ParseManifest (M1–M12), CheckLocation (M14),
//     CheckRoots (M13), encoding, dimension, nlist and rows against the
//     snapshot (M15); the key types are compared with the source's under
//     "source binding".
//   - source-files.json: parses; the table-identity recomputed from its
//     file list (the profile's recipe, implemented here again) equals both
//     its own value and the snapshot's; its rows sum to ntotal.
//   - source binding: read only when the catalog binds this location
//     (skipped, never opened, when the catalog binding check failed or an
//     older snapshot names another location); the source-table properties; the live source's
//     identity (recomputed here and compared with the source reader's and
//     the snapshot's; a change names the added, removed or rewritten
//     files); its schema (vector field, dimension, key types, _distance)
//     via source.Table.Check; its row count equals indexed-rows.
//   - postings files: every file listed exists, has the manifest's size
//     and passes postings.VerifyFile (footer row groups equal the manifest's
//     ranges, CRC-32C, range decode equals footer read) — M16.
//   - row-group layout: every file read again through its footer
//     (postings.ReadFile): one CID per row group, every CID inside the
//     file's root bucket. The detail counts the CIDs that span several
//     files (after an incremental refresh).
//   - postings rows: the rows read equal the manifest's, ntotal and
//     indexed-rows, and the source's row count.
//   - source rows: every source row satisfies the source contract (the
//     scan checks nulls, dimension, NaN/Inf, zero norm under cosine).
//   - postings keys: every postings key is unique, resolves to exactly one
//     source row, and every source row has exactly one posting.
//   - lvq codes: offset, scale and code of every row equal lvq.Encode8 or
//     lvq.Encode4 of the canonical source vector (skipped for the source
//     encoding). The offset is compared numerically (clarification 3: the
//     sign of a zero minimum is not significant), the scale bit for bit.
//   - assignment: every row's CID is the exact nearest leaf of its source
//     vector (ivf-index-schema §5).
//
// A check whose inputs an earlier failure made unavailable is "skipped";
// a skipped check never fails a report by itself.
//
// # Independence from the writer
//
// verify reads postings files through their Parquet footers as well as
// through the manifest's byte ranges, joins postings to source rows by
// converting each postings key to its values and re-encoding them the
// source's way, recomputes codes and fingerprints from first principles,
// and recomputes the table identity with its own copy of the recipe.
//
// Assignment: the nearest centroid is decided by the brute-force reference
// ivf.ExactNearest (float64 with an error bound, math/big for ties; C·D
// operations per row) for every row while rows × C × D stays within
// Options.ReferenceBudget (2^32 by default, a few seconds), or always with
// Options.Exhaustive. Beyond that budget every row is decided by
// ivf.Assigner — also exact, by the error analysis in docs/ivf.md, and
// much faster — and the reference additionally decides a deterministic
// sample of about ReferenceBudget/(C·D) rows (selected by the CRC-32C of
// the key) and every row where the Assigner disagrees with the stored CID,
// so that a misassignment is only ever reported on the reference's word,
// and a disagreement between the two is reported as a bug in package ivf.
//
// # Streaming and memory
//
// Run never holds postings codes or source vectors beyond one batch per
// worker. The row join keeps, per postings row, its key (re-encoded), CID,
// offset, scale, location and a 64-bit hash of its code (hash/maphash with
// a seed chosen per run, so a corrupted code escapes with probability
// 2^-64): about 100 bytes plus the key. When N rows would exceed
// Options.MemoryLimit (1 GiB by default, about ten million rows with long
// keys) the key space is split by hash into P partitions, and the postings
// files and the source are read P times, each time joining only that
// partition's keys. Postings files are read in parallel (Options.Workers);
// the source is scanned once per partition and its rows are checked on
// Options.Workers goroutines.
package verify
