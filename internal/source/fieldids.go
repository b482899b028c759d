package source

import (
	"strings"

	"github.com/parquet-go/parquet-go"
)

// BindFieldIDs binds top-level fields by Parquet field id rather than by
// name, for a provider whose schema evolves by field id (an Iceberg table
// whose columns were renamed, docs/iceberg.md §3.4): ids maps each name
// under which the table presents a field (its current name, and former
// names that no current field took) to the field id. In every file, a name
// of ids then means the top-level column with that field id, whatever the
// file calls it; a file without such a column lacks the field, even if a
// column of another field id has the name. Names outside ids, and files
// written without field ids (id 0), are matched by name. Every reader
// (Check, the scans, ScanColumns, ReadRows) follows the binding: ReadRows
// returns the columns under the requested names. current lists the
// table's current field names: Schema returns the schema of the first
// file that calls those fields by them. It must be called right after the
// table is opened, before any other use.
func (t *Table) BindFieldIDs(ids map[string]int, current []string) {
	t.current = current
	for _, f := range t.files {
		byID := map[int]string{}
		byName := map[string]int{}
		for _, c := range f.pf.Root().Columns() {
			if c.ID() != 0 {
				byID[c.ID()] = c.Name()
			}
			byName[c.Name()] = c.ID()
		}
		for name, id := range ids {
			col, ok := byID[id]
			switch {
			case ok && col != name:
				f.names = setName(f.names, name, col)
			case !ok && byName[name] != 0 && byName[name] != id:
				f.names = setName(f.names, name, "") // the name is another field's here
			}
		}
	}
}

func setName(m map[string]string, name, col string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[name] = col
	return m
}

// colName is the name in the file of the field the table calls name ("" if
// the file lacks it).
func (f *tableFile) colName(name string) string {
	if col, ok := f.names[name]; ok {
		return col
	}
	return name
}

// column returns the file's top-level column of the field the table calls
// name, or nil.
func (f *tableFile) column(name string) *parquet.Column {
	col := f.colName(name)
	if col == "" {
		return nil
	}
	return f.pf.Root().Column(col)
}

// missingField is the Detail of an ErrMissingField error about file f:
// it lists the top-level fields the file has, under the table's names, so
// that a typo in a field name shows the right one.
func (f *tableFile) missingField() string {
	byCol := map[string]string{}
	for name, col := range f.names {
		if col != "" {
			byCol[col] = name
		}
	}
	cols := f.pf.Root().Columns()
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name()
		if n, ok := byCol[c.Name()]; ok {
			names[i] = n
		}
	}
	return "no such top-level field (the file's fields: " + strings.Join(names, ", ") + ")"
}

// schemaFile is the file whose schema Schema returns: the first one that
// calls the table's current fields (BindFieldIDs) by their names, else the
// first.
func (t *Table) schemaFile() *tableFile {
next:
	for _, f := range t.files {
		for _, name := range t.current {
			if f.colName(name) != name {
				continue next
			}
		}
		return f
	}
	return t.files[0]
}

// renamedField presents a column under the name the table gives it.
type renamedField struct {
	parquet.Field
	name string
}

func (r renamedField) Name() string { return r.name }
