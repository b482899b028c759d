// Package storage holds the warehouse: a small object-store interface
// (Bucket) with a local-folder implementation (Local) and an S3-compatible
// one (S3), opened from a path or URL by Open.
//
// Keys are warehouse-relative locations (package location). Every Bucket
// method refuses a key that fails the key rules (see CheckKey) before doing
// any I/O, with an error wrapping location.ErrInvalid, so that no metadata
// file can make ParqDB read or write outside its warehouse.
//
// Objects are written once and never seen half-written: a Writer's bytes
// become visible all at once when Close returns nil, and PutIfAbsent is
// atomic across processes and hosts (exactly one of several racing writers
// wins). Errors name the operation, the key and the bucket, wrap
// ErrNotExist, ErrExist or location.ErrInvalid where they apply, and never
// contain credentials.
//
// Wrappers add observability (WithStats) and fault injection for
// reliability tests (WithFaults). The acceptance suite every
// implementation passes is in storage/storagetest.
package storage
