// Package calibrate maps a target recall to a search setting.
//
// Run measures, for one index snapshot, recall@K and a cost per query over a
// grid of (nprobe, refine) settings, using a deterministic sample of the
// index's own source rows as queries against exact (brute-force) answers;
// each query's own row is left out of both its exact and its approximate
// answer, so that the sample behaves like queries that are not in the
// index. Pick then chooses the cheapest measured setting whose recall,
// less a safety margin, meets a target.
//
// The result is a Calibration, stored beside the snapshot's postings as a
// non-semantic side file (Location; docs/parquet-provider-profile.md §4.1):
// it never changes what the index metadata means, readers ignore it when it
// is absent, unreadable or bound to another snapshot (Calibration.Matches),
// and any reader may recompute it.
//
// The package is a format and an algorithm: it opens no file itself. Run
// takes a Searcher (package query implements it over an open index) and
// Parse and Marshal take bytes.
package calibrate
