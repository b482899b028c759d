// Package buildplan is the file format of a sharded build: the plan that
// a coordinator writes (plan.json) and the shard manifests that shard
// tasks write (shards/shard-NNNNNN.json), all under the build-scoped
// prefix indexes/<index uuid32>/<snapshot-id>-<write-id>/ of the
// warehouse, next to the ivf_postings folder the build will publish.
//
// The format, its locations and the rules a reader checks are specified
// in docs/build.md, "Sharded builds". Parse functions are strict: unknown
// members, trailing data and values that break a rule are refused with an
// error that names the file and the member (ErrInvalid).
package buildplan
