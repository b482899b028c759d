//go:build duckdb

package sqlengine

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/apache/arrow-go/v18/arrow"
)

// Print runs statement and writes its result to w as a table, JSON Lines
// (one object per row, members in column order) or CSV with a header.
func (e *Engine) Print(ctx context.Context, statement string, w io.Writer, format string) error {
	rr, err := e.Query(ctx, statement)
	if err != nil {
		return err
	}
	defer rr.Release()
	fields := rr.Schema().Fields()
	var (
		tw *tabwriter.Writer
		cw *csv.Writer
	)
	switch format {
	case "table":
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for i, f := range fields {
			if i > 0 {
				fmt.Fprint(tw, "\t")
			}
			fmt.Fprint(tw, f.Name)
		}
		fmt.Fprintln(tw)
	case "csv":
		cw = csv.NewWriter(w)
		hdr := make([]string, len(fields))
		for i, f := range fields {
			hdr[i] = f.Name
		}
		cw.Write(hdr)
	case "json":
	default:
		return fmt.Errorf("format %q: want table, json or csv", format)
	}
	for rr.Next() {
		rec := rr.RecordBatch()
		for r := 0; r < int(rec.NumRows()); r++ {
			switch format {
			case "json":
				if err := writeJSONRow(w, fields, rec, r); err != nil {
					return err
				}
			case "csv":
				rowText := make([]string, len(fields))
				for c := range fields {
					rowText[c] = cellText(rec.Column(c), r)
				}
				cw.Write(rowText)
			default:
				for c := range fields {
					if c > 0 {
						fmt.Fprint(tw, "\t")
					}
					fmt.Fprint(tw, abbreviate(cellText(rec.Column(c), r)))
				}
				fmt.Fprintln(tw)
			}
		}
	}
	if err := rr.Err(); err != nil {
		return err
	}
	switch {
	case tw != nil:
		return tw.Flush()
	case cw != nil:
		cw.Flush()
		return cw.Error()
	}
	return nil
}

func cellText(a arrow.Array, i int) string {
	if a.IsNull(i) {
		return ""
	}
	v := a.GetOneForMarshal(i)
	switch x := v.(type) {
	case string:
		return x
	case json.RawMessage:
		return string(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return a.ValueStr(i)
	}
	return string(b)
}

func abbreviate(s string) string {
	if len(s) > 60 && strings.HasPrefix(s, "[") {
		return s[:50] + "…]"
	}
	return s
}

func writeJSONRow(w io.Writer, fields []arrow.Field, rec arrow.RecordBatch, r int) error {
	var b strings.Builder
	b.WriteByte('{')
	for c, f := range fields {
		if c > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.Name)
		b.Write(k)
		b.WriteByte(':')
		col := rec.Column(c)
		var v any
		if !col.IsNull(r) {
			v = col.GetOneForMarshal(r)
		}
		enc, err := json.Marshal(v)
		if err != nil {
			return err
		}
		b.Write(enc)
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}
