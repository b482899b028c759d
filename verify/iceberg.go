package verify

import (
	"context"
	"fmt"

	"github.com/parqdb/parqdb/internal/icesource"
	"github.com/parqdb/parqdb/internal/source"
	"github.com/parqdb/parqdb/postings"
)

// openIcebergSource opens an iceberg source-table at the snapshot it
// records (time travel) and checks it: the properties, the catalog
// binding, the table UUID, the identity recomputed from the snapshot's
// data files, and whether the table's current snapshot moved on since (the
// index is then stale, exactly as a changed folder: a problem that
// `parqdb index refresh` fixes). It returns nil, with the check failed or
// skipped, when the snapshot cannot be read.
func (r *runner) openIcebergSource(ctx context.Context, p *problems, props map[string]string) *source.Table {
	s := r.snap
	if err := icesource.CheckProperties(props); err != nil {
		r.failf(CheckSource, "source-table properties: %v", err)
		return nil
	}
	loc := props["location"]
	if r.boundSource == "" || loc != r.boundSource {
		r.skip(CheckSource, fmt.Sprintf("source-table location %q is not the source the catalog binds; not read", loc))
		return nil
	}
	t, err := icesource.OpenBound(ctx, props, nil)
	if err != nil {
		r.failf(CheckSource, "open source %s at snapshot %s: %v", loc, props["snapshot-id"], err)
		return nil
	}
	if got := t.Identity(); got != props["table-identity"] {
		p.add("source %s snapshot %s: recomputed table-identity %s, the index snapshot %d has %s",
			loc, props["snapshot-id"], got, s.SnapshotID, props["table-identity"])
	}
	cur, err := icesource.CurrentSnapshotID(ctx, loc)
	switch {
	case err != nil:
		p.add("source %s: read the current snapshot: %v", loc, err)
	case cur != icesource.SnapshotID(props):
		p.add("source %s changed since snapshot %d: the table's current snapshot is %d, the index was built from %s (`parqdb index refresh` brings the index up to date)",
			loc, s.SnapshotID, cur, props["snapshot-id"])
	}
	return t
}

// icebergIdentity recomputes an iceberg table-identity from the file list
// of source-files.json and the snapshot's table-uuid and snapshot-id.
func icebergIdentity(props map[string]string, sf *postings.SourceFiles) string {
	keys := make([]string, len(sf.Files))
	sizes := make([]int64, len(sf.Files))
	rows := make([]int64, len(sf.Files))
	for i, f := range sf.Files {
		keys[i], sizes[i], rows[i] = f.Key, f.Size, f.Rows
	}
	return icesource.IdentityOf(props["table-uuid"], icesource.SnapshotID(props), keys, sizes, rows)
}
