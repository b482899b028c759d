package metadata

import "fmt"

// ClusteringProfileV1 is the only clustering profile defined
// (ivf-index-schema §3, §5).
const ClusteringProfileV1 = 1

// Validate checks every rule of ivf-index-schema §3 and returns a
// *ValidationError (wrapping ErrInvalid) listing every problem, or nil:
// format-version 1; artifact-uuid a non-nil lowercase UUID; fingerprint equal
// to Fingerprint(descriptor); created-at-ms not negative; a descriptor with a
// non-empty vector-field, positive dimension and nlist, an ivf metric and
// clustering-profile-version 1; centroids and roots distinct
// warehouse-relative locations.
func (c *CentroidMetadata) Validate() error {
	var ps problems
	c.validate(&ps)
	return ps.err("")
}

func (c *CentroidMetadata) validate(ps *problems) {
	if c.FormatVersion != 1 {
		ps.add("format-version", fmt.Sprintf("must be 1, got %d", c.FormatVersion))
	}
	checkUUID(ps, lit("artifact-uuid"), c.ArtifactUUID)
	nonNegative(ps, lit("created-at-ms"), c.CreatedAtMs)
	d := c.Descriptor
	checkFieldName(ps, lit("descriptor.vector-field"), d.VectorField)
	positive(ps, lit("descriptor.dimension"), int64(d.Dimension))
	if !ValidMetric(d.Metric) {
		ps.add("descriptor.metric", fmt.Sprintf("unsupported metric %q (expected %q or %q)", d.Metric, MetricL2Squared, MetricCosine))
	}
	positive(ps, lit("descriptor.nlist"), int64(d.NList))
	if d.ClusteringProfileVersion != ClusteringProfileV1 {
		ps.add("descriptor.clustering-profile-version", fmt.Sprintf("unsupported clustering profile version %d: only %d is defined", d.ClusteringProfileVersion, ClusteringProfileV1))
	}
	if checkUUID(ps, lit("fingerprint"), c.Fingerprint) {
		if want := Fingerprint(d); c.Fingerprint != want {
			ps.add("fingerprint", fmt.Sprintf("%s is not the fingerprint of the descriptor (%s)", c.Fingerprint, want))
		}
	}
	checkLocation(ps, lit("centroids"), c.Centroids)
	checkLocation(ps, lit("roots"), c.Roots)
	if c.Centroids == c.Roots && c.Centroids != "" {
		ps.add("roots", "equals centroids: ivf_centroids and ivf_roots are different tables")
	}
}
