package reliability

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/parqdb/parqdb/calibrate"
	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/location"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/storage"
	"github.com/parqdb/parqdb/verify"
)

// Env is the warehouse and catalog an index lives in.
type Env struct {
	Warehouse storage.Bucket
	Catalog   catalog.Catalog
}

// Probe is a search whose answer is known: the exact nearest neighbour of
// Vector is the row with key Key (an int64 key field named KeyField), at
// distance 0, because Vector is that row's own vector.
type Probe struct {
	KeyField string
	Key      int64
	Vector   []float32
}

// State is what Check found: the catalog's metadata location and the
// parsed metadata it names.
type State struct {
	Location string
	Meta     *metadata.Metadata
}

// Has reports whether snapshot id is retained.
func (s *State) Has(id int64) bool {
	_, ok := s.Meta.Snapshot(id)
	return ok
}

// IDs returns the retained snapshot ids in ascending order.
func (s *State) IDs() []int64 {
	ids := make([]int64, 0, len(s.Meta.Snapshots))
	for _, sn := range s.Meta.Snapshots {
		ids = append(ids, sn.SnapshotID)
	}
	slices.Sort(ids)
	return ids
}

// Check checks the invariants a crash or a failed operation must never
// break for index name: the catalog names a metadata file that parses and
// validates and matches the catalog's source binding
// (catalog.LoadMetadata); every file that any retained snapshot references
// exists with the size its manifest records (ErrMissingFile); every check
// of verify.Run passes on the current snapshot (ErrVerify); and the
// index opens and a search with every list probed and exact refinement
// finds probe's row first at distance 0 (ErrSearch).
func Check(ctx context.Context, env Env, name string, probe Probe) (*State, error) {
	m, entry, err := catalog.LoadMetadata(ctx, env.Catalog, env.Warehouse, name)
	if err != nil {
		return nil, fmt.Errorf("index %s: load: %w", name, err)
	}
	if _, err := Referenced(ctx, env.Warehouse, m); err != nil {
		return nil, fmt.Errorf("index %s (%s): %w", name, entry.MetadataLocation, err)
	}
	if err := Verify(ctx, env, name); err != nil {
		return nil, err
	}
	if err := CheckSearch(ctx, env, name, probe); err != nil {
		return nil, err
	}
	return &State{Location: entry.MetadataLocation, Meta: m}, nil
}

// Verify runs every invariant check of `parqdb index verify` (verify.Run)
// on index name's current snapshot and reports the failed ones, wrapped in
// ErrVerify.
func Verify(ctx context.Context, env Env, name string) error {
	rep, err := verify.Run(ctx, verify.Env{Warehouse: env.Warehouse, Catalog: env.Catalog}, name, verify.Options{Workers: 1})
	if err != nil {
		return fmt.Errorf("index %s: %w: %w", name, ErrVerify, err)
	}
	if !rep.OK() {
		var failed []string
		for _, c := range rep.Failed() {
			failed = append(failed, c.Name+": "+c.Detail)
		}
		return fmt.Errorf("index %s (%s): %w: %s", name, rep.MetadataLocation, ErrVerify, strings.Join(failed, "; "))
	}
	return nil
}

// CheckSearch opens index name's current snapshot and searches probe.
func CheckSearch(ctx context.Context, env Env, name string, probe Probe) error {
	ix, err := query.Open(ctx, query.Env{Warehouse: env.Warehouse, Catalog: env.Catalog}, name, query.OpenOptions{})
	if err != nil {
		return fmt.Errorf("index %s: %w: open: %w", name, ErrSearch, err)
	}
	defer ix.Close()
	res, err := ix.Search(ctx, probe.Vector, query.Options{K: 3, NProbe: ix.NList(), Refine: 10, KeysOnly: true})
	if err != nil {
		return fmt.Errorf("index %s: %w: %w", name, ErrSearch, err)
	}
	if len(res.Hits) == 0 {
		return fmt.Errorf("index %s: %w: no hits", name, ErrSearch)
	}
	top := res.Hits[0]
	if got := fmt.Sprint(top.Row[probe.KeyField]); got != fmt.Sprint(probe.Key) || math.Abs(float64(top.Distance)) > 1e-4 {
		return fmt.Errorf("index %s: %w: nearest neighbour of row %d is %s=%s at distance %g, want itself at 0",
			name, ErrSearch, probe.Key, probe.KeyField, got, top.Distance)
	}
	return nil
}

