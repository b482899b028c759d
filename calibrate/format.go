package calibrate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"strconv"
)

// FormatVersion is the version of the calibration file this package
// writes and reads; a file of another version is ignored (ErrInvalid).
const FormatVersion = 1

// FilePrefix and FileSuffix frame a calibration file's name inside the
// side folder of the snapshot's postings table (postings.Layout.Meta):
// calibration-<snapshot-id>.json.
const (
	FilePrefix = "calibration-"
	FileSuffix = ".json"
)

// Location returns where the calibration of snapshot snapshotID lives:
// beside the manifest in meta, the side folder of the snapshot's postings
// table (postings.Layout.Meta, ending in "/"). Snapshots that share a
// postings table have distinct files, since each name carries its
// snapshot-id.
func Location(meta string, snapshotID int64) string {
	return meta + FilePrefix + strconv.FormatInt(snapshotID, 10) + FileSuffix
}

// Point is one measured setting.
type Point struct {
	NProbe int `json:"nprobe"`
	Refine int `json:"refine"`
	// Recall is the mean recall@K over the sample; StdErr its standard
	// error (the standard deviation of per-query recall over √queries).
	Recall float64 `json:"recall"`
	StdErr float64 `json:"stderr"`
	// Cost is the mean cost per query (Weights.Cost), in LVQ8 distances.
	Cost float64 `json:"cost"`
}

// Calibration is the content of a calibration file.
type Calibration struct {
	FormatVersion int `json:"format-version"`
	// Binding: the file is valid only for this index, snapshot and source
	// state (Matches).
	IndexUUID  string            `json:"index-uuid"`
	SnapshotID int64             `json:"snapshot-id"`
	Source     map[string]string `json:"source-table-properties"`
	// How it was measured.
	Encoding string  `json:"encoding"`
	NList    int     `json:"nlist"`
	K        int     `json:"k"`
	Queries  int     `json:"queries"`
	Seed     uint64  `json:"seed"`
	Weights  Weights `json:"weights"`
	// Points are in the order measured: by refine, then nprobe.
	Points []Point `json:"points"`
}

// MarshalJSON keeps Weights' JSON names lower-case like the rest.
func (w Weights) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]float64{"routing": w.Routing, "candidate": w.Candidate, "refined": w.Refined})
}

// UnmarshalJSON is MarshalJSON's inverse; unknown members are invalid.
func (w *Weights) UnmarshalJSON(b []byte) error {
	var m struct {
		Routing   *float64 `json:"routing"`
		Candidate *float64 `json:"candidate"`
		Refined   *float64 `json:"refined"`
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&m); err != nil {
		return err
	}
	if m.Routing == nil || m.Candidate == nil || m.Refined == nil {
		return fmt.Errorf("weights need routing, candidate and refined")
	}
	*w = Weights{Routing: *m.Routing, Candidate: *m.Candidate, Refined: *m.Refined}
	return nil
}

// Marshal encodes c as indented JSON.
func (c *Calibration) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(c, "", " ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Parse decodes and validates a calibration file; name (its location) is
// used in errors, which wrap ErrInvalid.
func Parse(name string, data []byte) (*Calibration, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	var c Calibration
	if err := d.Decode(&c); err != nil {
		return nil, fmt.Errorf("%s: %w: %v", name, ErrInvalid, err)
	}
	if d.More() {
		return nil, fmt.Errorf("%s: %w: data after the JSON object", name, ErrInvalid)
	}
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w: %v", name, ErrInvalid, err)
	}
	return &c, nil
}

func (c *Calibration) validate() error {
	switch {
	case c.FormatVersion != FormatVersion:
		return fmt.Errorf("format-version %d is not %d", c.FormatVersion, FormatVersion)
	case c.SnapshotID <= 0:
		return fmt.Errorf("snapshot-id %d is not positive", c.SnapshotID)
	case c.K < 1:
		return fmt.Errorf("k %d is not positive", c.K)
	case c.Queries < 1:
		return fmt.Errorf("queries %d is not positive", c.Queries)
	case len(c.Points) == 0:
		return fmt.Errorf("points is empty")
	}
	for i, p := range c.Points {
		switch {
		case p.NProbe < 1:
			return fmt.Errorf("points[%d].nprobe %d is not positive", i, p.NProbe)
		case p.Refine < 0:
			return fmt.Errorf("points[%d].refine %d is negative", i, p.Refine)
		case !(p.Recall >= 0 && p.Recall <= 1):
			return fmt.Errorf("points[%d].recall %v is outside [0, 1]", i, p.Recall)
		case !(p.StdErr >= 0 && p.StdErr <= 1):
			return fmt.Errorf("points[%d].stderr %v is outside [0, 1]", i, p.StdErr)
		case !(p.Cost >= 0) || math.IsInf(p.Cost, 0):
			return fmt.Errorf("points[%d].cost %v is not a finite non-negative number", i, p.Cost)
		}
	}
	return nil
}

// Matches reports whether c was computed for this index, snapshot and
// source state. A file that does not match is stale: readers ignore it.
func (c *Calibration) Matches(indexUUID string, snapshotID int64, source map[string]string) bool {
	return c.IndexUUID == indexUUID && c.SnapshotID == snapshotID && maps.Equal(c.Source, source)
}
