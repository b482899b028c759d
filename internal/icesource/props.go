package icesource

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"
)

// Provider is the source-table provider name of Iceberg tables.
const Provider = "iceberg"

// Identity returns the table-identity of a resolved snapshot: "sha256:"
// and the lowercase hex SHA-256 of the UTF-8 text
//
//	"parqdb-iceberg-identity-v1\n" <table-uuid> "\n" <snapshot-id> "\n"
//
// followed, for each data file in ascending byte order of its key (the
// path relative to the table location), by
//
//	<len(key)> ":" <key> " " <file_size_in_bytes> " " <live_rows> "\n"
//
// where live_rows is the manifest's record_count minus the rows that
// row-level deletes remove from the file (record_count when none do; the
// rows source-files.json records).
// Iceberg never rewrites a data file in place, so the snapshot id with the
// file list is the exact source state; the list is included so that a
// reader that recomputes the identity also detects a catalog that serves a
// different table under the same UUID and snapshot id.
func (s *Snapshot) Identity() string {
	keys := make([]string, len(s.Files))
	sizes := make([]int64, len(s.Files))
	rows := make([]int64, len(s.Files))
	for i, f := range s.Files {
		keys[i], sizes[i], rows[i] = f.Key, f.Size, s.Rows[i]
		if bm := s.Deleted[f.Key]; bm != nil {
			rows[i] -= int64(bm.GetCardinality())
		}
	}
	return IdentityOf(s.TableUUID, s.SnapshotID, keys, sizes, rows)
}

// IdentityOf computes Snapshot.Identity from its parts: the data files'
// keys (in ascending byte order), sizes and live row counts.
func IdentityOf(tableUUID string, snapshotID int64, keys []string, sizes, rows []int64) string {
	h := sha256.New()
	fmt.Fprintf(h, "parqdb-iceberg-identity-v1\n%s\n%d\n", tableUUID, snapshotID)
	for i, k := range keys {
		fmt.Fprintf(h, "%d:%s %d %d\n", len(k), k, sizes[i], rows[i])
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// Properties returns the source-table properties of the snapshot (see
// CheckProperties): the reference, never the catalog's URI or credentials.
func (s *Snapshot) Properties() map[string]string {
	return map[string]string{
		"definition-version": "1",
		"location":           s.Ref.String(),
		"table-uuid":         s.TableUUID,
		"snapshot-id":        strconv.FormatInt(s.SnapshotID, 10),
		"table-identity":     s.Identity(),
	}
}

// CheckProperties validates the properties of an iceberg source
// table-definition: exactly definition-version "1"; location, a canonical
// iceberg://catalog/namespace…/table reference; table-uuid, a UUID in its
// canonical lowercase form; snapshot-id, a non-zero base-10 int64; and
// table-identity, "sha256:" and 64 lowercase hex digits. Errors wrap
// ErrProperties and name the property.
func CheckProperties(props map[string]string) error {
	const where = "source-table.properties"
	for k := range props {
		switch k {
		case "definition-version", "location", "table-uuid", "snapshot-id", "table-identity":
		default:
			return fmt.Errorf("%w: %s: unknown property %q", ErrProperties, where, k)
		}
	}
	if v := props["definition-version"]; v != "1" {
		return fmt.Errorf("%w: %s.definition-version: %q, want \"1\"", ErrProperties, where, v)
	}
	ref, err := ParseRef(props["location"])
	if err != nil {
		return fmt.Errorf("%w: %s.location: %v", ErrProperties, where, err)
	}
	if ref.String() != props["location"] {
		return fmt.Errorf("%w: %s.location: %q is not canonical (%q)", ErrProperties, where, props["location"], ref.String())
	}
	if u, err := uuid.Parse(props["table-uuid"]); err != nil || u.String() != props["table-uuid"] {
		return fmt.Errorf("%w: %s.table-uuid: %q is not a lowercase hyphenated UUID", ErrProperties, where, props["table-uuid"])
	}
	if n, err := strconv.ParseInt(props["snapshot-id"], 10, 64); err != nil || n == 0 || strconv.FormatInt(n, 10) != props["snapshot-id"] {
		return fmt.Errorf("%w: %s.snapshot-id: %q is not a non-zero base-10 64-bit integer", ErrProperties, where, props["snapshot-id"])
	}
	id := props["table-identity"]
	h, ok := strings.CutPrefix(id, "sha256:")
	if _, err := hex.DecodeString(h); !ok || len(h) != 64 || strings.ToLower(h) != h || err != nil {
		return fmt.Errorf("%w: %s.table-identity: %q is not sha256:<64 lowercase hex>", ErrProperties, where, id)
	}
	return nil
}

// SnapshotID returns the snapshot-id property of checked properties.
func SnapshotID(props map[string]string) int64 {
	n, _ := strconv.ParseInt(props["snapshot-id"], 10, 64)
	return n
}