// Referenced returns the warehouse keys that the retained snapshots of m
// reference: for each snapshot its centroid metadata file, centroid and
// root tables, postings manifest, source file list, every postings file
// the manifest names and its key-rows table. It checks that each exists (and, for postings files,
// has the manifest's size) and reports every missing one at once, wrapped
// in ErrMissingFile. The metadata file itself is not included.
func Referenced(ctx context.Context, wh storage.Bucket, m *metadata.Metadata) (map[string]bool, error) {
	refs := map[string]bool{}
	var missing []string
	need := func(key string, size int64) {
		if refs[key] {
			return
		}
		refs[key] = true
		in, err := wh.Stat(ctx, key)
		switch {
		case errors.Is(err, storage.ErrNotExist):
			missing = append(missing, key)
		case err != nil:
			missing = append(missing, fmt.Sprintf("%s (%v)", key, err))
		case size >= 0 && in.Size != size:
			missing = append(missing, fmt.Sprintf("%s (%d bytes, manifest says %d)", key, in.Size, size))
		}
	}
	for i := range m.Snapshots {
		s := &m.Snapshots[i]
		cmLoc := s.Parameters[metadata.ParamCentroidsLocation]
		if !refs[cmLoc] {
			need(cmLoc, -1)
			if data, err := readChecked(ctx, wh, cmLoc); err == nil {
				cm, err := metadata.ParseCentroidFile(cmLoc, data)
				if err != nil {
					return nil, err
				}
				for _, k := range [][2]string{{cm.Centroids, postings.CentroidsFile}, {cm.Roots, postings.RootsFile}} {
					key, err := location.Join(k[0], k[1])
					if err != nil {
						return nil, fmt.Errorf("%s: %w", cmLoc, err)
					}
					need(key, -1)
				}
			}
		}
		lay := postings.SnapshotLayout(s)
		// The optional calibration file (profile §4.1): accounted for,
		// never required.
		refs[calibrate.Location(lay.Meta, s.SnapshotID)] = true
		mkey := lay.Manifest()
		if refs[mkey] {
			continue
		}
		need(mkey, -1)
		need(lay.SourceFiles(), -1)
		data, err := readChecked(ctx, wh, mkey)
		if err != nil {
			continue // reported as missing
		}
		man, err := postings.ParseManifest(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", mkey, err)
		}
		for _, f := range man.Files {
			need(f.Path, f.Size)
		}
		if man.KeyRows != nil {
			need(man.KeyRows.Path, man.KeyRows.Size)
		}
	}
	if len(missing) > 0 {
		return refs, fmt.Errorf("%w: %s", ErrMissingFile, strings.Join(missing, ", "))
	}
	return refs, nil
}

func readChecked(ctx context.Context, wh storage.Bucket, key string) ([]byte, error) {
	if err := location.Check(key); err != nil {
		return nil, err
	}
	return storage.ReadAll(ctx, wh, key)
}

// ManagedPrefixes are the warehouse folders whose files belong to indexes
// and that gc manages.
var ManagedPrefixes = []string{"indexes/", "metadata/"}

// Orphans returns the files under ManagedPrefixes that neither the current
// metadata file of an index in the catalog nor any file its retained
// snapshots reference accounts for, in key order. After a gc whose grace
// period ended after every file was written, there must be none.
func Orphans(ctx context.Context, env Env) ([]string, error) {
	names, err := env.Catalog.List(ctx)
	if err != nil {
		return nil, err
	}
	live := map[string]bool{}
	for _, name := range names {
		m, entry, err := catalog.LoadMetadata(ctx, env.Catalog, env.Warehouse, name)
		if err != nil {
			return nil, err
		}
		live[entry.MetadataLocation] = true
		refs, err := Referenced(ctx, env.Warehouse, m)
		if err != nil {
			return nil, fmt.Errorf("index %s: %w", name, err)
		}
		for k := range refs {
			live[k] = true
		}
	}
	var orphans []string
	for _, p := range ManagedPrefixes {
		infos, err := env.Warehouse.List(ctx, p)
		if err != nil {
			return nil, err
		}
		for _, in := range infos {
			if !live[in.Key] {
				orphans = append(orphans, in.Key)
			}
		}
	}
	slices.Sort(orphans)
	return orphans, nil
}
