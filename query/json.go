package query

import "github.com/parqdb/parqdb/query/rowjson"

// JSONRows returns the hits of r as rows of its columns in their JSON
// form (rowjson.Row), sharing r's keys and values.
func (r *Result) JSONRows() []rowjson.Row {
	rows := make([]rowjson.Row, len(r.Hits))
	for i := range r.Hits {
		h := &r.Hits[i]
		rows[i] = rowjson.Row{Columns: r.Columns, Key: h.Key, Values: h.Row, Distance: h.Distance}
	}
	return rows
}
