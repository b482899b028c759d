package reliability

import "errors"

// Sentinel errors of the invariant checks, tested with errors.Is. Each is
// wrapped with the index name and the file, snapshot or key concerned.
var (
	// ErrMissingFile means a file that a retained snapshot references is
	// not in the warehouse.
	ErrMissingFile = errors.New("referenced file missing")
	// ErrLostSnapshot means a snapshot whose commit was reported as done is
	// no longer retained, and no expire removed it.
	ErrLostSnapshot = errors.New("committed snapshot lost")
	// ErrBadTransition means the index changed in a way the operation that
	// ran cannot explain.
	ErrBadTransition = errors.New("unexplained index change")
	// ErrSearch means a search of the index failed or returned a wrong
	// nearest neighbour.
	ErrSearch = errors.New("search check failed")
	// ErrVerify means `parqdb index verify` (verify.Run) found a broken
	// invariant.
	ErrVerify = errors.New("verify failed")
	// ErrOrphan means an unreferenced file survived garbage collection.
	ErrOrphan = errors.New("orphan survived gc")
)
