package reliability

import (
	"fmt"
	"slices"
	"sync"
)

// Ledger is a writer-independent record of the snapshots whose commit an
// operation reported as done, and of the snapshots an expire was allowed
// to remove. A crash harness fills it from what its children print after
// each commit returns, and checks every later state against it. It is
// safe for concurrent use.
type Ledger struct {
	mu        sync.Mutex
	committed map[int64]bool
	removable map[int64]bool
}

// Committed records that snapshot id was committed.
func (l *Ledger) Committed(id int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.committed == nil {
		l.committed = map[int64]bool{}
	}
	l.committed[id] = true
}

// MayRemove records that an expire that ran (to completion or not) was
// allowed to remove ids.
func (l *Ledger) MayRemove(ids ...int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.removable == nil {
		l.removable = map[int64]bool{}
	}
	for _, id := range ids {
		l.removable[id] = true
	}
}

// Len returns the number of committed snapshots recorded.
func (l *Ledger) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.committed)
}

// Check reports every committed snapshot that s no longer retains and no
// expire was allowed to remove, wrapped in ErrLostSnapshot.
func (l *Ledger) Check(s *State) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var lost []int64
	for id := range l.committed {
		if !l.removable[id] && !s.Has(id) {
			lost = append(lost, id)
		}
	}
	if len(lost) > 0 {
		slices.Sort(lost)
		return fmt.Errorf("%w: snapshots %v are not in %s", ErrLostSnapshot, lost, s.Location)
	}
	return nil
}

// Change is what one operation may do to an index's metadata.
type Change int

// Changes an operation may make.
const (
	// ChangeNone: the metadata location stays (gc, an operation on
	// another index, a refresh with nothing to do).
	ChangeNone Change = iota
	// ChangeAppend: a successor with one new snapshot, current, at the
	// next sequence number (refresh, optimize).
	ChangeAppend
	// ChangeRemove: a successor without some non-current snapshots,
	// everything else equal (expire).
	ChangeRemove
)

// Transition checks that after can be the result of one operation that
// may make change c starting from before, whether the operation finished,
// failed or was killed: either nothing changed (same metadata location) or
// exactly that change was committed. For ChangeRemove, removable lists
// the snapshots the expire was allowed to remove. Errors wrap
// ErrBadTransition.
func Transition(before, after *State, c Change, removable []int64) error {
	if after.Location == before.Location {
		return nil
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s → %s: %s", ErrBadTransition, before.Location, after.Location, fmt.Sprintf(format, args...))
	}
	b, a := before.Meta, after.Meta
	if a.IndexUUID != b.IndexUUID {
		return bad("index uuid changed from %s to %s", b.IndexUUID, a.IndexUUID)
	}
	switch c {
	case ChangeAppend:
		var added []int64
		for _, id := range after.IDs() {
			if !before.Has(id) {
				added = append(added, id)
			}
		}
		for _, id := range before.IDs() {
			if !after.Has(id) {
				return bad("snapshot %d disappeared", id)
			}
		}
		if len(added) != 1 || added[0] != a.CurrentSnapshotID {
			return bad("added snapshots %v, want one that is current (current %d)", added, a.CurrentSnapshotID)
		}
		s, _ := a.Snapshot(added[0])
		if s.SequenceNumber != b.LastSequenceNumber+1 || a.LastSequenceNumber != s.SequenceNumber {
			return bad("new snapshot %d has sequence %d, last-sequence-number %d; before: last-sequence-number %d",
				s.SnapshotID, s.SequenceNumber, a.LastSequenceNumber, b.LastSequenceNumber)
		}
	case ChangeRemove:
		if a.CurrentSnapshotID != b.CurrentSnapshotID || a.LastSequenceNumber != b.LastSequenceNumber {
			return bad("expire changed current snapshot %d → %d or last-sequence-number %d → %d",
				b.CurrentSnapshotID, a.CurrentSnapshotID, b.LastSequenceNumber, a.LastSequenceNumber)
		}
		var removed []int64
		for _, id := range before.IDs() {
			if !after.Has(id) {
				removed = append(removed, id)
				if !slices.Contains(removable, id) {
					return bad("snapshot %d removed; the expire was allowed to remove only %v", id, removable)
				}
			}
		}
		for _, id := range after.IDs() {
			if !before.Has(id) {
				return bad("expire added snapshot %d", id)
			}
		}
		if len(removed) == 0 {
			return bad("a new metadata file that removes nothing")
		}
	default:
		return bad("the operation may not change the index")
	}
	return nil
}
