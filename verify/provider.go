package verify

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/parqdb/parqdb/internal/source"
	"github.com/parqdb/parqdb/postings"
)

// openProviderSource opens the source-table of a linked provider (an
// Iceberg table) at the state it records (time travel) and checks it: the
// properties, the catalog binding, the table UUID, the identity recomputed
// from the snapshot's data files, and whether the table's current snapshot
// moved on since (the index is then stale, exactly as a changed folder: a
// problem that `parqdb index refresh` fixes). It returns nil, with the
// check failed or skipped, when the snapshot cannot be read.
func (r *runner) openProviderSource(ctx context.Context, p *problems, prov source.Provider, props map[string]string) *source.Table {
	s := r.snap
	if err := prov.CheckProperties(props); err != nil {
		r.failf(CheckSource, "source-table properties: %v", err)
		return nil
	}
	loc := props["location"]
	if r.boundSource == "" || loc != r.boundSource {
		r.skip(CheckSource, fmt.Sprintf("source-table location %q is not the source the catalog binds; not read", loc))
		return nil
	}
	t, err := prov.OpenBound(ctx, props, nil)
	if err != nil {
		r.failf(CheckSource, "open source %s at snapshot %s: %v", loc, props["snapshot-id"], err)
		return nil
	}
	if got := t.Identity(); got != props["table-identity"] {
		p.add("source %s snapshot %s: recomputed table-identity %s, the index snapshot %d has %s",
			loc, props["snapshot-id"], got, s.SnapshotID, props["table-identity"])
	}
	cur, err := prov.CurrentVersion(ctx, props)
	switch {
	case err != nil:
		p.add("source %s: read the current snapshot: %v", loc, err)
	case cur != prov.Version(props):
		p.add("source %s changed since snapshot %d: the table's current snapshot is %d, the index was built from %s (`parqdb index refresh` brings the index up to date)",
			loc, s.SnapshotID, cur, props["snapshot-id"])
	}
	return t
}

// providerIdentity recomputes a linked provider's table-identity from the
// file list of source-files.json and the snapshot's source-table
// properties (an Iceberg table's table-uuid and snapshot-id).
func providerIdentity(prov source.Provider, props map[string]string, sf *postings.SourceFiles) string {
	keys := make([]string, len(sf.Files))
	sizes := make([]int64, len(sf.Files))
	rows := make([]int64, len(sf.Files))
	for i, f := range sf.Files {
		keys[i], sizes[i], rows[i] = f.Key, f.Size, f.Rows
	}
	return prov.IdentityOf(props, keys, sizes, rows)
}

// supportedProviders lists the source-table providers this binary reads,
// quoted, with the verb: `"parquet" and "iceberg" are`.
func supportedProviders() string {
	names := []string{strconv.Quote(postings.Provider)}
	for _, n := range source.Providers() {
		names = append(names, strconv.Quote(n))
	}
	if len(names) == 1 {
		return names[0] + " is"
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1] + " are"
}
