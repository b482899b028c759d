package query

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/parqdb/parqdb/calibrate"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/postings"
	"github.com/parqdb/parqdb/storage"
)

// Search by target recall (Options.Recall): the index's calibration
// (package calibrate) maps the target to the cheapest (nprobe, refine)
// that met it on the index's own rows. The calibration is read from the
// snapshot's calibration file, or computed on first use and written there
// (docs/search.md, "Search by target recall").

// recallState caches an index's calibration.
type recallState struct {
	mu       sync.Mutex
	c        *calibrate.Calibration
	stored   bool  // c was read from, or written to, the warehouse
	writeErr error // why writing c failed, if it did
	// picks caches c.Pick by target (float64 → calibrate.Point), so that
	// a search with Options.Recall takes no lock once c is known.
	picks sync.Map
}

// recallOptions returns opts with NProbe and Refine chosen for
// opts.Recall; opts unchanged when Recall is 0.
func (ix *Index) recallOptions(ctx context.Context, opts Options) (Options, error) {
	if opts.Recall == 0 {
		return opts, nil
	}
	if err := checkRecall(opts); err != nil {
		return opts, err
	}
	if p, ok := ix.recall.picks.Load(opts.Recall); ok {
		pt := p.(calibrate.Point)
		opts.NProbe, opts.Refine, opts.Recall = pt.NProbe, pt.Refine, 0
		return opts, nil
	}
	p, _, err := ix.RecallSetting(ctx, opts.Recall)
	if err != nil {
		return opts, err
	}
	ix.recall.picks.Store(opts.Recall, p)
	opts.NProbe, opts.Refine, opts.Recall = p.NProbe, p.Refine, 0
	return opts, nil
}

func checkRecall(opts Options) error {
	switch {
	case !(opts.Recall > 0 && opts.Recall <= 1):
		return fmt.Errorf("%w: recall = %v is outside (0, 1]", ErrBadQuery, opts.Recall)
	case opts.NProbe != 0 || opts.Refine != 0:
		return fmt.Errorf("%w: recall chooses nprobe and refine: give either recall or nprobe/refine, not both", ErrBadQuery)
	}
	return nil
}

// RecallSetting returns the setting that a search with Options.Recall =
// target runs with: the calibration's pick (calibrate.Calibration.Pick),
// and whether its calibrated recall met the target (false when no setting
// reached it: the highest-recall one is used). The first call loads or
// computes the calibration (Calibration).
func (ix *Index) RecallSetting(ctx context.Context, target float64) (calibrate.Point, bool, error) {
	if !(target > 0 && target <= 1) {
		return calibrate.Point{}, false, fmt.Errorf("%w: recall = %v is outside (0, 1]", ErrBadQuery, target)
	}
	c, err := ix.Calibration(ctx)
	if err != nil {
		return calibrate.Point{}, false, err
	}
	return c.Pick(target)
}

// Calibration returns the calibration of the index's snapshot: the one
// cached, else the snapshot's calibration file when it is valid and bound
// to this snapshot (a missing, unreadable or stale file is ignored), else
// a new one computed now (calibrate.Run; seconds on 100k rows) and
// written atomically to that file. A failed write (a read-only warehouse)
// is not an error: the calibration is kept in memory and
// CalibrationWriteError reports why. Safe for concurrent use: concurrent
// first calls wait for one computation.
func (ix *Index) Calibration(ctx context.Context) (*calibrate.Calibration, error) {
	ix.recall.mu.Lock()
	defer ix.recall.mu.Unlock()
	if ix.recall.c != nil {
		return ix.recall.c, nil
	}
	c, err := ReadCalibration(ctx, ix.wh, ix.meta.IndexUUID, ix.snap)
	if err != nil {
		return nil, err
	}
	if c != nil {
		ix.recall.c, ix.recall.stored = c, true
		return c, nil
	}
	return ix.calibrateLocked(ctx)
}

// Recalibrate computes the snapshot's calibration anew and writes it,
// replacing any file (index create --calibrate, index refresh).
func (ix *Index) Recalibrate(ctx context.Context) (*calibrate.Calibration, error) {
	ix.recall.mu.Lock()
	defer ix.recall.mu.Unlock()
	return ix.calibrateLocked(ctx)
}

// CalibrationWriteError is why the calibration computed by this Index
// could not be stored (nil when it was, or none was computed).
func (ix *Index) CalibrationWriteError() error {
	ix.recall.mu.Lock()
	defer ix.recall.mu.Unlock()
	return ix.recall.writeErr
}

