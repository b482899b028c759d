package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/server/serving"
)

// ArrowStreamType is the media type of an Arrow IPC stream, which a
// search answers with when the request's Accept header names it.
const ArrowStreamType = "application/vnd.apache.arrow.stream"

// QueryField is the first column of an Arrow search answer: the position
// of the row's query vector in the request (0 for a single query).
const QueryField = "_query"

// wantsArrow reports whether the Accept header asks for an Arrow stream
// and prefers it to JSON (a higher or equal q than application/json and
// */*). JSON stays the default.
func wantsArrow(r *http.Request) bool {
	arrowQ, jsonQ := -1.0, -1.0
	for _, h := range r.Header.Values("Accept") {
		for _, part := range strings.Split(h, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			q := 1.0
			if v, ok := params["q"]; ok {
				if f, err := strconv.ParseFloat(v, 64); err == nil {
					q = f
				}
			}
			switch mt {
			case ArrowStreamType:
				arrowQ = max(arrowQ, q)
			case "application/json", "application/*", "*/*":
				jsonQ = max(jsonQ, q)
			}
		}
	}
	return arrowQ > 0 && arrowQ >= jsonQ
}

// arrowBatchRows is the most rows one record batch of an Arrow answer
// holds: the encoder builds one batch at a time, so its Arrow arrays add
// at most this many rows to the answer's memory.
const arrowBatchRows = 4096

// encodeArrow writes resp as an Arrow IPC stream: record batches of at
// most arrowBatchRows rows with the columns _query (int32), resp.Columns'
// source columns and _distance (float32), and the index name and snapshot
// id as schema metadata. A column's type comes from its first non-null
// value (as the SQL engine types them); values Arrow has no type for are
// JSON text. Like encodeResponseTo it looks at ctx's deadline every
// encodeCheckRows rows (answering timeout) and drops each query's rows
// from resp once they are encoded.
func encodeArrow(ctx context.Context, resp *SearchResponse) ([]byte, error) {
	mem := memory.DefaultAllocator
	fields := []arrow.Field{{Name: QueryField, Type: arrow.PrimitiveTypes.Int32}}
	for _, name := range resp.Columns {
		if ctx.Err() != nil {
			return nil, serving.TimeoutError(ctx, "encoding the answer")
		}
		dt := arrowTypeSeq(func(yield func(any) bool) {
			for _, rows := range resp.Results {
				for _, r := range rows {
					if !yield(r.Value(name)) {
						return
					}
				}
			}
		})
		fields = append(fields, arrow.Field{Name: name, Type: dt, Nullable: name != metadata.ReservedField})
	}
	md := arrow.NewMetadata([]string{"index", "snapshot_id"}, []string{resp.Index, strconv.FormatInt(resp.SnapshotID, 10)})
	schema := arrow.NewSchema(fields, &md)
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	rb := array.NewRecordBuilder(mem, schema)
	defer rb.Release()
	rows, n := 0, 0
	flush := func() error {
		rec := rb.NewRecordBatch()
		defer rec.Release()
		rows = 0
		return w.Write(rec)
	}
	for qi, hits := range resp.Results {
		for _, r := range hits {
			if n%encodeCheckRows == 0 && ctx.Err() != nil {
				return nil, serving.TimeoutError(ctx, "encoding the answer")
			}
			n++
			rb.Field(0).(*array.Int32Builder).Append(int32(qi))
			for c, name := range resp.Columns {
				if err := appendValue(rb.Field(c+1), r.Value(name)); err != nil {
					return nil, fmt.Errorf("query %d column %s: %w", qi, name, err)
				}
			}
			if rows++; rows == arrowBatchRows {
				if err := flush(); err != nil {
					return nil, err
				}
			}
		}
		resp.Results[qi] = nil
	}
	if rows > 0 || n == 0 {
		if err := flush(); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, serving.TimeoutError(ctx, "encoding the answer")
	}
	return buf.Bytes(), nil
}

