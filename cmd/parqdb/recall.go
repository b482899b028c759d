package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/parqdb/parqdb/calibrate"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/query"
)

// recallStats is the "recall" member of search's and bench's --stats:
// the setting --recall chose and the calibration it came from.
type recallStats struct {
	Target float64 `json:"target"`
	NProbe int     `json:"nprobe"`
	Refine int     `json:"refine"`
	// Calibrated is the recall@k the setting reached on the calibration
	// sample; Met is false when no calibrated setting reached the target
	// (the highest-recall one is used).
	Calibrated float64 `json:"calibrated_recall"`
	StdErr     float64 `json:"calibrated_stderr"`
	Met        bool    `json:"met"`
	// Seconds is the time to load (or, on first use, compute and store)
	// the calibration; it is part of prepare_seconds.
	Seconds float64 `json:"calibration_seconds"`
}

// checkRecallFlags refuses a --recall outside (0, 1] or given together
// with --nprobe or --refine, before any index is opened.
func checkRecallFlags(cmd *cobra.Command, recall float64) error {
	if !cmd.Flags().Changed("recall") {
		return nil
	}
	if !(recall > 0 && recall <= 1) {
		return usagef("--recall must be a target recall in (0, 1], such as 0.95, not %v", recall)
	}
	for _, name := range []string{"nprobe", "refine"} {
		if cmd.Flags().Changed(name) {
			return usagef("--recall chooses nprobe and refine from the index's calibration: give --recall or --%s, not both", name)
		}
	}
	return nil
}

// chooseRecall sets opts.NProbe and opts.Refine to the setting the index's
// calibration picks for target (query.Index.RecallSetting), warning on
// standard error when no setting reached it or the calibration computed
// now could not be stored.
func chooseRecall(ctx context.Context, cmd *cobra.Command, ix *query.Index, target float64, opts *query.Options) (*recallStats, error) {
	start := time.Now()
	p, met, err := ix.RecallSetting(ctx, target)
	if err != nil {
		return nil, err
	}
	opts.NProbe, opts.Refine = p.NProbe, p.Refine
	if !met {
		fmt.Fprintf(cmd.ErrOrStderr(), "warning: index %q: no calibrated setting reaches recall %v; using the highest measured, nprobe %d refine %d (calibrated recall %.4f)\n",
			ix.Name(), target, p.NProbe, p.Refine, p.Recall)
	}
	if err := ix.CalibrationWriteError(); err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "warning: index %q: the calibration was computed but not stored (%v); the next run computes it again\n", ix.Name(), err)
	}
	return &recallStats{
		Target: target, NProbe: p.NProbe, Refine: p.Refine,
		Calibrated: p.Recall, StdErr: p.StdErr, Met: met, Seconds: time.Since(start).Seconds(),
	}, nil
}

// calibrateIndex computes and stores the current snapshot's calibration
// (index create and refresh --calibrate) and says so on out.
func calibrateIndex(ctx context.Context, out io.Writer, e *env, name string) error {
	start := time.Now()
	ix, err := query.Open(ctx, query.Env{Warehouse: e.wh, Catalog: e.cat}, name, query.OpenOptions{})
	if err != nil {
		return err
	}
	defer ix.Close()
	c, err := ix.Recalibrate(ctx)
	if err != nil {
		return err
	}
	if err := ix.CalibrationWriteError(); err != nil {
		return err
	}
	fmt.Fprintf(out, "calibration: %d settings measured on %d source rows in %.1f s, stored in %s\n",
		len(c.Points), c.Queries, time.Since(start).Seconds(), query.CalibrationLocation(ix.Snapshot()))
	return nil
}

// calibrationDescription is the "calibration" member of index describe's
// JSON: the stored calibration's parameters and its recall–cost frontier
// (absent when the current snapshot has none: the first --recall search
// computes it).
type calibrationDescription struct {
	Location string            `json:"location"`
	K        int               `json:"k"`
	Queries  int               `json:"queries"`
	Points   int               `json:"points-measured"`
	Curve    []calibrate.Point `json:"curve"`
}

func describeCalibration(ctx context.Context, e *env, m *metadata.Metadata) (*calibrationDescription, error) {
	s := m.CurrentSnapshot()
	c, err := query.ReadCalibration(ctx, e.wh, m.IndexUUID, s)
	if err != nil || c == nil {
		return nil, err
	}
	return &calibrationDescription{
		Location: query.CalibrationLocation(s), K: c.K, Queries: c.Queries,
		Points: len(c.Points), Curve: c.Frontier(),
	}, nil
}

// writeCalibrationText prints the curve as describe's text rows.
func writeCalibrationText(w io.Writer, d *calibrationDescription) {
	if d == nil {
		fmt.Fprintf(w, "calibration\tnone (computed by the first --recall search, or index create/refresh --calibrate)\n")
		return
	}
	fmt.Fprintf(w, "calibration\t%s (recall@%d on %d source rows, %d settings)\n", d.Location, d.K, d.Queries, d.Points)
	fmt.Fprintf(w, "recall curve\tnprobe  refine  recall   ±stderr  cost/query\n")
	for _, p := range d.Curve {
		fmt.Fprintf(w, "\t%6d  %6d  %.4f  %.4f  %10.0f\n", p.NProbe, p.Refine, p.Recall, p.StdErr, p.Cost)
	}
}

const calibrateFlagUsage = "after committing, calibrate the new snapshot for search --recall and store the calibration (otherwise the first --recall search does it)"
