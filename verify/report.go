package verify

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// Status is the outcome of one check.
type Status string

// The outcomes of a check.
const (
	// StatusOK means the invariant holds.
	StatusOK Status = "ok"
	// StatusFail means the invariant is broken; Detail says where.
	StatusFail Status = "FAIL"
	// StatusSkipped means the check could not run because an earlier check
	// failed or does not apply (e.g. LVQ codes under the source encoding);
	// Detail says why. A skipped check never makes a report fail on its
	// own: whatever caused the skip is itself a failed check, or the check
	// has nothing to verify.
	StatusSkipped Status = "skipped"
)

// Check is the result of one named check.
type Check struct {
	// Name is one of the Check* constants.
	Name string
	// Status is the outcome.
	Status Status
	// Detail summarises what was checked ("10000 rows in 37 files") or,
	// for a failure, how many problems were found and the first few.
	Detail string
}

// OK reports whether the check did not fail.
func (c Check) OK() bool { return c.Status != StatusFail }

// Report is the result of Run: every check in the order it ran.
type Report struct {
	// Index is the catalog name of the index.
	Index string
	// SnapshotID is the verified snapshot (0 if none could be selected).
	SnapshotID int64
	// MetadataLocation is the metadata file the catalog names.
	MetadataLocation string
	// Checks are the checks in the order they ran; every Check* name
	// appears exactly once.
	Checks []Check
}

// OK reports whether no check failed.
func (r *Report) OK() bool {
	for _, c := range r.Checks {
		if !c.OK() {
			return false
		}
	}
	return true
}

// Failed returns the failed checks.
func (r *Report) Failed() []Check {
	var out []Check
	for _, c := range r.Checks {
		if !c.OK() {
			out = append(out, c)
		}
	}
	return out
}

// Check returns the check named name.
func (r *Report) Check(name string) (Check, bool) {
	for _, c := range r.Checks {
		if c.Name == name {
			return c, true
		}
	}
	return Check{}, false
}

// WriteText writes the report as aligned lines "name: status (detail)"
// followed by a verdict line.
func (r *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	fmt.Fprintf(tw, "index %s, snapshot %d (%s)\n", r.Index, r.SnapshotID, r.MetadataLocation)
	for _, c := range r.Checks {
		if c.Detail == "" {
			fmt.Fprintf(tw, "%s:\t%s\n", c.Name, c.Status)
		} else {
			fmt.Fprintf(tw, "%s:\t%s\t(%s)\n", c.Name, c.Status, c.Detail)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	verdict := "ok"
	if n := len(r.Failed()); n > 0 {
		verdict = fmt.Sprintf("FAIL (%d of %d checks failed)", n, len(r.Checks))
	}
	_, err := fmt.Fprintf(w, "verdict: %s\n", verdict)
	return err
}

// jsonCheck and jsonReport are the JSON forms (MarshalJSON).
type jsonCheck struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Status Status `json:"status"`
	Detail string `json:"detail"`
}

type jsonReport struct {
	Index            string      `json:"index"`
	Snapshot         int64       `json:"snapshot"`
	MetadataLocation string      `json:"metadata-location"`
	OK               bool        `json:"ok"`
	Checks           []jsonCheck `json:"checks"`
}

// MarshalJSON writes {"index", "snapshot", "metadata-location", "ok",
// "checks": [{"name", "ok", "status", "detail"}…]}; a skipped check has
// "ok": true and "status": "skipped".
func (r *Report) MarshalJSON() ([]byte, error) {
	j := jsonReport{Index: r.Index, Snapshot: r.SnapshotID, MetadataLocation: r.MetadataLocation, OK: r.OK(), Checks: []jsonCheck{}}
	for _, c := range r.Checks {
		j.Checks = append(j.Checks, jsonCheck{Name: c.Name, OK: c.OK(), Status: c.Status, Detail: c.Detail})
	}
	return json.Marshal(j)
}
