package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/parqdb/parqdb/filter"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/server/serving"
)

// SearchRequest is the body of POST /v1/indexes/{name}/search. Exactly
// one of Vector, Vectors and Key is given.
type SearchRequest struct {
	// Vector is one query vector.
	Vector []float64 `json:"vector,omitempty"`
	// Vectors are several query vectors, answered in order.
	Vectors [][]float64 `json:"vectors,omitempty"`
	// Key searches near the source row with this key: one JSON scalar
	// per key field (a bare scalar for a one-field key), the form
	// `parqdb search --near-key-json` takes (query.KeyTextsJSON); a binary
	// or non-UTF-8 value as {"base64": "…"}, the form search answers give it.
	Key json.RawMessage `json:"key,omitempty"`
	// K, NProbe and Refine are query.Options' fields; nil selects the
	// defaults 10, 8 and 0.
	K      *int `json:"k,omitempty"`
	NProbe *int `json:"nprobe,omitempty"`
	Refine *int `json:"refine,omitempty"`
	// Recall is a target recall@k in (0, 1] that chooses nprobe and
	// refine from the index's calibration (query.Options.Recall); it
	// excludes NProbe and Refine.
	Recall *float64 `json:"recall,omitempty"`
	// Columns selects the source columns (nil: all of them).
	Columns []string `json:"columns,omitempty"`
	// KeysOnly returns only the key columns (no join).
	KeysOnly bool `json:"keys_only,omitempty"`
	// Snapshot selects a retained snapshot (nil or 0: the current one).
	Snapshot *int64 `json:"snapshot,omitempty"`
	// TimeoutMS lowers the request's time limit below the server's.
	TimeoutMS *int64 `json:"timeout_ms,omitempty"`
	// Where restricts the search to source rows for which this predicate
	// is true (parqdb search --where; docs/search.md).
	Where string `json:"where,omitempty"`
}

// searchPlan is a decoded, checked request, ready to run on an index.
type searchPlan struct {
	vectors  [][]float64
	key      []string
	opts     query.Options
	snapshot int64
	timeout  time.Duration
}

// decodeSearch reads a search request from r.Body into req, strictly:
// unknown fields (names match exactly, case included), a field given
// twice (at any depth), trailing data and bodies over limit are errors.
// The common small shape (decodeSearchFast) skips the strict decoder,
// which gives the same request for it.
func decodeSearch(w http.ResponseWriter, r *http.Request, limit int64, req *SearchRequest) error {
	buf, err := readJSONBody(w, r, limit)
	if err != nil {
		return err
	}
	defer putBodyBuf(buf)
	if decodeSearchFast(buf.Bytes(), req) {
		return nil
	}
	return decodeStrict(buf.Bytes(), req)
}

// bodyBufs holds request body buffers for reuse: nothing decoded from a
// body keeps its bytes (json.RawMessage copies).
var bodyBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledBody = 64 << 10

func putBodyBuf(b *bytes.Buffer) {
	if b.Cap() <= maxPooledBody {
		bodyBufs.Put(b)
	}
}

// readJSONBody checks the Content-Type and reads the body (at most limit
// bytes, not empty) into a buffer from bodyBufs (putBodyBuf it).
func readJSONBody(w http.ResponseWriter, r *http.Request, limit int64) (*bytes.Buffer, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" && ct != "application/json" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return nil, serving.Errorf(http.StatusUnsupportedMediaType, serving.CodeUnsupportedMediaType, "Content-Type %q: send application/json", ct)
		}
	}
	buf := bodyBufs.Get().(*bytes.Buffer)
	buf.Reset()
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, limit)); err != nil {
		putBodyBuf(buf)
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, serving.Errorf(http.StatusRequestEntityTooLarge, serving.CodeBodyTooLarge, "the body exceeds %d bytes", mbe.Limit)
		}
		return nil, serving.Errorf(http.StatusBadRequest, serving.CodeMalformedJSON, "read body: %v", err)
	}
	if len(bytes.TrimSpace(buf.Bytes())) == 0 {
		putBodyBuf(buf)
		return nil, serving.Errorf(http.StatusBadRequest, serving.CodeMalformedJSON, "the body is empty: send a JSON object")
	}
	return buf, nil
}

// decodeStrict decodes body into v (a pointer to a struct) as
// decodeSearch describes.
func decodeStrict(body []byte, v any) error {
	if err := checkMembers(body, v); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(body, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return serving.Errorf(http.StatusBadRequest, serving.CodeMalformedJSON, "unexpected data after the JSON object")
	}
	return nil
}

