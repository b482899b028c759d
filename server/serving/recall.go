package serving

import (
	"context"
	"fmt"
	"net/http"

	"github.com/parqdb/parqdb/query"
)

// CheckRecall adds a requested target recall to opts, which CheckOptions
// made: nil recall leaves opts alone; a recall outside (0, 1] is out of
// range, and one given with nprobe or refine is refused, since recall
// chooses both (docs/search.md, "Search by target recall"). Shared by the
// HTTP API and the SQL table functions.
func (l Limits) CheckRecall(opts query.Options, recall *float64, nprobe, refine *int) (query.Options, error) {
	if recall == nil {
		return opts, nil
	}
	if r := *recall; !(r > 0 && r <= 1) {
		return opts, Errorf(http.StatusBadRequest, CodeOutOfRange, "recall = %v is outside (0, 1]", r)
	}
	if nprobe != nil || refine != nil {
		return opts, Errorf(http.StatusBadRequest, CodeInvalidArgument, "recall chooses nprobe and refine from the index's calibration: give recall, or nprobe and refine, not both")
	}
	opts.Recall, opts.NProbe, opts.Refine = *recall, 0, 0
	return opts, nil
}

// ResolveRecall replaces opts.Recall by the nprobe and refine that ix's
// calibration picks for it (calibrating the snapshot on its first use,
// within ctx's time limit), refusing a setting above the server's nprobe
// or refine limit. opts without Recall is returned unchanged.
func (l Limits) ResolveRecall(ctx context.Context, ix *query.Index, opts query.Options) (query.Options, error) {
	if opts.Recall == 0 {
		return opts, nil
	}
	l = l.WithDefaults()
	p, _, err := ix.RecallSetting(ctx, opts.Recall)
	if err != nil {
		if ctx.Err() != nil {
			e := TimeoutError(ctx, "calibrating the index for recall (done once per snapshot)")
			e.Message += fmt.Sprintf("; or calibrate ahead: parqdb index refresh %s --calibrate", ix.Name())
			return opts, e
		}
		return opts, err
	}
	if p.NProbe > l.MaxNProbe || p.Refine > l.MaxRefine {
		return opts, Errorf(http.StatusBadRequest, CodeOutOfRange,
			"recall = %v needs nprobe %d and refine %d, above this server's limits (nprobe %d, refine %d): ask for a lower recall",
			opts.Recall, p.NProbe, p.Refine, l.MaxNProbe, l.MaxRefine)
	}
	opts.Recall, opts.NProbe, opts.Refine = 0, p.NProbe, p.Refine
	return opts, nil
}
