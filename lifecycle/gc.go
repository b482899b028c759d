package lifecycle

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parqdb/parqdb/calibrate"
	"github.com/parqdb/parqdb/location"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/storage"
	"github.com/parqdb/parqdb/vecfile"
)

// DefaultGrace is how long gc leaves unreferenced files alone.
const DefaultGrace = 24 * time.Hour

// Warehouse prefixes gc manages. Anything else (the catalog's own objects,
// catalog.db) is never touched.
var gcPrefixes = []string{"indexes/", "metadata/"}

// GCOptions tune GC.
type GCOptions struct {
	// DryRun lists the orphans without deleting them.
	DryRun bool
	// Grace is the retention boundary (default DefaultGrace; 0 is allowed
	// only with GraceSet).
	Grace    time.Duration
	GraceSet bool
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// GCReport lists what gc found.
type GCReport struct {
	// Live is the number of files under indexes/ and metadata/ that some
	// live metadata file references.
	Live int
	// Retained is the part of Live that no index's current metadata file
	// references: files of expired snapshots and superseded metadata files
	// that a metadata file of the grace period (or the one current when it
	// began) still references, kept until the grace period has passed.
	Retained int
	// Orphans are the unreferenced files older than the grace period,
	// deleted unless DryRun.
	Orphans []storage.Info
	// Young are unreferenced files within the grace period, kept.
	Young []storage.Info
	// Bytes is the size of Orphans.
	Bytes int64
	// Leftovers are unfinished writes of killed writers (temporary files,
	// S3 multipart uploads) started before the grace period, removed
	// unless DryRun. No reader can reach them. Unfinished writes started
	// within the grace period may belong to a writer still running and
	// are kept (YoungLeftovers counts them).
	Leftovers      []storage.Leftover
	YoungLeftovers int
	// ActivePlans counts the sharded builds in progress whose files were
	// kept (a plan with an object written within the grace period).
	ActivePlans int
}

// GC deletes the files under indexes/ and metadata/ that no live metadata
// file references and that are older than the grace period, and the
// unfinished writes (storage.Leftover) anywhere in the warehouse that were
// started before the grace period.
//
// The live metadata files of an index are its current one, every one of
// its metadata files written within the grace period, and the newest one
// written before it (the one that was current when the period began): so
// every snapshot that was retained at any time within the grace period
// keeps all its files, and a reader that loaded any metadata file that was
// current within the period keeps working. Files younger than the grace
// period are never deleted, which protects builds that have written files
// but not committed yet. Indexes no longer in the catalog have no live
// metadata: their files go once they are older than the grace period.
// A sharded build in progress (a plan with an object written within the
// grace period) keeps its plan, shard files and centroid artifact whatever
// their age; an abandoned one goes (markActivePlans).
func GC(ctx context.Context, env Env, o GCOptions) (*GCReport, error) {
	if !o.GraceSet && o.Grace == 0 {
		o.Grace = DefaultGrace
	}
	if o.Grace < 0 {
		return nil, fmt.Errorf("%w: grace %v is negative", ErrOptions, o.Grace)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	cutoff := o.Now().Add(-o.Grace)
	var all []storage.Info
	for _, p := range gcPrefixes {
		infos, err := env.Warehouse.List(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("gc: list %s: %w", p, err)
		}
		all = append(all, infos...)
	}
	live, current, err := liveFiles(ctx, env, all, cutoff)
	if err != nil {
		return nil, err
	}
	plans, err := markActivePlans(ctx, env.Warehouse, all, cutoff, live)
	if err != nil {
		return nil, err
	}
	rep := &GCReport{ActivePlans: plans}
	lister, hasLeftovers := leftovers(env.Warehouse)
	if hasLeftovers {
		los, err := lister.ListLeftovers(ctx, "")
		if err != nil {
			return nil, fmt.Errorf("gc: %w", err)
		}
		for _, lo := range los {
			if lo.Started.Before(cutoff) {
				rep.Leftovers = append(rep.Leftovers, lo)
			} else {
				rep.YoungLeftovers++
			}
		}
	}
	for _, in := range all {
		// live also holds keys of optional files that may not exist
		// (calibration, vectors file): count only the files there are.
		if live[in.Key] {
			rep.Live++
			if !current[in.Key] {
				rep.Retained++
			}
			continue
		}
		if !in.ModTime.Before(cutoff) {
			rep.Young = append(rep.Young, in)
			continue
		}
		rep.Orphans = append(rep.Orphans, in)
		rep.Bytes += in.Size
	}
	if o.DryRun {
		return rep, nil
	}
	for _, in := range rep.Orphans {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		if err := env.Warehouse.Delete(ctx, in.Key); err != nil {
			return rep, fmt.Errorf("gc: delete %s: %w", in.Key, err)
		}
	}
	for _, lo := range rep.Leftovers {
		if err := lister.RemoveLeftover(ctx, lo); err != nil {
			return rep, fmt.Errorf("gc: %w", err)
		}
	}
	return rep, nil
}

// leftoverBucket is a warehouse whose killed writers can leave unfinished
// writes behind (storage.Local, storage.S3).
type leftoverBucket interface {
	ListLeftovers(ctx context.Context, prefix string) ([]storage.Leftover, error)
	RemoveLeftover(ctx context.Context, lo storage.Leftover) error
}

// leftovers finds the leftoverBucket behind b, seeing through wrappers
// (storage.WithStats, storage.WithFaults).
func leftovers(b storage.Bucket) (leftoverBucket, bool) {
	for {
		switch v := b.(type) {
		case leftoverBucket:
			return v, true
		case interface{ Unwrap() storage.Bucket }:
			b = v.Unwrap()
		default:
			return nil, false
		}
	}
}

// liveFiles returns the set of keys referenced by the live metadata files
// of every index in the catalog (see GC), the metadata files included, and
// the subset that the indexes' current metadata files reference.
func liveFiles(ctx context.Context, env Env, all []storage.Info, cutoff time.Time) (live, current map[string]bool, err error) {
	names, err := env.Catalog.List(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("gc: list indexes: %w", err)
	}
	byPrefix := map[string][]storage.Info{}
	for _, in := range all {
		if rest, ok := strings.CutPrefix(in.Key, "metadata/"); ok {
			if dir, _, ok := strings.Cut(rest, "/"); ok {
				byPrefix[dir] = append(byPrefix[dir], in)
			}
		}
	}
	live, current = map[string]bool{}, map[string]bool{}
	for _, name := range names {
		entry, err := env.Catalog.Load(ctx, name)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			// Not wrapped: a bad catalog row is a problem gc found, not a
			// bad setting of the user's (an invalid name is a usage error
			// when the user types it).
			return nil, nil, fmt.Errorf("%w: catalog entry %s cannot be loaded (%v); gc cannot tell which files it references, so nothing was deleted: repair or remove that entry in %s",
				ErrUnreadableEntry, strconv.Quote(name), err, env.Catalog)
		}
		cur, err := readMetadata(ctx, env.Warehouse, entry.MetadataLocation)
		if err != nil {
			return nil, nil, fmt.Errorf("gc: index %q: %w", name, err)
		}
		roots := []string{entry.MetadataLocation}
		files := byPrefix[cur.IndexUUID]
		slices.SortFunc(files, func(a, b storage.Info) int { return a.ModTime.Compare(b.ModTime) })
		// When was the current file written? If before the grace period
		// began, it was already current then, and no older file can be
		// live. Otherwise the file current at that moment is the newest
		// older one whose sequence does not exceed the current one (a
		// higher sequence was never committed).
		curTime, curOld := time.Time{}, false
		for _, f := range files {
			if f.Key == entry.MetadataLocation {
				curTime, curOld = f.ModTime, f.ModTime.Before(cutoff)
			}
		}
		newestOld := -1
		for i, f := range files {
			if !strings.HasSuffix(f.Key, ".metadata.json") || f.Key == entry.MetadataLocation {
				continue
			}
			switch {
			case !f.ModTime.Before(cutoff):
				roots = append(roots, f.Key)
			case !curOld && fileSequence(f.Key) <= cur.LastSequenceNumber && !f.ModTime.After(curTime):
				newestOld = i
			}
		}
		if newestOld >= 0 {
			roots = append(roots, files[newestOld].Key)
		}
		// The current metadata file first, into its own set (markSnapshot
		// skips what a set already holds), then the older live ones.
		mine := map[string]bool{entry.MetadataLocation: true}
		for i := range cur.Snapshots {
			if err := markSnapshot(ctx, env.Warehouse, &cur.Snapshots[i], mine); err != nil {
				return nil, nil, fmt.Errorf("gc: index %q snapshot %d: %w", name, cur.Snapshots[i].SnapshotID, err)
			}
		}
		for k := range mine {
			live[k], current[k] = true, true
		}
		for _, loc := range roots[1:] {
			if live[loc] {
				continue
			}
			m, err := readMetadata(ctx, env.Warehouse, loc)
			if err != nil {
				return nil, nil, fmt.Errorf("gc: index %q: %w", name, err)
			}
			live[loc] = true
			for i := range m.Snapshots {
				if err := markSnapshot(ctx, env.Warehouse, &m.Snapshots[i], live); err != nil {
					return nil, nil, fmt.Errorf("gc: index %q snapshot %d: %w", name, m.Snapshots[i].SnapshotID, err)
				}
			}
		}
	}
	return live, current, nil
}

// fileSequence returns the sequence number in a metadata file name
// ("…/<sequence, 20 digits>-<uuid>.metadata.json", catalog.WriteMetadata),
// or -1 when the name has none (such a file may be a root).
func fileSequence(key string) int64 {
	base := key[strings.LastIndexByte(key, '/')+1:]
	digits, _, ok := strings.Cut(base, "-")
	if !ok {
		return -1
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return -1
	}
	return n
}

func readMetadata(ctx context.Context, wh storage.Bucket, loc string) (*metadata.Metadata, error) {
	if err := location.Check(loc); err != nil {
		return nil, err
	}
	data, err := storage.ReadAll(ctx, wh, loc)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", loc, err)
	}
	return metadata.ParseFile(loc, data)
}