// decodeSearchFast decodes the common small request shape without the
// strict decoder: one JSON object whose members are "key" (a string of
// printable ASCII without escapes), "k", "nprobe" and "refine" (integers
// 0–999999999 without sign, fraction or exponent), each at most once, in
// any order, with JSON white space between tokens and after the object.
// It reports whether body had that shape; if not, req is unchanged and
// the strict path decides (and words any error). For a body it accepts,
// the strict path accepts it too and gives the same request
// (FuzzDecodeSearchFast checks this).
func decodeSearchFast(body []byte, req *SearchRequest) bool {
	var out SearchRequest
	var ints [3]int // k, nprobe, refine
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return false
	}
	i = skipSpace(body, i+1)
	if i < len(body) && body[i] == '}' {
		return false // {} is an error the strict path words
	}
	for {
		name, next, ok := simpleString(body, i)
		if !ok {
			return false
		}
		i = skipSpace(body, next)
		if i >= len(body) || body[i] != ':' {
			return false
		}
		i = skipSpace(body, i+1)
		switch string(name) {
		case "key":
			if out.Key != nil {
				return false
			}
			_, next, ok := simpleString(body, i)
			if !ok {
				return false
			}
			out.Key = json.RawMessage(bytes.Clone(body[i:next]))
			i = next
		case "k", "nprobe", "refine":
			j, dst := 0, &out.K
			switch string(name) {
			case "nprobe":
				j, dst = 1, &out.NProbe
			case "refine":
				j, dst = 2, &out.Refine
			}
			if *dst != nil {
				return false
			}
			n, next, ok := simpleInt(body, i)
			if !ok {
				return false
			}
			ints[j] = n
			*dst = &ints[j]
			i = next
		default:
			return false
		}
		i = skipSpace(body, i)
		if i >= len(body) {
			return false
		}
		if body[i] == '}' {
			break
		}
		if body[i] != ',' {
			return false
		}
		i = skipSpace(body, i+1)
	}
	if skipSpace(body, i+1) != len(body) {
		return false
	}
	*req = out
	return true
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// simpleString returns the contents of the JSON string at b[i] and the
// index after it, if it holds only printable ASCII and no escape.
func simpleString(b []byte, i int) ([]byte, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return b[i+1 : j], j + 1, true
		case c == '\\' || c < 0x20 || c >= 0x7f:
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// simpleInt returns the JSON integer at b[i] (at most 9 digits, no sign)
// and the index after it; a fraction or exponent after the digits is not
// simple.
func simpleInt(b []byte, i int) (int, int, bool) {
	j, n := i, 0
	for j < len(b) && j-i < 10 && b[j] >= '0' && b[j] <= '9' {
		n = n*10 + int(b[j]-'0')
		j++
	}
	switch {
	case j == i || j-i > 9:
		return 0, 0, false
	case b[i] == '0' && j-i > 1: // a leading zero is not JSON
		return 0, 0, false
	case j < len(b) && (b[j] == '.' || b[j] == 'e' || b[j] == 'E'):
		return 0, 0, false
	}
	return n, j, true
}

// jsonError turns a decoding error into an API error that says where.
func jsonError(body []byte, err error) *serving.Error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		rest := body[max(se.Offset-1, 0):]
		for _, tok := range []string{"NaN", "Infinity", "-Infinity", "+Infinity"} {
			if bytes.HasPrefix(rest, []byte(tok)) {
				return serving.Errorf(http.StatusBadRequest, serving.CodeInvalidVector,
					"%s at byte %d: vector values must be finite numbers (NaN and Infinity are not JSON numbers)", tok, se.Offset)
			}
		}
		return serving.Errorf(http.StatusBadRequest, serving.CodeMalformedJSON, "invalid JSON at byte %d: %v", se.Offset, err)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return serving.Errorf(http.StatusBadRequest, serving.CodeMalformedJSON, "the JSON body ends early")
	case errors.As(err, &te):
		if strings.HasPrefix(te.Field, "vector") && te.Type.Kind() == reflectFloat64 {
			return serving.Errorf(http.StatusBadRequest, serving.CodeInvalidVector, "field %s: %s is not a finite float32 number", te.Field, te.Value)
		}
		return serving.Errorf(http.StatusBadRequest, serving.CodeInvalidArgument, "field %s: want %s, got %s", te.Field, te.Type, te.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field"):
		return serving.Errorf(http.StatusBadRequest, serving.CodeInvalidArgument, "%s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return serving.Errorf(http.StatusBadRequest, serving.CodeMalformedJSON, "%v", err)
}

// plan checks the request against the limits (but not yet against an
// index).
func (req *SearchRequest) plan(l serving.Limits) (*searchPlan, error) {
	given := 0
	if req.Vector != nil {
		given++
	}
	if req.Vectors != nil {
		given++
	}
	if req.Key != nil {
		given++
	}
	if given != 1 {
		return nil, serving.Errorf(http.StatusBadRequest, serving.CodeInvalidArgument, "give exactly one of vector, vectors or key")
	}
	p := &searchPlan{timeout: l.Timeout}
	switch {
	case req.Vector != nil:
		p.vectors = [][]float64{req.Vector}
	case req.Vectors != nil:
		if len(req.Vectors) == 0 {
			return nil, serving.Errorf(http.StatusBadRequest, serving.CodeInvalidArgument, "vectors is empty")
		}
		if len(req.Vectors) > l.MaxBatch {
			return nil, serving.Errorf(http.StatusBadRequest, serving.CodeOutOfRange, "%d vectors exceed the batch limit of %d", len(req.Vectors), l.MaxBatch)
		}
		p.vectors = req.Vectors
	default:
		k, err := keyTexts(req.Key)
		if err != nil {
			return nil, err
		}
		p.key = k
	}
	opts, err := l.CheckOptions(req.K, req.NProbe, req.Refine)
	if err != nil {
		return nil, err
	}
	if opts, err = l.CheckRecall(opts, req.Recall, req.NProbe, req.Refine); err != nil {
		return nil, err
	}
	if req.Columns != nil {
		seen := map[string]bool{}
		for _, c := range req.Columns {
			if c == metadata.ReservedField {
				return nil, serving.Errorf(http.StatusBadRequest, serving.CodeInvalidArgument, "columns: %s is always returned; do not list it", c)
			}
			if seen[c] {
				return nil, serving.Errorf(http.StatusBadRequest, serving.CodeInvalidArgument, "columns: %q is listed twice", c)
			}
			seen[c] = true
		}
		opts.Columns = slices.Clone(req.Columns)
	}
	opts.KeysOnly = req.KeysOnly
	if req.Where != "" {
		if opts.Filter, err = filter.Parse(req.Where); err != nil {
			return nil, serving.AsError(err)
		}
	}
	p.opts = opts
	if req.Snapshot != nil {
		if *req.Snapshot < 0 {
			return nil, serving.Errorf(http.StatusBadRequest, serving.CodeOutOfRange, "snapshot = %d is negative", *req.Snapshot)
		}
		p.snapshot = *req.Snapshot
	}
	if req.TimeoutMS != nil {
		// Compared in milliseconds before the conversion: a product past
		// the range of time.Duration would wrap.
		ms, most := *req.TimeoutMS, l.Timeout.Milliseconds()
		if ms < 1 || ms > most {
			return nil, serving.Errorf(http.StatusBadRequest, serving.CodeOutOfRange, "timeout_ms = %d is outside [1, %d]", ms, most)
		}
		p.timeout = time.Duration(ms) * time.Millisecond
	}
	return p, nil
}

// keyTexts turns the request's "key" (a JSON scalar, or an array of one
// scalar per key field: query.KeyTextsJSON, the form parqdb search
// --near-key-json takes) into key texts.
func keyTexts(raw json.RawMessage) ([]string, error) {
	texts, err := query.KeyTextsJSON(raw)
	if err != nil {
		return nil, serving.Errorf(http.StatusBadRequest, serving.CodeInvalidArgument, "%s", strings.TrimPrefix(err.Error(), query.ErrBadQuery.Error()+": "))
	}
	return texts, nil
}

// queryVectors converts the plan's vectors to float32 for ix, checking
// dimension, finiteness and (cosine) non-zero norm.
func (p *searchPlan) queryVectors(ix *query.Index) ([][]float32, error) {
	out := make([][]float32, len(p.vectors))
	for i, v := range p.vectors {
		where := "vector"
		if len(p.vectors) > 1 {
			where = fmt.Sprintf("vectors[%d]", i)
		}
		if err := serving.CheckDim(where, len(v), ix.Dim(), ix.Name()); err != nil {
			return nil, err
		}
		f := make([]float32, len(v))
		for j, x := range v {
			f[j] = float32(x) // beyond float32's range: ±Inf, refused below
		}
		if p := serving.VectorProblem(f, ix.Snapshot().Metric == metadata.MetricCosine); p != "" {
			return nil, serving.InvalidVector(where, p)
		}
		out[i] = f
	}
	return out, nil
}

// checkColumns checks the requested columns against the index's source.
func (p *searchPlan) checkColumns(ix *query.Index) error {
	if p.opts.Columns == nil {
		return nil
	}
	have := ix.Columns()
	for _, c := range p.opts.Columns {
		if !slices.Contains(have, c) {
			return serving.Errorf(http.StatusBadRequest, serving.CodeUnknownColumn, "column %q is not in the source of index %q (columns: %s)", c, ix.Name(), strings.Join(have, ", "))
		}
	}
	return nil
}
