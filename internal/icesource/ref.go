package icesource

import (
	"fmt"
	"strings"
)

// Scheme is the URI scheme of an Iceberg source reference.
const Scheme = "iceberg://"

// Ref names an Iceberg table: the catalog (a name configured in the
// environment or .iceberg-go.yaml, never a URI or credential), the
// namespace levels and the table name.
type Ref struct {
	Catalog   string
	Namespace []string
	Table     string
}

// String returns the canonical reference, iceberg://catalog/ns…/table.
func (r Ref) String() string {
	return Scheme + r.Catalog + "/" + strings.Join(r.Namespace, "/") + "/" + r.Table
}

// IsRef reports whether s is meant as an Iceberg reference (starts with
// iceberg://), whether or not it is well formed.
func IsRef(s string) bool { return strings.HasPrefix(s, Scheme) }

// ParseRef parses iceberg://<catalog>/<namespace>[/<namespace>…]/<table>.
// Every segment is non-empty and holds no control character, '%' or '?';
// the catalog name is letters, digits, '_' and '-' (it names environment
// variables, see CatalogProps). Errors wrap ErrRef and quote s.
func ParseRef(s string) (Ref, error) {
	rest, ok := strings.CutPrefix(s, Scheme)
	if !ok {
		return Ref{}, fmt.Errorf("%w %q: want iceberg://<catalog>/<namespace>/<table>", ErrRef, s)
	}
	parts := strings.Split(strings.TrimSuffix(rest, "/"), "/")
	if len(parts) < 3 {
		return Ref{}, fmt.Errorf("%w %q: want iceberg://<catalog>/<namespace>/<table> (catalog, at least one namespace level, table)", ErrRef, s)
	}
	for i, p := range parts {
		if p == "" || strings.ContainsAny(p, "%?#") || strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return Ref{}, fmt.Errorf("%w %q: segment %d is empty or holds %%, ?, # or a control character", ErrRef, s, i+1)
		}
	}
	for _, c := range parts[0] {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return Ref{}, fmt.Errorf("%w %q: catalog name %q may hold only letters, digits, _ and -", ErrRef, s, parts[0])
		}
	}
	return Ref{Catalog: parts[0], Namespace: parts[1 : len(parts)-1], Table: parts[len(parts)-1]}, nil
}