func (ix *Index) calibrateLocked(ctx context.Context) (*calibrate.Calibration, error) {
	c, err := calibrate.Run(ctx, calibSearcher{ix}, calibrate.Config{})
	if err != nil {
		return nil, fmt.Errorf("index %q: calibrate: %w", ix.name, err)
	}
	c.IndexUUID = ix.meta.IndexUUID
	c.SnapshotID = ix.snap.SnapshotID
	c.Source = ix.snap.SourceTable.Properties
	ix.recall.c, ix.recall.stored, ix.recall.writeErr = c, false, nil
	ix.recall.picks.Clear()
	loc := CalibrationLocation(ix.snap)
	if err := writeCalibration(ctx, ix.wh, loc, c); err != nil {
		ix.recall.writeErr = fmt.Errorf("write %s: %w", loc, err)
	} else {
		ix.recall.stored = true
	}
	return c, nil
}

// CalibrationLocation is the warehouse-relative location of snapshot s's
// calibration file (calibrate.Location in its postings table's side
// folder, postings.Layout.Meta).
func CalibrationLocation(s *metadata.Snapshot) string {
	return calibrate.Location(postings.SnapshotLayout(s).Meta, s.SnapshotID)
}

// ReadCalibration reads snapshot s's calibration file from the warehouse.
// It returns nil and no error when the file is absent, invalid or bound to
// another index, snapshot or source state: readers ignore such files. An
// error means the warehouse could not be read.
func ReadCalibration(ctx context.Context, wh storage.Bucket, indexUUID string, s *metadata.Snapshot) (*calibrate.Calibration, error) {
	loc := CalibrationLocation(s)
	data, err := storage.ReadAll(ctx, wh, loc)
	if errors.Is(err, storage.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", loc, err)
	}
	c, err := calibrate.Parse(loc, data)
	if err != nil || !c.Matches(indexUUID, s.SnapshotID, s.SourceTable.Properties) {
		return nil, nil
	}
	return c, nil
}

// writeCalibration stores c at loc: Create makes the object visible only
// when Close succeeds, so no reader sees half a file.
func writeCalibration(ctx context.Context, wh storage.Bucket, loc string, c *calibrate.Calibration) error {
	data, err := c.Marshal()
	if err != nil {
		return err
	}
	w, err := wh.Create(ctx, loc)
	if err != nil {
		return err
	}
	defer w.Abort()
	if _, err := w.Write(data); err != nil {
		return err
	}
	return w.Close()
}

// calibSearcher runs calibrate.Run's searches on an index.
type calibSearcher struct{ ix *Index }

func (s calibSearcher) Rows() int64      { return s.ix.table.NumRows() }
func (s calibSearcher) NList() int       { return s.ix.NList() }
func (s calibSearcher) Encoding() string { return s.ix.schema.Encoding }

func (s calibSearcher) RowsAt(ctx context.Context, ords []int64) ([][]float32, []string, error) {
	v, err := s.ix.readVectors(ctx, ords, nil)
	if err != nil {
		return nil, nil, err
	}
	d := s.ix.Dim()
	vecs := make([][]float32, len(ords))
	keys := make([]string, len(ords))
	for i, o := range ords {
		vecs[i] = v[i*d : (i+1)*d : (i+1)*d]
		k, err := s.ix.KeyAt(ctx, o)
		if err != nil {
			return nil, nil, err
		}
		keys[i] = string(k)
	}
	return vecs, keys, nil
}

func (s calibSearcher) Exact(ctx context.Context, qs [][]float32, k int) ([][]string, error) {
	hits, err := s.ix.ExactBatch(ctx, qs, k, 0)
	if err != nil {
		return nil, err
	}
	return hitKeys(hits), nil
}

func (s calibSearcher) Search(ctx context.Context, qs [][]float32, k, nprobe, refine int) ([][]string, calibrate.Counts, error) {
	opts := Options{K: k, NProbe: nprobe, Refine: refine, NoRows: true}
	res := make([]*Result, len(qs))
	err := forEachQuery(ctx, len(qs), 0, func(ctx context.Context, i int) error {
		r, err := s.ix.search(ctx, qs[i], opts, -1)
		res[i] = r
		return err
	})
	if err != nil {
		return nil, calibrate.Counts{}, err
	}
	var c calibrate.Counts
	hits := make([][]Hit, len(res))
	for i, r := range res {
		hits[i] = r.Hits
		c.Routing += r.Stats.LeafDistances
		c.Candidates += r.Stats.Candidates
		c.Refined += r.Stats.Refined
	}
	return hitKeys(hits), c, nil
}

func hitKeys(hits [][]Hit) [][]string {
	out := make([][]string, len(hits))
	for i, hs := range hits {
		out[i] = make([]string, len(hs))
		for j, h := range hs {
			out[i][j] = string(h.Key)
		}
	}
	return out
}
