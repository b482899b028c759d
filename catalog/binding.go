package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/parqdb/parqdb/location"
	"github.com/parqdb/parqdb/metadata"
)

// checkEntry validates what a catalog is asked to store.
func checkEntry(e Entry) error {
	if err := CheckName(e.Name); err != nil {
		return err
	}
	if err := location.Check(e.MetadataLocation); err != nil {
		return fmt.Errorf("index %s: metadata location: %w", e.Name, err)
	}
	if e.Source.Provider == "" {
		return fmt.Errorf("index %s: source binding has no provider", e.Name)
	}
	return nil
}

// encodeSource is the stored form of a source binding: JSON with sorted map
// keys and no HTML escaping. nil and empty maps and lists keep their
// distinction (null versus {} or []) so that a binding round-trips exactly.
func encodeSource(t metadata.TableDefinition) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(t); err != nil {
		return "", fmt.Errorf("encode source binding: %w", err)
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}

func decodeSource(name, s string) (metadata.TableDefinition, error) {
	var t metadata.TableDefinition
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return t, fmt.Errorf("index %s: %w: source binding: %v", name, ErrCorrupt, err)
	}
	if dec.More() {
		return t, fmt.Errorf("index %s: %w: source binding: trailing data", name, ErrCorrupt)
	}
	return t, nil
}

// SameTable reports whether two table definitions identify the same source
// state: equal provider, equal identifier and equal properties. A nil and an
// empty map or list are equal here.
func SameTable(a, b metadata.TableDefinition) bool {
	if a.Provider != b.Provider || !maps.Equal(a.Properties, b.Properties) {
		return false
	}
	if (a.Identifier == nil) != (b.Identifier == nil) {
		return false
	}
	if a.Identifier != nil {
		x, y := a.Identifier, b.Identifier
		if x.Catalog != y.Catalog || x.Name != y.Name || !slices.Equal(x.Namespace, y.Namespace) {
			return false
		}
	}
	return true
}
