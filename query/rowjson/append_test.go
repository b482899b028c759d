package rowjson

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/parqdb/parqdb/metadata"
)

// marshalRowReference is Row's encoding before AppendJSON: every value
// through encoding/json.
func marshalRowReference(r Row) ([]byte, error) {
	var b []byte
	b = append(b, '{')
	for i, c := range r.Columns {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(c)
		b = append(b, k...)
		b = append(b, ':')
		var v any
		if c == metadata.ReservedField {
			v = r.Distance
		} else {
			v = value(r.Values[c])
		}
		enc, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		b = append(b, enc...)
	}
	return append(b, '}'), nil
}

// TestAppendJSONEqualsMarshal: AppendJSON writes exactly the bytes of
// encoding/json for every kind of value a row holds: floats of every
// magnitude (the exponent thresholds 1e-6 and 1e21 on both sides), zero
// and negative zero, integers at their limits, text that needs escapes
// (quotes, control characters, <, >, &, U+2028, non-ASCII, invalid
// UTF-8), binary, lists, nested lists, groups and times.
func TestAppendJSONEqualsMarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 13))
	vals := []any{
		nil, true, false, 0, -1, math.MaxInt64, math.MinInt64, int8(-128), int16(300), int32(-7), uint8(255),
		uint16(65535), uint32(1 << 31), uint64(math.MaxUint64),
		float32(0), float32(math.Copysign(0, -1)), float32(1e-6), float32(9.99999e-7), float32(1e21), float32(9.9999e20),
		float32(3.4028235e38), float32(1.4e-45), float32(0.1), float32(-2.5),
		0.0, 1e-6, 9.999999e-7, 1e21, 9.99999999e20, 1e-300, math.MaxFloat64, math.SmallestNonzeroFloat64, -0.1,
		float32(math.NaN()), math.Inf(1), float32(math.Inf(-1)),
		"", "king", `a"b`, `a\b`, "tab\there", "<script>&", "line\u2028sep", "héllo", "日本", "\xff\xfe", "\x00",
		[]byte{0, 1, 2, 255}, []byte{},
		[]any{}, []any{float32(0.5), nil, float32(1e-7)}, []any{[]any{int64(1), "x"}, []any{}},
		map[string]any{"b": 1, "a": []any{"<", float64(2)}}, time.Date(2026, 11, 30, 23, 59, 1, 5, time.UTC),
	}
	for i := 0; i < 20000; i++ {
		e := rng.IntN(80) - 50
		f := (rng.Float64()*2 - 1) * math.Pow(10, float64(e))
		vals = append(vals, f, float32(f))
	}
	for i, v := range vals {
		row := Row{Columns: []string{"k<&", "v", metadata.ReservedField}, Distance: float32(i) / 7, Values: map[string]any{"v": v, "k<&": "x"}}
		want, werr := marshalRowReference(row)
		got, gerr := row.MarshalJSON()
		if string(got) != string(want) || (werr == nil) != (gerr == nil) {
			t.Fatalf("value %#v: got %s (%v), want %s (%v)", v, got, gerr, want, werr)
		}
	}
}

// gloveRow is a row as the GloVe sample gives it: a word, its rank and a
// 50-float embedding.
func gloveRow() Row {
	emb := make([]any, 50)
	for i := range emb {
		emb[i] = float32(i)*0.0371 - 0.9
	}
	return Row{Columns: []string{"word", "rank", "embedding", metadata.ReservedField},
		Distance: 0.2160957, Values: map[string]any{"word": "queen", "rank": int64(2061), "embedding": emb}}
}

// BenchmarkJSONRow: AppendJSON against the encoding/json path it
// replaced, on a GloVe row (run both: -bench JSONRow).
func BenchmarkJSONRow(b *testing.B) {
	row := gloveRow()
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := row.MarshalJSON(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := marshalRowReference(row); err != nil {
				b.Fatal(err)
			}
		}
	})
}
