package query

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/parqdb/parqdb/internal/source"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/storage"
)

// Staleness describes a source that gained data since the snapshot was
// built while everything the snapshot indexed is still there, unchanged:
// a folder source with added files (the snapshot's recorded files keep
// their sizes and versions), or an Iceberg table with newer snapshots.
// Searches keep reading the exact state the snapshot indexed; they just do
// not see the new rows until `parqdb index refresh`.
type Staleness struct {
	Index      string
	SnapshotID int64
	Location   string
	// Added are the keys of the files added to a folder source, in key
	// order (empty for an Iceberg source).
	Added []string
	// SourceSnapshot is the Iceberg table's current snapshot id when it
	// is not the indexed one (0 otherwise).
	SourceSnapshot int64

	infos []storage.Info // the added files as listed (keyNotIndexed)
}

// String is the warning front ends print once.
func (s *Staleness) String() string {
	if s.SourceSnapshot != 0 {
		return fmt.Sprintf("index %q is stale: Iceberg table %s is at snapshot %d, index snapshot %d reads the table snapshot it was built from; run `parqdb index refresh %s` to index the new rows",
			s.Index, s.Location, s.SourceSnapshot, s.SnapshotID, s.Index)
	}
	first := fmt.Sprintf("%q", s.Added[0])
	if len(s.Added) > 1 {
		first += fmt.Sprintf(" and %d more", len(s.Added)-1)
	}
	return fmt.Sprintf("index %q is stale: source %s has %d file(s) added since snapshot %d was built (%s), which searches do not read; run `parqdb index refresh %s` to index them",
		s.Index, s.Location, len(s.Added), s.SnapshotID, first, s.Index)
}

// Stale returns how the source gained data since the snapshot was built,
// as last checked (at Open, or by RecheckSource), or nil when it did not.
func (ix *Index) Stale() *Staleness { return ix.stale.Load() }

// RecheckSource lists the source again (one listing; no file is read) and
// updates what Stale returns. A recorded file that was removed or
// rewritten since is reported as a *StaleError (and Stale is left as it
// was): searches that read it fail with the same error.
func (ix *Index) RecheckSource(ctx context.Context) (*Staleness, error) {
	var s *Staleness
	var err error
	if p, _ := source.Lookup(ix.snap.SourceTable.Provider); p != nil {
		s, err = SourceStaleness(ctx, ix.wh, ix.snap, ix.name)
	} else {
		// The recorded list is the one Open read: a snapshot's list never
		// changes, so a recheck costs the source listing alone.
		s, err = folderStaleness(ctx, ix.name, ix.snap, ix.recorded)
	}
	if err != nil {
		return ix.Stale(), err
	}
	ix.stale.Store(s)
	return s, nil
}

// SourceStaleness compares the source of snapshot snap of index name with
// what the snapshot recorded, without opening the index: for a folder or
// file source one listing against the snapshot's source file list, for an
// Iceberg source one load of the table's current snapshot. It returns nil
// when the source is as indexed, a Staleness when it only gained data, and
// a *StaleError when a recorded file was removed or rewritten. A snapshot
// without a source file list (written before it was recorded) is compared
// by table-identity and reported as a *StaleError on any change.
func SourceStaleness(ctx context.Context, wh storage.Bucket, snap *metadata.Snapshot, name string) (*Staleness, error) {
	st := snap.SourceTable
	loc := st.Properties["location"]
	p, err := source.Lookup(st.Provider)
	if err != nil {
		return nil, fmt.Errorf("index %q: %w", name, err)
	}
	if p != nil {
		cur, err := p.CurrentVersion(ctx, st.Properties)
		if err != nil {
			return nil, fmt.Errorf("index %q: source %s: %w", name, loc, err)
		}
		if cur == p.Version(st.Properties) {
			return nil, nil
		}
		return &Staleness{Index: name, SnapshotID: snap.SnapshotID, Location: loc, SourceSnapshot: cur}, nil
	}
	rec, err := recordedFiles(ctx, wh, snap)
	if err != nil {
		return nil, fmt.Errorf("index %q: %w", name, err)
	}
	return folderStaleness(ctx, name, snap, rec)
}

