package icesource

import (
	"context"
	"fmt"
	"strconv"

	"github.com/apache/iceberg-go/table"

	"github.com/parqdb/parqdb/internal/source"
	"github.com/parqdb/parqdb/storage"
)

// Open resolves the Iceberg table named by ref (an iceberg:// reference)
// at snapshot snapshotID (0: the current snapshot) and opens its data files
// with ParqDB's Parquet reader. The Table's Definition is the iceberg
// source-table definition (Properties) and its Identity the snapshot's.
// It returns the canonical reference.
func Open(ctx context.Context, ref string, snapshotID int64) (*source.Table, string, error) {
	return open(ctx, ref, snapshotID, "", nil)
}

func open(ctx context.Context, ref string, snapshotID int64, wantUUID string, wrap func(storage.Bucket) storage.Bucket) (*source.Table, string, error) {
	r, err := ParseRef(ref)
	if err != nil {
		return nil, "", err
	}
	s, err := resolve(ctx, r, snapshotID, wantUUID, wrap)
	if err != nil {
		return nil, "", err
	}
	desc := strconv.Quote(r.String() + "@" + strconv.FormatInt(s.SnapshotID, 10))
	t, err := source.OpenFiles(ctx, s.Bucket, desc, s.Files, s.Rows, source.Definition{Provider: Provider, Properties: s.Properties()})
	if err != nil {
		return nil, "", fmt.Errorf("source %s: %w", r, err)
	}
	t.BindFieldIDs(s.FieldIDs, s.CurrentNames())
	if err := t.ApplyDeletes(s.Deleted); err != nil {
		_ = t.Close()
		return nil, "", fmt.Errorf("source %s: %w", r, err)
	}
	return t, r.String(), nil
}

// OpenBound opens the snapshot a source-table definition records (Iceberg
// time travel: an index keeps answering from the snapshot it was built
// from until a refresh, even after the table moved on). props must pass
// CheckProperties. It fails with ErrMoved when the catalog's table under
// that name has another UUID (dropped and recreated), and with ErrNotFound
// when the snapshot expired. wrap, when not nil, wraps the bucket the data
// and delete files are read from (to count the reads, say).
func OpenBound(ctx context.Context, props map[string]string, wrap func(storage.Bucket) storage.Bucket) (*source.Table, error) {
	if err := CheckProperties(props); err != nil {
		return nil, err
	}
	t, _, err := open(ctx, props["location"], SnapshotID(props), props["table-uuid"], wrap)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// CurrentSnapshotID returns the id of the current snapshot of the table
// ref names, reading only its metadata (no manifests).
func CurrentSnapshotID(ctx context.Context, ref string) (int64, error) {
	r, err := ParseRef(ref)
	if err != nil {
		return 0, err
	}
	tbl, closeCat, err := loadTable(ctx, r)
	if err != nil {
		return 0, err
	}
	defer closeCat()
	s := tbl.CurrentSnapshot()
	if s == nil {
		return 0, fmt.Errorf("source %s: %w: the table has no snapshot", r, ErrNotFound)
	}
	return s.SnapshotID, nil
}

// Drift bounds the rows that the snapshots after snapshot from (excluded)
// up to the current one (included) changed, from their summaries: an
// append or overwrite counts added-records plus deleted-records, a delete
// the rows it removed (deleted-records minus added-records: a copy-on-write
// delete rewrites the rows it keeps), a replace (a compaction or another
// rewrite that keeps every row) nothing; every snapshot also counts the
// row-level delete records it added (added-position-deletes,
// added-equality-deletes). ancestor
// is false when from is not an ancestor of the current snapshot (a
// rollback, or an expired history) or a summary lacks the counts; the
// caller then cannot bound the change.
func Drift(ctx context.Context, ref string, from int64) (changed int64, ancestor bool, err error) {
	r, err := ParseRef(ref)
	if err != nil {
		return 0, false, err
	}
	tbl, closeCat, err := loadTable(ctx, r)
	if err != nil {
		return 0, false, err
	}
	defer closeCat()
	for s := tbl.CurrentSnapshot(); s != nil; {
		if s.SnapshotID == from {
			return changed, true, nil
		}
		if s.Summary == nil {
			return 0, false, nil
		}
		count := func(k string) (int64, bool) {
			v, ok := s.Summary.Properties[k]
			if !ok {
				return 0, true
			}
			n, err := strconv.ParseInt(v, 10, 64)
			return n, err == nil && n >= 0
		}
		added, ok1 := count("added-records")
		deleted, ok2 := count("deleted-records")
		posDel, ok3 := count("added-position-deletes")
		eqDel, ok4 := count("added-equality-deletes")
		if !ok1 || !ok2 || !ok3 || !ok4 {
			return 0, false, nil
		}
		// Row-level deletes (merge-on-read): a position delete removes one
		// row; an equality delete record is counted once (it removes every
		// older row with its values, usually one).
		changed += posDel + eqDel
		switch s.Summary.Operation {
		case table.OpReplace:
			// Rewrites that keep every row.
		case table.OpDelete:
			// Only removes rows; a copy-on-write delete re-adds the kept
			// rows of the files it rewrites, which are not new rows.
			changed += max(deleted-added, 0)
		default:
			changed += added + deleted
		}
		if s.ParentSnapshotID == nil {
			break
		}
		s = tbl.SnapshotByID(*s.ParentSnapshotID)
	}
	return 0, false, nil
}
