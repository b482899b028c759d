// Package ivf implements clustering profile 1 of the IVF index schema
// (ivf-index-schema §5): seeded hierarchical k-means training, the centroid
// artifact in memory (dense root centroids, LVQ8 leaf centroids, one
// contiguous leaf CID interval per root) and exact assignment of source
// vectors to leaves. Query routing from roots to leaves, over the same
// persisted representations (Root, Leaf), is the query package's router
// (query/route.go, docs/search.md "Routing").
//
// Everything here works on in-memory values: the Parquet tables that persist
// a Centroids value are written and read by package postings, and the build
// pipeline owns sampling, cosine normalisation and I/O.
//
// Assignment is exact: a vector goes to the leaf whose LVQ8 reconstruction
// is nearest by squared Euclidean distance, ties to the smaller CID, over
// all C leaves, whatever arithmetic found the candidates. Float32 kernels
// and the root hierarchy only narrow the candidates under rigorous error
// bounds; the final choice is made in float64 with an error bound and, for
// the rare near-ties, in exact arithmetic (math/big). docs/ivf.md gives the
// algorithms, bounds and every choice made where the specification leaves
// room.
package ivf
