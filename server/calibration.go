package server

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/parqdb/parqdb/calibrate"
	"github.com/parqdb/parqdb/server/serving"
)

// DefaultCalibrationTargets are the target recalls whose settings
// GET /v1/indexes/{name}/calibration reports when the request names none.
var DefaultCalibrationTargets = []float64{0.8, 0.9, 0.95, 0.99}

// maxCalibrationTargets bounds the target query parameters of one request.
const maxCalibrationTargets = 32

// CalibrationDescription is the answer of GET /v1/indexes/{name}/calibration:
// the served snapshot's calibration (docs/search.md, "Search by target
// recall"), the measured points of the recall-against-cost curve, and the
// setting a search with "recall" picks for each target.
type CalibrationDescription struct {
	Index      string `json:"index"`
	SnapshotID int64  `json:"snapshot_id"`
	Encoding   string `json:"encoding"`
	NList      int    `json:"nlist"`
	// K and Queries are how it was measured: recall@K over Queries
	// sampled rows of the index.
	K       int `json:"k"`
	Queries int `json:"queries"`
	// Stored is false when the calibration was computed by this server
	// and could not be written to the warehouse (StoreError says why).
	Stored     bool   `json:"stored"`
	StoreError string `json:"store_error,omitempty"`
	// Points are the measured settings, by refine, then nprobe.
	Points []calibrate.Point `json:"points"`
	// Picks are the settings chosen for the targets, in request order.
	Picks []CalibrationPick `json:"picks"`
}

// CalibrationPick is the setting a search with "recall": Target runs with.
type CalibrationPick struct {
	Target float64 `json:"target"`
	calibrate.Point
	// Met is false when no measured setting reached the target (the
	// highest-recall one is used).
	Met bool `json:"met"`
	// OverLimit is true when the setting exceeds this server's nprobe or
	// refine limit: a search with that recall is refused (out_of_range).
	OverLimit bool `json:"over_limit,omitempty"`
}

// calibration answers GET /v1/indexes/{name}/calibration[?target=0.9…].
// Computing a calibration (the first use of a snapshot that has no
// calibration file) runs searches, so it takes a running slot like a
// search, within the server's time limit.
func (s *Server) calibration(w http.ResponseWriter, r *http.Request, name string) error {
	targets, err := calibrationTargets(r.URL.Query()["target"])
	if err != nil {
		return err
	}
	ctx, cancel := serving.WithTimeLimit(r.Context(), time.Now(), s.cfg.Limits.Timeout)
	defer cancel()
	l, err := s.pool.Acquire(ctx, name, 0)
	if err != nil {
		return err
	}
	defer l.Release()
	ix := l.Index()
	release, err := s.admit.Admit(ctx)
	if err != nil {
		if serving.AsError(err).Code == serving.CodeOverloaded {
			w.Header().Set("Retry-After", serving.RetryAfter)
		}
		return err
	}
	c, err := ix.Calibration(ctx)
	release()
	if err != nil {
		if ctx.Err() != nil {
			e := serving.TimeoutError(ctx, "calibrating the index (done once per snapshot)")
			e.Message += fmt.Sprintf("; or calibrate ahead: parqdb index refresh %s --calibrate", ix.Name())
			return e
		}
		return err
	}
	lim := s.cfg.Limits.WithDefaults()
	d := CalibrationDescription{Index: ix.Name(), SnapshotID: ix.Snapshot().SnapshotID, Encoding: c.Encoding,
		NList: c.NList, K: c.K, Queries: c.Queries, Stored: true, Points: c.Points, Picks: make([]CalibrationPick, len(targets))}
	if werr := ix.CalibrationWriteError(); werr != nil {
		d.Stored, d.StoreError = false, werr.Error()
	}
	for i, t := range targets {
		p, met, err := c.Pick(t)
		if err != nil {
			return err
		}
		d.Picks[i] = CalibrationPick{Target: t, Point: p, Met: met, OverLimit: p.NProbe > lim.MaxNProbe || p.Refine > lim.MaxRefine}
	}
	setStaleHeader(w, ix.Stale())
	return writeJSON(w, http.StatusOK, d)
}

// calibrationTargets parses the target query parameters (none: the
// defaults).
func calibrationTargets(raw []string) ([]float64, error) {
	if len(raw) == 0 {
		return DefaultCalibrationTargets, nil
	}
	if len(raw) > maxCalibrationTargets {
		return nil, serving.Errorf(http.StatusBadRequest, serving.CodeOutOfRange, "%d target parameters; at most %d", len(raw), maxCalibrationTargets)
	}
	out := make([]float64, len(raw))
	for i, v := range raw {
		t, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, serving.Errorf(http.StatusBadRequest, serving.CodeInvalidArgument, "target[%d] = %q is not a number", i, v)
		}
		if !(t > 0 && t <= 1) {
			return nil, serving.Errorf(http.StatusBadRequest, serving.CodeOutOfRange, "target[%d] = %v is outside (0, 1]", i, t)
		}
		out[i] = t
	}
	return out, nil
}