// folderStaleness is SourceStaleness for a folder or file source whose
// snapshot recorded the files rec (nil: no list; compared by
// table-identity).
func folderStaleness(ctx context.Context, name string, snap *metadata.Snapshot, rec []source.Recorded) (*Staleness, error) {
	st := snap.SourceTable
	loc := st.Properties["location"]
	b, prefix, err := sourceBucket(ctx, loc)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		t, err := source.Open(ctx, b, prefix)
		if err != nil {
			return nil, fmt.Errorf("index %q: source %s: %w", name, loc, err)
		}
		defer t.Close()
		if t.Identity() == st.Properties["table-identity"] {
			return nil, nil
		}
		return nil, legacyStale(name, snap, t)
	}
	d, err := source.DiffRecorded(ctx, b, prefix, rec)
	if err != nil {
		return nil, fmt.Errorf("index %q: source %s: %w", name, loc, err)
	}
	return driftStaleness(name, snap, d)
}

// driftStaleness turns a Drift into the Staleness or StaleError it means.
func driftStaleness(name string, snap *metadata.Snapshot, d *source.Drift) (*Staleness, error) {
	loc := snap.SourceTable.Properties["location"]
	if d.Moved() {
		e := &StaleError{Index: name, SnapshotID: snap.SnapshotID, Location: loc}
		for _, k := range d.Removed {
			e.Files = append(e.Files, fmt.Sprintf("%q was removed", k))
		}
		e.Files = append(e.Files, d.Changed...)
		return nil, e
	}
	if len(d.Added) == 0 {
		return nil, nil
	}
	s := &Staleness{Index: name, SnapshotID: snap.SnapshotID, Location: loc, infos: d.Added}
	for _, in := range d.Added {
		s.Added = append(s.Added, in.Key)
	}
	return s, nil
}

func legacyStale(name string, snap *metadata.Snapshot, t *source.Table) *StaleError {
	return &StaleError{
		Index: name, SnapshotID: snap.SnapshotID, Location: snap.SourceTable.Properties["location"],
		Snapshot: snapshotState(snap),
		Now:      filesRows(len(t.Files()), t.NumRows()),
	}
}

