package query

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/parqdb/parqdb/internal/source"
	"github.com/parqdb/parqdb/ivf"
	"github.com/parqdb/parqdb/query/rowjson"
)

// ParseKey parses one text value per source key field into Parquet values:
// booleans as true/false, integers in base 10, strings as given, binary and
// fixed values as hex with a 0x prefix (or the raw text), dates as
// YYYY-MM-DD. For string, binary and fixed fields, a text that starts as
// a JSON object with the member "base64" is the lossless form
// {"base64": "…"} that JSON output gives binary and non-UTF-8 values
// (rowjson.ParseBinary), and must be exactly that; it is how a key whose bytes
// are not UTF-8 (or a string key that itself looks like that form) is
// given.
func (ix *Index) ParseKey(texts []string) ([]parquet.Value, error) {
	keys := ix.layout.Keys
	if len(texts) != len(keys) {
		return nil, fmt.Errorf("%w: the key has %d field(s) (%s), got %d value(s)", ErrBadQuery, len(keys), strings.Join(ix.snap.SourceKeyFields, ","), len(texts))
	}
	vals := make([]parquet.Value, len(keys))
	for i, k := range keys {
		v, err := parseKeyValue(k, texts[i])
		if err != nil {
			return nil, fmt.Errorf("%w: key field %q (%s): %v", ErrBadQuery, k.Name, k.TypeName(), err)
		}
		vals[i] = v.ParquetValue()
	}
	return vals, nil
}

func parseKeyValue(k source.KeyType, s string) (source.KeyValue, error) {
	kv := source.KeyValue{Kind: k.Kind}
	switch k.Kind {
	case source.KindBool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return kv, fmt.Errorf("%q is not true or false", s)
		}
		if b {
			kv.Int = 1
		}
	case source.KindInt32:
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return kv, fmt.Errorf("%q is not a 32-bit integer", s)
		}
		kv.Int = n
	case source.KindInt64:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return kv, fmt.Errorf("%q is not a 64-bit integer", s)
		}
		kv.Int = n
	case source.KindDate:
		t, err := time.Parse(time.DateOnly, s)
		if err != nil {
			return kv, fmt.Errorf("%q is not a YYYY-MM-DD date", s)
		}
		kv.Int = t.Unix() / 86400
	case source.KindString:
		kv.Bytes = []byte(s)
		if b, ok, err := rowjson.ParseBinary(s); ok {
			if err != nil {
				return kv, err
			}
			kv.Bytes = b
		}
	default:
		if b, ok, err := rowjson.ParseBinary(s); ok {
			if err != nil {
				return kv, err
			}
			kv.Bytes = b
		} else if h, ok := strings.CutPrefix(s, "0x"); ok {
			b, err := hex.DecodeString(h)
			if err != nil {
				return kv, fmt.Errorf("%q is not hex", s)
			}
			kv.Bytes = b
		} else {
			kv.Bytes = []byte(s)
		}
		if k.Kind == source.KindFixed && len(kv.Bytes) != k.Len {
			return kv, fmt.Errorf("%d bytes, want %d", len(kv.Bytes), k.Len)
		}
	}
	return kv, nil
}

