// Package membudget is the process-wide memory budget that the caches of
// every open index share, and the one cache type they are built from.
//
// One Budget bounds the bytes of all its accounts together. Each cache
// charges its entries to an Account before keeping them and, when the
// budget is full, the Budget asks the accounts (the largest holder first,
// the asking one included) to evict, so a busy cache takes memory from
// idle ones instead of being refused while they sit on it.
//
// Cache is that cache: the decoded postings lists, the exact-vector store,
// the vectors-file blocks, the decoded source pages, the joined source rows
// and scalar columns, the filter bitmaps and the server's encoded rows are
// all Cache instances. It owns the locking rule (the budget is never
// charged with the cache's lock held, since a charge may make the budget
// ask this cache to evict) and evicts with CLOCK, a second-chance
// approximation of least recently used whose hits cost no lock.
//
// Accounts also count lookups (hits and misses) and evictions, which the
// server exports in /metrics and the CLI prints with --stats.
package membudget
