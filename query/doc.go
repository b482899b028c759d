// Package query is the search pipeline: catalog → metadata → route → read
// row groups → score → top-k → refine → join source rows → _distance.
//
// Open validates an index snapshot and its source binding once and caches
// what every query needs (centroids, manifest, open files); Index.Search
// then runs the stages, each one function in search.go.
//
// Distances: for l2_squared, _distance is the squared Euclidean distance
// between the query and the candidate vector. For cosine, the query is
// normalised and _distance is ½‖q̂ − x‖², where x is the candidate as the
// index holds it (the normalised source vector, or its LVQ reconstruction);
// for exact vectors (encoding source, or with refine) this equals
// 1 − cos(q, x).
package query