// KeyTextsJSON parses the JSON form of a key into ParseKey's texts: a JSON
// scalar for a one-field key, or an array with one scalar per key field in
// key-field order. Strings are taken verbatim (so a key may hold commas or
// any other character), numbers as written, booleans as true/false. It is
// the one JSON key form, shared by the HTTP API's "key" field and
// `parqdb search --near-key-json`. Errors wrap ErrBadQuery.
func KeyTextsJSON(raw []byte) ([]string, error) {
	var vals []json.RawMessage
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return nil, fmt.Errorf("%w: the key is empty: give a JSON string, number or boolean, or an array of them", ErrBadQuery)
	}
	if s, ok := plainJSONString(t); ok { // the common case, decoded without a decoder
		return []string{s}, nil
	}
	if t[0] == '[' {
		if err := json.Unmarshal(t, &vals); err != nil {
			return nil, fmt.Errorf("%w: key: %v", ErrBadQuery, err)
		}
		if len(vals) == 0 {
			return nil, fmt.Errorf("%w: the key array is empty", ErrBadQuery)
		}
	} else {
		vals = []json.RawMessage{t}
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		var x any
		dec := json.NewDecoder(bytes.NewReader(v))
		dec.UseNumber()
		if err := dec.Decode(&x); err != nil {
			return nil, fmt.Errorf("%w: key value %d: %v", ErrBadQuery, i, err)
		}
		if dec.More() {
			return nil, fmt.Errorf("%w: key value %d: unexpected data after the JSON value", ErrBadQuery, i)
		}
		switch x := x.(type) {
		case string:
			out[i] = x
		case json.Number:
			out[i] = x.String()
		case bool:
			out[i] = strconv.FormatBool(x)
		case map[string]any:
			// The lossless form of binary and non-UTF-8 values, as JSON
			// output writes them; ParseKey decodes it.
			text := string(bytes.TrimSpace(v))
			if _, ok, err := rowjson.ParseBinary(text); !ok || err != nil {
				return nil, fmt.Errorf(`%w: key value %d: an object must be {"base64": "<standard base64>"}, got %s`, ErrBadQuery, i, text)
			}
			out[i] = text
		default:
			return nil, fmt.Errorf(`%w: key value %d: want a string, number, boolean or {"base64": "…"}`, ErrBadQuery, i)
		}
	}
	return out, nil
}

// plainJSONString returns the text of t if t is exactly one JSON string of
// printable ASCII without escapes (what encoding/json decodes it to).
func plainJSONString(t []byte) (string, bool) {
	if len(t) < 2 || t[0] != '"' || t[len(t)-1] != '"' {
		return "", false
	}
	for _, c := range t[1 : len(t)-1] {
		if c == '"' || c == '\\' || c < 0x20 || c >= 0x7f {
			return "", false
		}
	}
	return string(t[1 : len(t)-1]), true
}

// VectorOf returns the canonical vector (normalised under cosine) of the
// source row whose key is vals, for searching near an existing row.
//
// A key no indexed row has fails with ErrKeyNotIndexed naming the file
// when a file added to the source since the build has it (Stale), else
// with ErrKeyNotFound.
func (ix *Index) VectorOf(ctx context.Context, vals []parquet.Value) (_ []float32, err error) {
	defer func() { err = ix.staleOr(ctx, err) }()
	ki, err := ix.keys(ctx)
	if err != nil {
		return nil, fmt.Errorf("index %q: key index: %w", ix.name, err)
	}
	loc, ok, err := ki.LookupValues(vals)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadQuery, err)
	}
	if !ok {
		if err := ix.keyNotIndexed(ctx, vals); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: no row of %s has key %v", ErrKeyNotFound, ix.snap.SourceTable.Properties["location"], vals)
	}
	v, err := ix.vectorOf(ctx, ix.fileStart[loc.File]+loc.Row)
	if err != nil {
		return nil, err
	}
	return slices.Clone(v), nil
}

// SearchNearKey searches near the source row whose key is vals (ParseKey):
// with that row's canonical vector as the query, probing the row's own
// list (its exact assignment, as the build computed it) besides the nprobe
// routed ones, so that the row itself is found and, having distance 0 (or
// its code-domain distance, about 1e-5 of the data scale, under LVQ
// without refine), comes first.
func (ix *Index) SearchNearKey(ctx context.Context, vals []parquet.Value, opts Options) (_ *Result, err error) {
	defer func() { err = ix.staleOr(ctx, err) }()
	v, err := ix.VectorOf(ctx, vals)
	if err != nil {
		return nil, err
	}
	ix.asgOnce.Do(func() { ix.asg = ivf.NewAssigner(ix.art.Centroids) })
	cid := ix.asg.Assign(v)
	return ix.search(ctx, v, opts, cid)
}
