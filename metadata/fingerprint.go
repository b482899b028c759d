package metadata

import (
	"strconv"

	"github.com/google/uuid"
)

var fingerprintNamespace = uuid.MustParse(FingerprintNamespace)

// FingerprintName returns the exact UUID name of descriptor d
// (clarification 6): compact JSON
// {"vector-field":…,"dimension":…,"metric":…,"nlist":…,"clustering-profile-version":…}
// with integers unquoted, non-ASCII written raw and only '"', '\' and
// U+0000–U+001F escaped (\b \f \n \r \t short, others \u00xx lowercase);
// '<', '>', '&', U+2028 and U+2029 are written raw. Bytes of d.VectorField or
// d.Metric that are not valid UTF-8 are copied as they are (Validate rejects
// such descriptors).
func FingerprintName(d Descriptor) []byte {
	b := make([]byte, 0, 96+len(d.VectorField)+len(d.Metric))
	b = append(b, `{"vector-field":`...)
	b = appendQuoted(b, d.VectorField)
	b = append(b, `,"dimension":`...)
	b = strconv.AppendInt(b, int64(d.Dimension), 10)
	b = append(b, `,"metric":`...)
	b = appendQuoted(b, d.Metric)
	b = append(b, `,"nlist":`...)
	b = strconv.AppendInt(b, int64(d.NList), 10)
	b = append(b, `,"clustering-profile-version":`...)
	b = strconv.AppendInt(b, int64(d.ClusteringProfileVersion), 10)
	return append(b, '}')
}

// Fingerprint returns the centroid descriptor fingerprint of d
// (ivf-index-schema §3): the UUIDv5 of FingerprintName(d) in namespace
// FingerprintNamespace, as a lowercase 8-4-4-4-12 string.
func Fingerprint(d Descriptor) string {
	return uuid.NewSHA1(fingerprintNamespace, FingerprintName(d)).String()
}

// appendQuoted appends s as a JSON string with the shortest RFC 8259
// escapes: only '"', '\' and control characters U+0000–U+001F are escaped;
// everything else, including non-ASCII, '<', '>', '&', U+2028 and U+2029, is
// written raw. Both the fingerprint name and the canonical writer use it.
func appendQuoted(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
