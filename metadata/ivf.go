package metadata

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/parqdb/parqdb/location"
)

// ivfParams lists the exact parameter keys of an IVF snapshot
// (ivf-index-schema §2), in the order their problems are reported.
var ivfParams = []string{
	ParamDimension, ParamNList, ParamNTotal, ParamPostingEncoding,
	ParamFingerprint, ParamCentroidsUUID, ParamCentroidsLocation,
}

var ivfRoles = []string{RoleCentroids, RolePostings}

// ValidMetric reports whether m is a metric of the ivf family.
func ValidMetric(m string) bool { return m == MetricL2Squared || m == MetricCosine }

// ValidPostingEncoding reports whether e is a posting_encoding of the ivf family.
func ValidPostingEncoding(e string) bool {
	return e == EncodingSource || e == EncodingLVQ4 || e == EncodingLVQ8
}

// ParseCanonicalInt parses s as the canonical base-10 representation of a
// positive integer no greater than max: digits only, no sign, no leading
// zero (ivf-index-schema §2). The error says which rule s breaks.
func ParseCanonicalInt(s string, max int64) (int64, error) {
	if s == "" {
		return 0, errors.New("empty; expected a positive base-10 integer")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("%q is not a canonical positive base-10 integer (digits only, no sign)", s)
		}
	}
	if s[0] == '0' {
		if s == "0" {
			return 0, errors.New("must be positive, got 0")
		}
		return 0, fmt.Errorf("%q has a leading zero", s)
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v > max {
		return 0, fmt.Errorf("%s exceeds the maximum %d", s, max)
	}
	return v, nil
}

// IVFParams are the typed IVF parameters of a snapshot.
type IVFParams struct {
	Dimension         int32
	NList             int32
	NTotal            int64
	PostingEncoding   string
	Fingerprint       string
	CentroidsUUID     string
	CentroidsLocation string
}

// IVF returns the typed IVF parameters of s. It fails (wrapping ErrInvalid)
// unless s is a valid ivf snapshot; a snapshot inside metadata returned by
// Parse or the builders always is.
func (s *Snapshot) IVF() (IVFParams, error) {
	var ps problems
	var root jpath
	s.validate(&ps, &root)
	if err := ps.err(""); err != nil {
		return IVFParams{}, err
	}
	dim, _ := ParseCanonicalInt(s.Parameters[ParamDimension], math.MaxInt32)
	nlist, _ := ParseCanonicalInt(s.Parameters[ParamNList], math.MaxInt32)
	ntotal, _ := ParseCanonicalInt(s.Parameters[ParamNTotal], math.MaxInt64)
	return IVFParams{
		Dimension:         int32(dim),
		NList:             int32(nlist),
		NTotal:            ntotal,
		PostingEncoding:   s.Parameters[ParamPostingEncoding],
		Fingerprint:       s.Parameters[ParamFingerprint],
		CentroidsUUID:     s.Parameters[ParamCentroidsUUID],
		CentroidsLocation: s.Parameters[ParamCentroidsLocation],
	}, nil
}

// TableLocation returns properties.location of index table role, and
// whether it is set.
func (s *Snapshot) TableLocation(role string) (string, bool) {
	t, ok := s.IndexTables[role]
	if !ok {
		return "", false
	}
	loc, ok := t.Properties["location"]
	return loc, ok
}

func (s *Snapshot) validateIVF(ps *problems, p *jpath) {
	if !ValidMetric(s.Metric) {
		ps.at(p.key("metric"), fmt.Sprintf("unsupported metric %q for ivf (expected %q or %q)", s.Metric, MetricL2Squared, MetricCosine))
	}
	pp := p.key("parameters")
	if !onlyKeys(s.Parameters, ivfParams) {
		for _, k := range sortedKeys(s.Parameters) {
			if !slices.Contains(ivfParams, k) {
				ps.at(pp.key(k), "unknown ivf parameter (the ivf parameters are exactly dimension, nlist, ntotal, posting_encoding, ivf_centroids_fingerprint, ivf_centroids_uuid, ivf_centroids_metadata_location)")
			}
		}
	}
	var nlist, ntotal int64
	var nlistOK, ntotalOK bool
	for _, k := range ivfParams {
		v, ok := s.Parameters[k]
		kp := pp.key(k)
		if !ok {
			ps.at(kp, "required ivf parameter is missing")
			continue
		}
		switch k {
		case ParamDimension:
			if _, err := ParseCanonicalInt(v, math.MaxInt32); err != nil {
				ps.at(kp, err.Error())
			}
		case ParamNList:
			n, err := ParseCanonicalInt(v, math.MaxInt32)
			if err != nil {
				ps.at(kp, err.Error())
			}
			nlist, nlistOK = n, err == nil
		case ParamNTotal:
			n, err := ParseCanonicalInt(v, math.MaxInt64)
			if err != nil {
				ps.at(kp, err.Error())
			}
			ntotal, ntotalOK = n, err == nil
		case ParamPostingEncoding:
			if !ValidPostingEncoding(v) {
				ps.at(kp, fmt.Sprintf("unsupported posting_encoding %q (expected %q, %q or %q)", v, EncodingSource, EncodingLVQ4, EncodingLVQ8))
			}
		case ParamFingerprint:
			if checkUUID(ps, kp, v) && (v[14] != '5' || strings.IndexByte("89ab", v[19]) < 0) {
				ps.at(kp, fmt.Sprintf("%q is not a version-5 (name-based SHA-1) RFC 9562 UUID", v))
			}
		case ParamCentroidsUUID:
			checkUUID(ps, kp, v)
		case ParamCentroidsLocation:
			checkLocation(ps, kp, v)
		}
	}
	if nlistOK && ntotalOK && nlist > ntotal {
		ps.at(pp.key(ParamNList), fmt.Sprintf("nlist %d exceeds ntotal %d", nlist, ntotal))
	}
	if ntotalOK && s.IndexedRows != ntotal {
		ps.at(p.key("indexed-rows"), fmt.Sprintf("indexed-rows %d does not equal parameters.ntotal %d", s.IndexedRows, ntotal))
	}

	tp := p.key("index-tables")
	if !onlyKeys(s.IndexTables, ivfRoles) {
		for _, role := range sortedKeys(s.IndexTables) {
			if !slices.Contains(ivfRoles, role) {
				ps.at(tp.key(role), "unknown index-table role for ivf (the roles are exactly ivf_centroids and ivf_postings)")
			}
		}
	}
	for _, role := range ivfRoles {
		rp := tp.key(role)
		t, ok := s.IndexTables[role]
		if !ok {
			ps.at(rp, "required ivf index-table role is missing")
			continue
		}
		pp := rp.key("properties")
		lp := pp.key("location")
		loc, ok := t.Properties["location"]
		if !ok {
			ps.at(lp, "required: an ivf index table names its warehouse-relative location")
			continue
		}
		checkLocation(ps, lp, loc)
	}
	c, okc := s.TableLocation(RoleCentroids)
	q, okq := s.TableLocation(RolePostings)
	if okc && okq && c == q {
		ps.add(member(member(member(tp.String(), RolePostings), "properties"), "location"), "equals the ivf_centroids location: postings are never shared with another table")
	}
}