// recordedFiles reads the source file list the snapshot recorded
// (postings.Layout.SourceFiles); nil, nil when the snapshot has none.
func recordedFiles(ctx context.Context, wh storage.Bucket, snap *metadata.Snapshot) ([]source.Recorded, error) {
	key := postings.SnapshotLayout(snap).SourceFiles()
	data, err := storage.ReadAll(ctx, wh, key)
	if errors.Is(err, storage.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", key, err)
	}
	sf, err := postings.ParseSourceFiles(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	rec := make([]source.Recorded, len(sf.Files))
	for i, f := range sf.Files {
		rec[i] = source.Recorded{Key: f.Key, Size: f.Size, Version: f.Version}
	}
	return rec, nil
}

// sourceBucket opens the bucket of a canonical parquet source location (as
// source.OpenLocation records it: an s3:// URL, or an absolute local path
// with a trailing '/' for a folder) and returns it with the prefix inside.
func sourceBucket(ctx context.Context, loc string) (storage.Bucket, string, error) {
	var bucket, prefix string
	switch {
	case strings.HasPrefix(loc, "s3://"):
		rest := strings.TrimPrefix(loc, "s3://")
		host, path, _ := strings.Cut(rest, "/")
		bucket, prefix = "s3://"+host, path
	case strings.HasSuffix(loc, "/"):
		bucket = strings.TrimSuffix(loc, "/")
	default:
		bucket, prefix = filepath.Dir(loc), filepath.Base(loc)
	}
	if bucket == "" {
		bucket = "/"
	}
	b, err := storage.Open(ctx, bucket)
	if err != nil {
		return nil, "", fmt.Errorf("source %s: %w", loc, err)
	}
	return b, prefix, nil
}

// staleOr returns err, or a *StaleError wrapping it when err is a source
// file that failed to decode or broke the contract because it was removed
// or rewritten after Open (one stat of that file tells): a file rewritten
// in place is the source moving, not a damaged source.
func (ix *Index) staleOr(ctx context.Context, err error) error {
	if err == nil || errors.Is(err, ErrStale) || ix.table == nil ||
		!(errors.Is(err, ErrSourceUnreadable) || errors.Is(err, ErrSourceInvalid)) {
		return err
	}
	var se *source.Error
	if !errors.As(err, &se) || se.File == "" {
		return err
	}
	why, serr := ix.table.FileChanged(context.WithoutCancel(ctx), se.File)
	if serr != nil || why == "" {
		return err
	}
	return &StaleError{Index: ix.name, SnapshotID: ix.snap.SnapshotID, Location: ix.snap.SourceTable.Properties["location"],
		Files: []string{why}, Err: err}
}

// keyNotIndexed returns an ErrKeyNotIndexed error naming the added file
// that holds key vals when the source gained files since the build and
// one of them has it, else nil. It reads the added files' footers and key
// columns: the cost of a miss, never of a hit.
func (ix *Index) keyNotIndexed(ctx context.Context, vals []parquet.Value) error {
	s := ix.Stale()
	if s == nil || len(s.infos) == 0 {
		return nil
	}
	a, err := ix.table.OpenAdded(ctx, s.infos)
	if err != nil {
		return nil
	}
	defer a.Close()
	l, err := a.Check(ctx, source.Binding{
		VectorField: ix.snap.VectorField, Dim: int(ix.params.Dimension),
		KeyFields: ix.snap.SourceKeyFields, Metric: ix.snap.Metric,
	})
	if err != nil {
		return nil
	}
	for i, k := range l.Keys {
		if k.TypeName() != ix.layout.Keys[i].TypeName() {
			return nil
		}
	}
	ki, err := source.BuildKeyIndex(ctx, a, l)
	if err != nil {
		return nil
	}
	loc, ok, err := ki.LookupValues(vals)
	if err != nil || !ok {
		return nil
	}
	return fmt.Errorf("index %q: %w: key %v is in file %q, added to source %s after snapshot %d was built; run `parqdb index refresh %s` to index it",
		ix.name, ErrKeyNotIndexed, vals, a.Files()[loc.File].Key, s.Location, ix.snap.SnapshotID, ix.name)
}

// Column is a source column as describe shows it.
type Column struct {
	Name string `json:"name"`
	Type string `json:"type"` // source.FieldType
}

// SourceColumns returns the top-level columns of the source of snapshot
// snap and their types, reading one footer: the first recorded file's for
// a folder or file source (the whole source when the snapshot records no
// file list), the bound snapshot's for an Iceberg table.
func SourceColumns(ctx context.Context, wh storage.Bucket, snap *metadata.Snapshot) ([]Column, error) {
	st := snap.SourceTable
	loc := st.Properties["location"]
	var t *source.Table
	p, err := source.Lookup(st.Provider)
	switch {
	case err != nil:
	case p != nil:
		t, err = p.OpenBound(ctx, st.Properties, nil)
	default:
		var b storage.Bucket
		var prefix string
		if b, prefix, err = sourceBucket(ctx, loc); err != nil {
			return nil, err
		}
		var rec []source.Recorded
		if rec, err = recordedFiles(ctx, wh, snap); err != nil {
			return nil, err
		}
		if len(rec) > 0 {
			prefix = rec[0].Key
		}
		t, err = source.Open(ctx, b, prefix)
	}
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", loc, err)
	}
	defer t.Close()
	fields := t.Schema().Fields()
	cols := make([]Column, len(fields))
	for i, f := range fields {
		cols[i] = Column{Name: f.Name(), Type: source.FieldType(f)}
	}
	return cols, nil
}
