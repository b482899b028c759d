package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/parqdb/parqdb/buildplan"
	"github.com/parqdb/parqdb/location"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/storage"
)

// ErrUnreadablePlan reports a sharded build in progress whose plan gc
// cannot read; gc then deletes nothing.
var ErrUnreadablePlan = errors.New("unreadable build plan")

// markActivePlans keeps the sharded builds in progress (docs/build.md,
// "Sharded builds"). A build prefix indexes/<uuid32>/<snapshot-id>-<write-id>/
// holding a plan.json is active while any object under it was written
// within the grace period: shards are still running or finished recently,
// and the commit may still come. Every object under an active prefix and
// the plan's centroid artifact are then live, even when older than the
// grace period (the plan and the artifact are written first). A plan
// whose newest object is older is abandoned: nothing marks it, so its
// plan, shard manifests, pieces and (unless a snapshot uses it) artifact
// go as orphans. It returns the number of active plans.
//
// An active plan that cannot be read is an error: gc cannot tell which
// artifact it needs, so it deletes nothing.
func markActivePlans(ctx context.Context, wh storage.Bucket, all []storage.Info, cutoff time.Time, live map[string]bool) (int, error) {
	newest := map[string]time.Time{}
	for _, in := range all {
		if buildplan.IsPlanKey(in.Key) {
			newest[strings.TrimSuffix(in.Key, buildplan.PlanName)] = time.Time{}
		}
	}
	if len(newest) == 0 {
		return 0, nil
	}
	prefixOf := func(key string) string {
		parts := strings.SplitAfterN(key, "/", 4)
		if len(parts) < 4 {
			return ""
		}
		return parts[0] + parts[1] + parts[2]
	}
	for _, in := range all {
		p := prefixOf(in.Key)
		if t, ok := newest[p]; ok && in.ModTime.After(t) {
			newest[p] = in.ModTime
		}
	}
	active := 0
	for p, t := range newest {
		if t.Before(cutoff) {
			continue // abandoned
		}
		active++
		for _, in := range all {
			if prefixOf(in.Key) == p {
				live[in.Key] = true
			}
		}
		if err := markPlanArtifact(ctx, wh, p+buildplan.PlanName, live); err != nil {
			return active, fmt.Errorf("%w: build plan %s is in progress but cannot be read (%v); gc cannot tell which centroid artifact it needs, so nothing was deleted: finish or delete that plan's folder %s",
				ErrUnreadablePlan, p+buildplan.PlanName, err, p)
		}
	}
	return active, nil
}

// markPlanArtifact marks the centroid artifact the plan at loc uses.
func markPlanArtifact(ctx context.Context, wh storage.Bucket, loc string, live map[string]bool) error {
	data, err := storage.ReadAll(ctx, wh, loc)
	if err != nil {
		return err
	}
	p, err := buildplan.Parse(loc, data)
	if err != nil {
		return err
	}
	cmLoc := p.CentroidsMetadata
	if err := location.Check(cmLoc); err != nil {
		return err
	}
	cmData, err := storage.ReadAll(ctx, wh, cmLoc)
	if err != nil {
		return fmt.Errorf("read %s: %w", cmLoc, err)
	}
	cm, err := metadata.ParseCentroidFile(cmLoc, cmData)
	if err != nil {
		return err
	}
	live[cmLoc] = true
	live[cm.Centroids+postings.CentroidsFile] = true
	live[cm.Roots+postings.RootsFile] = true
	return nil
}
