// Package lifecycle keeps and drops index history on purpose: expire
// snapshots, drop indexes, and collect the warehouse files that no
// retained snapshot references (gc), never before a grace period, so that
// a reader that loaded an older metadata file keeps working within the
// retention boundary (docs/lifecycle.md).
package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/storage"
)

// Env is the warehouse and catalog an operation works on.
type Env struct {
	Warehouse storage.Bucket
	Catalog   catalog.Catalog
}

var (
	// ErrOptions reports invalid options.
	ErrOptions = errors.New("invalid options")
	// ErrUnreadableEntry reports a catalog entry whose metadata cannot be
	// loaded, so the files it references are unknown; gc and purge then
	// delete nothing.
	ErrUnreadableEntry = errors.New("unreadable catalog entry")
)

// ExpireOptions select the snapshots to remove. At least one of RetainLast
// and OlderThan must be set; with both, a snapshot is removed when either
// selects it. The current snapshot is never removed.
type ExpireOptions struct {
	// RetainLast keeps the N most recent snapshots (by sequence number).
	RetainLast int
	// OlderThan removes snapshots whose timestamp is older than Now - OlderThan.
	OlderThan time.Duration
	// DryRun reports what would be removed and commits nothing.
	DryRun bool
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// ExpireResult lists the removed snapshot ids and the committed metadata.
type ExpireResult struct {
	Removed          []int64
	MetadataLocation string
}

// Expire removes non-current snapshots and their log entries from index
// name, preserving last-sequence-number (ids are never reused), and commits
// the result by catalog compare-and-swap with retry.
func Expire(ctx context.Context, env Env, name string, o ExpireOptions) (*ExpireResult, error) {
	if o.RetainLast < 0 || o.OlderThan < 0 || (o.RetainLast == 0 && o.OlderThan == 0) {
		return nil, fmt.Errorf("%w: give --retain-last N (N ≥ 1) or --older-than DURATION", ErrOptions)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	now := o.Now()
	res := &ExpireResult{}
	pick := func(m *metadata.Metadata) []int64 {
		snaps := slices.Clone(m.Snapshots)
		slices.SortFunc(snaps, func(a, b metadata.Snapshot) int { return int(b.SequenceNumber - a.SequenceNumber) })
		var ids []int64
		for i, s := range snaps {
			if s.SnapshotID == m.CurrentSnapshotID {
				continue
			}
			old := o.OlderThan > 0 && s.TimestampMs < now.Add(-o.OlderThan).UnixMilli()
			beyond := o.RetainLast > 0 && i >= o.RetainLast
			if old || beyond {
				ids = append(ids, s.SnapshotID)
			}
		}
		slices.Sort(ids)
		return ids
	}
	if o.DryRun {
		m, entry, err := catalog.LoadMetadata(ctx, env.Catalog, env.Warehouse, name)
		if err != nil {
			return nil, err
		}
		res.Removed, res.MetadataLocation = pick(m), entry.MetadataLocation
		return res, nil
	}
	errNothing := errors.New("nothing to expire")
	_, loc, err := catalog.Update(ctx, env.Catalog, env.Warehouse, name,
		func(base *metadata.Metadata, _ catalog.Entry) (*metadata.Metadata, *catalog.Entry, error) {
			ids := pick(base)
			if len(ids) == 0 {
				return nil, nil, errNothing
			}
			res.Removed = ids
			next, err := metadata.RemoveSnapshots(base, ids, now.UnixMilli())
			return next, nil, err
		})
	if errors.Is(err, errNothing) {
		res.Removed = nil
		_, entry, err := catalog.LoadMetadata(ctx, env.Catalog, env.Warehouse, name)
		if err != nil {
			return nil, err
		}
		res.MetadataLocation = entry.MetadataLocation
		return res, nil
	}
	if err != nil {
		return nil, err
	}
	res.MetadataLocation = loc
	return res, nil
}

// DropResult reports what Drop removed.
type DropResult struct {
	IndexUUID string
	Deleted   int
	Bytes     int64
	// Kept counts the index's files that purge left because a remaining
	// catalog entry references them.
	Kept int
}

// Drop removes index name from the catalog. With purge it also deletes the
// index's own files (its metadata files and postings) that no remaining
// catalog entry references (two entries may point at one metadata file);
// centroid artifacts, which other indexes may share, are left to gc. When
// the files a remaining entry references cannot be told, because its
// metadata cannot be read, purge deletes nothing and reports
// ErrUnreadableEntry after the drop.
func Drop(ctx context.Context, env Env, name string, purge bool) (*DropResult, error) {
	m, _, err := catalog.LoadMetadata(ctx, env.Catalog, env.Warehouse, name)
	if err != nil && !errors.Is(err, metadata.ErrInvalid) {
		return nil, err
	}
	res := &DropResult{}
	if m != nil {
		res.IndexUUID = m.IndexUUID
	}
	if err := env.Catalog.Drop(ctx, name); err != nil {
		return nil, err
	}
	if !purge || m == nil {
		return res, nil
	}
	id, err := uuid.Parse(m.IndexUUID)
	if err != nil {
		return res, err
	}
	var own []storage.Info
	for _, prefix := range []string{"indexes/" + strings.ReplaceAll(id.String(), "-", "") + "/", "metadata/" + id.String() + "/"} {
		infos, err := env.Warehouse.List(ctx, prefix)
		if err != nil {
			return res, err
		}
		own = append(own, infos...)
	}
	// The files the remaining entries reference now (cutoff now: only
	// their current metadata files count).
	live, _, err := liveFiles(ctx, env, own, time.Now())
	if err != nil {
		return res, fmt.Errorf("dropped %s but kept its files: %w", strconv.Quote(name), err)
	}
	for _, in := range own {
		if live[in.Key] {
			res.Kept++
			continue
		}
		if err := env.Warehouse.Delete(ctx, in.Key); err != nil {
			return res, err
		}
		res.Deleted++
		res.Bytes += in.Size
	}
	return res, nil
}
