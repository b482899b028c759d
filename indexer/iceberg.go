package indexer

import (
	"context"
	"fmt"

	"github.com/parqdb/parqdb/artifact"
	"github.com/parqdb/parqdb/internal/source"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/postings"
)

// tableDefinition is the source-table definition of an opened source: the
// provider's own for a provider table (with the catalog identifier of an
// Iceberg table), else the parquet provider's location and identity.
func tableDefinition(t *source.Table, loc string) metadata.TableDefinition {
	if d := t.Definition(); d != nil {
		def := metadata.TableDefinition{Provider: d.Provider, Properties: d.Properties}
		if p, _ := source.Lookup(d.Provider); p != nil {
			def.Identifier = p.Identifier(d.Properties)
		}
		return def
	}
	return metadata.TableDefinition{
		Provider: postings.Provider,
		Properties: map[string]string{
			"definition-version": "1",
			"location":           loc,
			"table-identity":     t.Identity(),
		},
	}
}

// ActionReassign is the refresh of an Iceberg source whose snapshots since
// the built one removed or rewrote data files, or deleted rows of them with
// row-level deletes (position, equality, deletion vectors: such a file has
// a new version in source-files.json), but changed few rows (under
// the drift threshold, counted from the snapshot summaries by
// the provider's Drift; compactions count nothing): every live row is read and
// assigned to the kept centroids and the postings are written anew, with
// no retraining. Deleted rows are gone from the new postings.
const ActionReassign = "reassign"

// icebergReassign reports whether a refresh of Iceberg source t, which
// lost or rewrote files since snapshot snap (or has the same files under a
// new snapshot id, after a manifest rewrite), may keep the centroids: the
// built snapshot is an ancestor of the current one, the rows the snapshots
// in between changed stay within maxGrowth of the indexed rows, and the
// table still has at least nlist rows. reason says why.
func icebergReassign(ctx context.Context, t *source.Table, snap *metadata.Snapshot, nlist int64, maxGrowth float64) (ok bool, reason string, err error) {
	d := t.Definition()
	if d == nil || d.Provider != snap.SourceTable.Provider {
		return false, "", nil
	}
	p, err := source.Lookup(d.Provider)
	if p == nil {
		return false, "", err
	}
	changed, ancestor, err := p.Drift(ctx, d.Properties, p.Version(snap.SourceTable.Properties))
	if err != nil || !ancestor {
		return false, "", err
	}
	if float64(changed) > maxGrowth*float64(snap.IndexedRows) || t.NumRows() < nlist {
		return false, "", nil
	}
	return true, fmt.Sprintf("Iceberg snapshots %s..%s removed, rewrote or deleted rows of files but changed at most %d rows (within %.0f%% of the %d indexed): rows reassigned to the kept centroids",
		snap.SourceTable.Properties["snapshot-id"], d.Properties["snapshot-id"], changed, 100*maxGrowth, snap.IndexedRows), nil
}

// keepCentroids is the train stage of a reassign refresh: the base
// snapshot's centroid artifact, whose dimension must be the source's.
func (b *builder) keepCentroids(ctx context.Context) error {
	a, err := artifact.LoadForSnapshot(ctx, b.env.Warehouse, b.baseSnap)
	if err != nil {
		return err
	}
	if a.Centroids.Dim != b.dim {
		return fmt.Errorf("source %s: vectors have dimension %d, the index's centroids %d: run `parqdb index refresh --retrain`", b.srcLoc, b.dim, a.Centroids.Dim)
	}
	b.art, b.reused, b.sample = a, true, nil
	b.nlist = a.Centroids.NList
	return nil
}
