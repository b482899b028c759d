// Package indexer is the index build pipeline: source → sample → train →
// assign + encode → write tables → metadata → catalog commit. Each stage is
// one method of the unexported builder, run in that order by Create.
// Nothing is committed unless every stage succeeds.
package indexer
