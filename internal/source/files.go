package source

import (
	"context"
	"fmt"
	"maps"
	"sort"

	"github.com/parqdb/parqdb/storage"
)

// Definition is the source-table definition a provider other than parquet
// records for a Table it opened: its provider name and non-secret
// properties (location and table-identity among them).
type Definition struct {
	Provider   string
	Properties map[string]string
}

// OpenFiles opens a table whose data files a provider listed itself (an
// Iceberg snapshot's data files, say) rather than a folder listing: infos
// are keys in b with their sizes. It reads every footer, like Open, and
// checks that each file has the size infos gives and, when rows is not
// nil, rows[i] rows (ErrCorrupt naming the file otherwise). The table's
// Identity is def.Properties["table-identity"] and Definition returns def,
// so that builds record the provider's definition. desc names the table in
// messages.
func OpenFiles(ctx context.Context, b storage.Bucket, desc string, infos []storage.Info, rows []int64, def Definition) (*Table, error) {
	if len(infos) == 0 {
		return nil, &Error{Source: desc, Row: -1, Rule: ErrEmpty, Detail: "no data files"}
	}
	if rows != nil && len(rows) != len(infos) {
		return nil, fmt.Errorf("source %s: %d row counts for %d files", desc, len(rows), len(infos))
	}
	order := make([]int, len(infos))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(i, j int) bool { return infos[order[i]].Key < infos[order[j]].Key })
	sorted := make([]storage.Info, len(infos))
	for i, o := range order {
		sorted[i] = infos[o]
	}
	def.Properties = maps.Clone(def.Properties)
	t := &Table{bucket: b, desc: desc, def: &def, identity: def.Properties["table-identity"]}
	if err := t.openAll(ctx, sorted); err != nil {
		return nil, err
	}
	for i, o := range order {
		f := t.files[i]
		if f.Size != sorted[i].Size {
			_ = t.Close()
			return nil, &Error{Source: desc, File: f.Key, Row: -1, Rule: ErrCorrupt,
				Detail: fmt.Sprintf("%d bytes, the table's metadata says %d", f.Size, sorted[i].Size)}
		}
		if rows != nil && f.Rows != rows[o] {
			_ = t.Close()
			return nil, &Error{Source: desc, File: f.Key, Row: -1, Rule: ErrCorrupt,
				Detail: fmt.Sprintf("%d rows, the table's metadata says %d", f.Rows, rows[o])}
		}
	}
	return t, nil
}

// Definition returns the source-table definition of a table opened by
// OpenFiles (a copy), or nil for a table opened by Open, whose definition
// is the parquet provider's (location and Identity).
func (t *Table) Definition() *Definition {
	if t.def == nil {
		return nil
	}
	d := Definition{Provider: t.def.Provider, Properties: maps.Clone(t.def.Properties)}
	return &d
}