// onlyKeys reports whether every key of m is in keys.
func onlyKeys[V any](m map[string]V, keys []string) bool {
	for k := range m {
		if !slices.Contains(keys, k) {
			return false
		}
	}
	return true
}

// checkLocation reports loc unless it is a warehouse-relative location
// (location.Check). Locations that passed earlier in the same check are
// not checked again.
func checkLocation(ps *problems, p jpath, loc string) {
	for _, ok := range ps.okLocs {
		if loc == ok && ok != "" {
			return
		}
	}
	if err := location.Check(loc); err != nil {
		var le *location.Error
		if errors.As(err, &le) {
			ps.at(p, fmt.Sprintf("%q is not a warehouse-relative location: %s", loc, le.Rule))
		} else {
			ps.at(p, err.Error())
		}
		return
	}
	ps.okLocs[ps.nextOK] = loc
	ps.nextOK = (ps.nextOK + 1) % len(ps.okLocs)
}

// CheckSnapshotAgainstCentroid checks the ivf-index-schema §2 rules that
// tie snapshot s to its centroid metadata c: the ivf_centroids table
// location equals c.Centroids; vector-field, parameters dimension, metric and
// nlist equal c's descriptor; parameters ivf_centroids_fingerprint and
// ivf_centroids_uuid equal c.Fingerprint and c.ArtifactUUID. It assumes each
// was validated on its own (Parse, ParseCentroid). The error is a
// *ValidationError (wrapping ErrInvalid) whose paths are relative to the
// snapshot object, e.g. "parameters.nlist".
func CheckSnapshotAgainstCentroid(s *Snapshot, c *CentroidMetadata) error {
	var ps problems
	d := c.Descriptor
	if s.IndexFamily != FamilyIVF {
		ps.add("index-family", fmt.Sprintf("%q is not ivf: only ivf snapshots reference centroid metadata", s.IndexFamily))
		return ps.err("")
	}
	if loc, _ := s.TableLocation(RoleCentroids); loc != c.Centroids {
		ps.add("index-tables.ivf_centroids.properties.location", fmt.Sprintf("%q does not equal the centroid metadata's centroids %q", loc, c.Centroids))
	}
	if s.VectorField != d.VectorField {
		ps.add("vector-field", fmt.Sprintf("%q does not equal the centroid descriptor's vector-field %q", s.VectorField, d.VectorField))
	}
	if v := s.Parameters[ParamDimension]; v != strconv.FormatInt(int64(d.Dimension), 10) {
		ps.add("parameters.dimension", fmt.Sprintf("%q does not equal the centroid descriptor's dimension %d", v, d.Dimension))
	}
	if s.Metric != d.Metric {
		ps.add("metric", fmt.Sprintf("%q does not equal the centroid descriptor's metric %q", s.Metric, d.Metric))
	}
	if v := s.Parameters[ParamNList]; v != strconv.FormatInt(int64(d.NList), 10) {
		ps.add("parameters.nlist", fmt.Sprintf("%q does not equal the centroid descriptor's nlist %d", v, d.NList))
	}
	if v := s.Parameters[ParamFingerprint]; v != c.Fingerprint {
		ps.add("parameters.ivf_centroids_fingerprint", fmt.Sprintf("%q does not equal the centroid metadata's fingerprint %q", v, c.Fingerprint))
	}
	if v := s.Parameters[ParamCentroidsUUID]; v != c.ArtifactUUID {
		ps.add("parameters.ivf_centroids_uuid", fmt.Sprintf("%q does not equal the centroid metadata's artifact-uuid %q", v, c.ArtifactUUID))
	}
	return ps.err("")
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// appendSortedKeys appends the keys of m to keys and sorts them; with a
// stack array behind keys, small maps need no allocation.
func appendSortedKeys[V any](keys []string, m map[string]V) []string {
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
