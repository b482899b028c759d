// Package membudget is the process-wide memory budget that the caches of
// every open index share: the decoded postings lists, the exact-vector
// store, the decoded source pages, the joined source rows, the filter
// bitmaps (and what else registers). One Budget
// bounds their sum; each cache charges its entries to an Account before
// keeping them and, when the budget is full, the Budget asks the accounts
// (the largest holder first, the asking one included) to evict what they
// hold least recently used, so a busy cache takes memory from idle ones
// instead of being refused while they sit on it.
//
// Accounts also count lookups (hits and misses) and evictions, which the
// server exports in /metrics and the CLI prints with --stats.
package membudget