// arrowTypeSeq is the Arrow type of a column with the values of seq,
// from its first non-null value; a list's element type comes from the
// first non-null element of any of its lists. It reads seq only as far
// as it needs.
func arrowTypeSeq(seq iter.Seq[any]) arrow.DataType {
	var first any
	for v := range seq {
		if v != nil {
			first = v
			break
		}
	}
	switch first.(type) {
	case nil, string:
		return arrow.BinaryTypes.String
	case bool:
		return arrow.FixedWidthTypes.Boolean
	case int8:
		return arrow.PrimitiveTypes.Int8
	case int16:
		return arrow.PrimitiveTypes.Int16
	case int32:
		return arrow.PrimitiveTypes.Int32
	case int64, int:
		return arrow.PrimitiveTypes.Int64
	case uint8:
		return arrow.PrimitiveTypes.Uint8
	case uint16:
		return arrow.PrimitiveTypes.Uint16
	case uint32:
		return arrow.PrimitiveTypes.Uint32
	case uint64:
		return arrow.PrimitiveTypes.Uint64
	case float32:
		return arrow.PrimitiveTypes.Float32
	case float64:
		return arrow.PrimitiveTypes.Float64
	case []byte:
		return arrow.BinaryTypes.Binary
	case time.Time:
		return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	case []any:
		return arrow.ListOf(arrowTypeSeq(func(yield func(any) bool) {
			for v := range seq {
				if l, ok := v.([]any); ok {
					for _, e := range l {
						if !yield(e) {
							return
						}
					}
				}
			}
		}))
	}
	return arrow.BinaryTypes.String
}

// appendValue appends v to b, whose type arrowType chose; a value of
// another type than the column's first (a source whose files disagree)
// becomes its JSON text in a string column, else an error.
func appendValue(b array.Builder, v any) error {
	if v == nil {
		b.AppendNull()
		return nil
	}
	ok := true
	switch b := b.(type) {
	case *array.StringBuilder:
		if s, isStr := v.(string); isStr {
			b.Append(s)
		} else {
			j, err := json.Marshal(v)
			if err != nil {
				return err
			}
			b.Append(string(j))
		}
	case *array.BooleanBuilder:
		x, k := v.(bool)
		ok = k
		b.Append(x)
	case *array.Int8Builder:
		x, k := v.(int8)
		ok = k
		b.Append(x)
	case *array.Int16Builder:
		x, k := v.(int16)
		ok = k
		b.Append(x)
	case *array.Int32Builder:
		x, k := v.(int32)
		ok = k
		b.Append(x)
	case *array.Int64Builder:
		switch x := v.(type) {
		case int64:
			b.Append(x)
		case int:
			b.Append(int64(x))
		default:
			ok = false
		}
	case *array.Uint8Builder:
		x, k := v.(uint8)
		ok = k
		b.Append(x)
	case *array.Uint16Builder:
		x, k := v.(uint16)
		ok = k
		b.Append(x)
	case *array.Uint32Builder:
		x, k := v.(uint32)
		ok = k
		b.Append(x)
	case *array.Uint64Builder:
		x, k := v.(uint64)
		ok = k
		b.Append(x)
	case *array.Float32Builder:
		x, k := v.(float32)
		ok = k
		b.Append(x)
	case *array.Float64Builder:
		x, k := v.(float64)
		ok = k
		b.Append(x)
	case *array.BinaryBuilder:
		x, k := v.([]byte)
		ok = k
		b.Append(x)
	case *array.TimestampBuilder:
		x, k := v.(time.Time)
		ok = k
		b.Append(arrow.Timestamp(x.UnixMicro()))
	case *array.ListBuilder:
		l, k := v.([]any)
		if !k {
			return fmt.Errorf("value %v is not a list", v)
		}
		b.Append(true)
		for _, e := range l {
			if err := appendValue(b.ValueBuilder(), e); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("no Arrow builder for %T", v)
	}
	if !ok {
		return fmt.Errorf("value %v (%T) differs in type from the column's first value", v, v)
	}
	return nil
}
