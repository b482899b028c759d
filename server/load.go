package server

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/parqdb/parqdb/server/serving"

	"github.com/parqdb/parqdb/query/rowjson"
)

// queries is the number of query vectors the plan searches.
func (p *searchPlan) queries() int {
	if p.key != nil {
		return 1
	}
	return len(p.vectors)
}

// respBufs holds answer buffers for reuse (an answer of 10 GloVe rows is
// ~10 KB: growing a fresh buffer to that size was the handler's largest
// allocation). Buffers above maxPooledResp are left to the collector.
var respBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledResp = 1 << 20

// encodeResponseTo encodes resp as one JSON line into b (reset first), as
// writeJSON would, checking ctx every encodeCheckRows rows: encoding a
// large answer is part of the request's time limit. Rows are released as
// they are encoded, so the answer is held about once, not twice, at the
// end. The answer is b's bytes.
func encodeResponseTo(ctx context.Context, b *bytes.Buffer, resp *SearchResponse) ([]byte, error) {
	b.Reset()
	out := b.AvailableBuffer()
	out = append(out, `{"index":`...)
	out = rowjson.AppendString(out, resp.Index, false)
	out = append(out, `,"snapshot_id":`...)
	out = strconv.AppendInt(out, resp.SnapshotID, 10)
	out = append(out, `,"columns":`...)
	if resp.Columns == nil {
		out = append(out, "null"...)
	} else {
		out = append(out, '[')
		for i, c := range resp.Columns {
			if i > 0 {
				out = append(out, ',')
			}
			out = rowjson.AppendString(out, c, false)
		}
		out = append(out, ']')
	}
	b.Write(out)
	b.WriteString(`,"results":[`)
	n := 0
	for i, rows := range resp.Results {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('[')
		for j, row := range rows {
			if n%encodeCheckRows == 0 && ctx.Err() != nil {
				return nil, serving.TimeoutError(ctx, "encoding the answer")
			}
			n++
			if j > 0 {
				b.WriteByte(',')
			}
			var data []byte
			var err error
			if resp.rows != nil {
				data, err = resp.rows.appendRow(b.AvailableBuffer(), row)
			} else {
				data, err = row.AppendJSON(b.AvailableBuffer())
			}
			if err != nil {
				return nil, fmt.Errorf("encode query %d row %d: %w", i, j, err)
			}
			b.Write(data)
		}
		b.WriteByte(']')
		resp.Results[i] = nil
	}
	b.WriteString(`],"stats":`)
	b.Write(resp.Stats.appendJSON(b.AvailableBuffer()))
	b.WriteString("}\n")
	if ctx.Err() != nil {
		return nil, serving.TimeoutError(ctx, "encoding the answer")
	}
	return b.Bytes(), nil
}

// encodeCheckRows is how many rows encodeResponse encodes between two
// looks at the deadline.
const encodeCheckRows = 256

// writeTimeFloor and writeRate bound the time writeBody expects a body
// to take on a local network: when less remains before the deadline,
// the answer is 504 rather than a 200 that the deadline would cut.
const (
	writeTimeFloor = 20 * time.Millisecond
	writeRate      = 200 << 20 // bytes per second
)

// writeBody writes a 200 answer whose body (of contentType) is already encoded, within
// the request's deadline. When too little time remains to send the body
// (writeTimeFloor + len(body) at writeRate) the answer is 504 timeout
// instead. A client that reads too slowly has its connection closed at
// the deadline: the answer is then cut short (the status line has gone
// out; the client gets fewer bytes than Content-Length).
func writeBody(ctx context.Context, w http.ResponseWriter, rc *http.ResponseController, body []byte, contentType string) error {
	if d, ok := ctx.Deadline(); ok {
		need := writeTimeFloor + time.Duration(float64(len(body))/writeRate*float64(time.Second))
		if err := ctx.Err(); err != nil || time.Until(d) < need {
			return serving.TimeoutError(ctx, "writing the answer")
		}
		_ = rc.SetWriteDeadline(d)
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	hc := heldConnOf(ctx)
	if hc == nil || len(body) <= heldMin || len(body) > maxHeld {
		w.WriteHeader(http.StatusOK)
		_, err := w.Write(body)
		return err
	}
	// The header and the body leave in one write call (heldConn).
	hc.hold()
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(body)
	if err == nil {
		err = rc.Flush()
	}
	if serr := hc.send(); err == nil {
		err = serr
	}
	return err
}

// heldMin is the body size above which writeBody holds the answer to
// send it in one write: net/http's own buffer takes a smaller body with
// its header.
const heldMin = 2 << 10

// httpTimeout answers every timeout over HTTP with 504, whatever status
// serving.AsError gave it: the server, not the client, ran out of time.
func httpTimeout(e *serving.Error) *serving.Error {
	if e.Code == serving.CodeTimeout && e.Status != http.StatusGatewayTimeout {
		c := *e
		c.Status = http.StatusGatewayTimeout
		return &c
	}
	return e
}