// markSnapshot adds every file snapshot s references to live. A referenced
// file that cannot be read is an error: gc must know the whole live set
// before it deletes anything.
//
// A snapshot whose index tables another provider lays out is an error too:
// gc cannot tell which files such tables use, so it deletes nothing rather
// than files that snapshot may need.
func markSnapshot(ctx context.Context, wh storage.Bucket, s *metadata.Snapshot, live map[string]bool) error {
	if err := postings.CheckIndexProvider(s.IndexProvider.Provider, s.IndexProvider.Properties); err != nil {
		return err
	}
	cmLoc := s.Parameters[metadata.ParamCentroidsLocation]
	if !live[cmLoc] {
		if err := location.Check(cmLoc); err != nil {
			return err
		}
		data, err := storage.ReadAll(ctx, wh, cmLoc)
		if err != nil {
			return fmt.Errorf("read %s: %w", cmLoc, err)
		}
		cm, err := metadata.ParseCentroidFile(cmLoc, data)
		if err != nil {
			return err
		}
		live[cmLoc] = true
		live[cm.Centroids+postings.CentroidsFile] = true
		live[cm.Roots+postings.RootsFile] = true
	}
	lay := postings.SnapshotLayout(s)
	post := lay.Table
	// The snapshot's optional calibration file (profile §4.1) lives as
	// long as the snapshot, whether or not it exists.
	live[calibrate.Location(lay.Meta, s.SnapshotID)] = true
	mkey := lay.Manifest()
	if live[mkey] {
		return nil
	}
	if err := location.Check(post); err != nil {
		return err
	}
	data, err := storage.ReadAll(ctx, wh, mkey)
	if err != nil {
		return fmt.Errorf("read %s: %w", mkey, err)
	}
	man, err := postings.ParseManifest(data)
	if err != nil {
		return fmt.Errorf("%s: %w", mkey, err)
	}
	live[mkey] = true
	live[lay.SourceFiles()] = true
	// The optional vectors file (profile §4.2) lives as long as the
	// manifest it is bound to, whether or not it exists.
	live[vecfile.Location(lay.Meta)] = true
	for _, f := range man.Files {
		live[f.Path] = true
	}
	if man.KeyRows != nil {
		live[man.KeyRows.Path] = true
	}
	return nil
}
