package main

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/server"
	"github.com/parqdb/parqdb/server/serving"
)

// numericFlag is one numeric flag of one command.
type numericFlag struct {
	path []string // command path below the root, e.g. [index create]
	flag *pflag.Flag
}

// allNumericFlags lists the numeric flags of every runnable command.
func allNumericFlags(t *testing.T) []numericFlag {
	t.Helper()
	root, _ := newRootCmd()
	var out []numericFlag
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		if c.Runnable() && c != root {
			c.Flags().VisitAll(func(f *pflag.Flag) {
				if numericFlagTypes[f.Value.Type()] {
					out = append(out, numericFlag{path, f})
				}
			})
		}
		for _, s := range c.Commands() {
			walk(s, append(append([]string(nil), path...), s.Name()))
		}
	}
	walk(root, nil)
	if len(out) < 20 {
		t.Fatalf("found only %d numeric flags", len(out))
	}
	return out
}

func TestEveryNumericFlagHasRange(t *testing.T) {
	for _, nf := range allNumericFlags(t) {
		r := nf.flag.Annotations[rangeAnnotation]
		if len(r) != 3 {
			t.Errorf("parqdb %s --%s (%s) declares no range", strings.Join(nf.path, " "), nf.flag.Name, nf.flag.Value.Type())
			continue
		}
		if !inRange(nf.flag.Value.Type(), nf.flag.DefValue, r[0], r[1]) && r[2] == "" {
			t.Errorf("parqdb %s --%s: default %s is outside [%s, %s] and no note says what leaving it out selects",
				strings.Join(nf.path, " "), nf.flag.Name, nf.flag.DefValue, r[0], r[1])
		}
	}
}

// badValues returns values just outside [lo, hi] (and NaN and ±Inf for
// floats).
func badValues(typ, lo, hi string) []string {
	switch typ {
	case "duration":
		l, _ := time.ParseDuration(lo)
		h, _ := time.ParseDuration(hi)
		return []string{(l - time.Nanosecond).String(), (h + time.Hour).String()}
	case "float64", "float32":
		l, _ := strconv.ParseFloat(lo, 64)
		h, _ := strconv.ParseFloat(hi, 64)
		return []string{"NaN", "Inf", "-Inf", strconv.FormatFloat(l-1, 'g', -1, 64), strconv.FormatFloat(h*2+1, 'g', -1, 64)}
	case "uint64", "uint":
		return nil // [0, MaxUint64]: pflag itself refuses anything else
	}
	var out []string
	l, _ := strconv.ParseInt(lo, 10, 64)
	h, _ := strconv.ParseInt(hi, 10, 64)
	if l > math.MinInt64 {
		out = append(out, strconv.FormatInt(l-1, 10))
	}
	if h < math.MaxInt64 {
		out = append(out, strconv.FormatInt(h+1, 10))
	}
	return out
}

// TestNumericFlagRanges gives every numeric flag of every command values
// outside its range: each is a usage error (exit 2) naming the flag and
// the allowed range, before the command touches any warehouse.
func TestNumericFlagRanges(t *testing.T) {
	wh := t.TempDir() + "/absent"
	tried := 0
	for _, nf := range allNumericFlags(t) {
		r := nf.flag.Annotations[rangeAnnotation]
		for _, v := range badValues(nf.flag.Value.Type(), r[0], r[1]) {
			name := strings.Join(nf.path, " ") + " --" + nf.flag.Name + "=" + v
			t.Run(name, func(t *testing.T) {
				args := append([]string{"--warehouse", wh}, nf.path...)
				args = append(args, "--"+nf.flag.Name+"="+v)
				_, errs, code := runSplit(t, args...)
				if strings.Contains(errs, "argument(s)") {
					_, errs, code = runSplit(t, append(args, "x")...)
				}
				want := flagName(nf.flag) + " " + v + " is outside the allowed range [" + r[0] + ", " + r[1] + "]"
				if nf.flag.Value.Type() == "float64" {
					want = " is outside the allowed range [" + r[0] + ", " + r[1] + "]"
				}
				if code != exitUsage || !strings.Contains(errs, want) || !strings.Contains(errs, flagName(nf.flag)) {
					t.Fatalf("exit %d, %q; want exit 2 with %q", code, errs, want)
				}
			})
			tried++
		}
	}
	t.Logf("%d bad values tried", tried)
}

// TestExplicitZeroAndNegative: 0 is not "the default" (it used to give 10
// rows for -k 0 and nprobe 8 for --nprobe 0) and negatives are usage
// errors (-k -3 used to exit 1).
func TestExplicitZeroAndNegative(t *testing.T) {
	wh := gloveWarehouse(t)
	for _, args := range [][]string{
		{"search", "words", "--near-key", "king", "-k", "0"},
		{"search", "words", "--near-key", "king", "-k", "-3"},
		{"search", "words", "--near-key", "king", "--nprobe", "0"},
		{"search", "words", "--near-key", "king", "--workers", "0"},
		{"search", "words", "--near-key", "king", "-k", "1001"},
		{"index", "refresh", "words", "--max-growth", "NaN"},
		{"index", "refresh", "words", "--workers", "-1"},
		{"index", "create", "w2", "--source", gloveSample, "--vector-field", "embedding", "--key-fields", "word", "--nlist", "-5"},
		{"index", "create", "w2", "--source", gloveSample, "--vector-field", "embedding", "--key-fields", "word", "--nlist", "20000"},
		{"bench", "words", "--queries", "q.fvecs", "--nprobe", "0,8"},
		{"bench", "words", "--queries", "q.fvecs", "--refine", "101"},
	} {
		_, errs, code := runSplit(t, append([]string{"--warehouse", wh}, args...)...)
		if code != exitUsage {
			t.Errorf("%v: exit %d (%s), want 2", args, code, errs)
		}
	}
}

// TestSharedRanges: the CLI and the HTTP server accept the same ranges for
// k, nprobe, refine and the batch size, all taken from package query.
func TestSharedRanges(t *testing.T) {
	root, _ := newRootCmd()
	search, _, err := root.Find([]string{"search"})
	if err != nil {
		t.Fatal(err)
	}
	serve, _, err := root.Find([]string{"serve"})
	if err != nil {
		t.Fatal(err)
	}
	rng := func(c *cobra.Command, name string) string {
		return strings.Join(c.Flags().Lookup(name).Annotations[rangeAnnotation][:2], ",")
	}
	d := serving.DefaultLimits
	for _, tc := range []struct{ cli, server string }{
		{rng(search, "k"), "1," + strconv.Itoa(d.MaxK)},
		{rng(search, "nprobe"), "1," + strconv.Itoa(d.MaxNProbe)},
		{rng(search, "refine"), "0," + strconv.Itoa(d.MaxRefine)},
		{rng(serve, "max-k"), "1," + strconv.Itoa(d.MaxK)},
		{rng(serve, "max-nprobe"), "1," + strconv.Itoa(d.MaxNProbe)},
		{rng(serve, "max-batch"), "1," + strconv.Itoa(d.MaxBatch)},
	} {
		if tc.cli != tc.server {
			t.Errorf("CLI range [%s], server range [%s]", tc.cli, tc.server)
		}
	}
	if d.MaxBatch != query.MaxBatch || d.MaxK != query.MaxK || d.MaxNProbe != query.MaxNProbe || d.MaxRefine != query.MaxRefine {
		t.Errorf("server defaults %+v differ from package query's ranges", d)
	}
	for _, tc := range []struct {
		k, nprobe, refine int
		ok                bool
	}{
		{query.MinK, query.MinNProbe, query.MinRefine, true},
		{query.MaxK, query.MaxNProbe, query.MaxRefine, true},
		{0, 8, 0, false}, {10, 0, 0, false}, {query.MaxK + 1, 8, 0, false},
		{10, query.MaxNProbe + 1, 0, false}, {10, 8, query.MaxRefine + 1, false}, {10, 8, -1, false},
	} {
		_, err := d.CheckOptions(&tc.k, &tc.nprobe, &tc.refine)
		if (err == nil) != tc.ok {
			t.Errorf("server k %d nprobe %d refine %d: err %v", tc.k, tc.nprobe, tc.refine, err)
		}
	}
}

func TestCanonicalMetric(t *testing.T) {
	for in, want := range map[string]string{
		"l2": "l2_squared", "L2": "l2_squared", "euclidean": "l2_squared", "l2_squared": "l2_squared",
		"cos": "cosine", "cosine": "cosine", "Cosine": "cosine",
	} {
		if got, err := canonicalMetric(in); err != nil || got != want {
			t.Errorf("%q: got %q, %v; want %q", in, got, err, want)
		}
	}
	for in, hint := range map[string]string{"cosin": "did you mean cosine?", "l2squared": "did you mean l2_squared?", "eucledian": "did you mean euclidean?", "dot": ""} {
		_, err := canonicalMetric(in)
		if exitCode(err) != exitUsage || !strings.Contains(fmt.Sprint(err), hint) || (hint == "" && strings.Contains(fmt.Sprint(err), "did you mean")) {
			t.Errorf("%q: %v; want a usage error with %q", in, err, hint)
		}
	}
}

// TestMetricAlias: --metric l2 (refused before) builds an index whose
// metadata stores the spec's name.
func TestMetricAlias(t *testing.T) {
	wh := filepath.Join(t.TempDir(), "wh")
	_, errs, code := runSplit(t, "--warehouse", wh, "index", "create", "w", "--source", gloveSample,
		"--vector-field", "embedding", "--key-fields", "word", "--metric", "l2", "--nlist", "20", "-q")
	if code != exitOK {
		t.Fatalf("create --metric l2: exit %d: %s", code, errs)
	}
	out, errs, code := runSplit(t, "--warehouse", wh, "index", "describe", "w", "--format", "json")
	if code != exitOK || !strings.Contains(out, `"metric": "l2_squared"`) {
		t.Fatalf("describe: exit %d, %s %s", code, out, errs)
	}
}

// jsonKeys returns the JSON keys of struct type t's fields.
func jsonKeys(t reflect.Type) map[string]bool {
	keys := map[string]bool{}
	for i := range t.NumField() {
		if k, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); k != "" && k != "-" {
			keys[k] = true
		}
	}
	return keys
}

// TestIndexListFormats: index list has one set of fields in every format
// (json used to omit metric, encoding and source; csv was refused), and
// its JSON keys are spelled as the HTTP API's.
func TestIndexListFormats(t *testing.T) {
	wh := gloveWarehouse(t)
	run := func(format string) string {
		out, errs, code := runSplit(t, "--warehouse", wh, "index", "list", "--format", format)
		if code != exitOK {
			t.Fatalf("--format %s: exit %d: %s", format, code, errs)
		}
		return out
	}
	var js []map[string]any
	if err := json.Unmarshal([]byte(run("json")), &js); err != nil || len(js) != 1 {
		t.Fatalf("json: %v %v", js, err)
	}
	jsonSet := map[string]bool{"error": true} // omitted when empty
	for k := range js[0] {
		jsonSet[k] = true
	}
	csvLines := strings.Split(strings.TrimSpace(run("csv")), "\n")
	tableLines := strings.Split(strings.TrimSpace(run("table")), "\n")
	csvHdr := strings.Split(csvLines[0], ",")
	tableHdr := strings.Fields(tableLines[0])
	// The table abbreviates and leaves out the metadata location (-v
	// adds it) and the error column when no index has an error.
	if want := []string{"NAME", "ROWS", "METRIC", "ENC", "NLIST", "DIM", "STALE", "SOURCE"}; !reflect.DeepEqual(tableHdr, want) {
		t.Fatalf("table header %v, want %v", tableHdr, want)
	}
	delete(jsonSet, "stale_reason") // present only when stale
	if !reflect.DeepEqual(csvHdr, indexListColumns) || len(csvHdr) != len(jsonSet) {
		t.Fatalf("fields differ: csv %v, json %v", csvHdr, jsonSet)
	}
	for _, k := range csvHdr {
		if !jsonSet[k] {
			t.Errorf("csv/table field %q is not in the JSON", k)
		}
	}
	// The same spelling as the HTTP API (list and describe responses).
	http := jsonKeys(reflect.TypeFor[server.IndexDescription]())
	for k := range jsonKeys(reflect.TypeFor[server.IndexSummary]()) {
		http[k] = true
	}
	for k := range jsonSet {
		if !http[k] && k != "error" {
			t.Errorf("CLI JSON key %q is not an HTTP API key", k)
		}
	}
	csvRow := strings.Split(csvLines[1], ",")
	src, _ := js[0]["source"].(map[string]any)
	for i, want := range []any{js[0]["name"], js[0]["indexed_rows"], js[0]["metric"], js[0]["encoding"], js[0]["nlist"], js[0]["dimension"], js[0]["stale"], src["location"]} {
		if fmt.Sprint(want) != csvRow[i] {
			t.Errorf("%s: json %v, csv %q", csvHdr[i], want, csvRow[i])
		}
	}
	if csvRow[2] != "cosine" || csvRow[3] != "lvq8" || csvRow[4] != "50" || csvRow[6] != "false" || !strings.Contains(csvRow[7], "glove-10k.parquet") {
		t.Errorf("csv row %v", csvRow)
	}
	if _, errs, code := runSplit(t, "--warehouse", wh, "index", "list", "--format", "xml"); code != exitUsage || !strings.Contains(errs, "table, json or csv") {
		t.Errorf("--format xml: exit %d %s", code, errs)
	}
}

// TestNumericFlagOverflow gives every numeric flag values past the range
// of its Go type (int64 ± 1, durations past 2562047h, a millisecond count
// whose nanoseconds wrap) and --cache-size sizes past int64: each is a
// usage error naming the flag, never a value that wrapped into range.
func TestNumericFlagOverflow(t *testing.T) {
	wh := t.TempDir() + "/absent"
	over := map[string][]string{
		"duration": {"2562048h", "-2562048h", "9223372036855ms", "9223372036854775808ns"},
		"int":      {"9223372036854775808", "-9223372036854775809"},
		"int64":    {"9223372036854775808", "-9223372036854775809"},
		"uint":     {"18446744073709551616", "-1"},
		"uint64":   {"18446744073709551616", "-1"},
		"float64":  {"1e400", "-1e400"},
	}
	tried := 0
	for _, nf := range allNumericFlags(t) {
		vals, ok := over[nf.flag.Value.Type()]
		if !ok {
			t.Errorf("no overflow values for --%s of type %s", nf.flag.Name, nf.flag.Value.Type())
		}
		for _, v := range vals {
			t.Run(strings.Join(nf.path, " ")+" --"+nf.flag.Name+"="+v, func(t *testing.T) {
				args := append(append([]string{"--warehouse", wh}, nf.path...), "--"+nf.flag.Name+"="+v)
				_, errs, code := runSplit(t, args...)
				if strings.Contains(errs, "argument(s)") {
					_, errs, code = runSplit(t, append(args, "x")...)
				}
				if code != exitUsage || !strings.Contains(errs, nf.flag.Name) {
					t.Fatalf("exit %d, %q; want exit 2 naming --%s", code, errs, nf.flag.Name)
				}
			})
			tried++
		}
	}
	for _, v := range []string{"9223372036854775808", "1e400", "8EiB", "16777216TiB", "1e19B", "-1", "101%", "NaN%"} {
		t.Run("serve --cache-size="+v, func(t *testing.T) {
			_, errs, code := runSplit(t, "--warehouse", wh, "serve", "--cache-size="+v)
			if code != exitUsage || !strings.Contains(errs, "--cache-size") {
				t.Fatalf("exit %d, %q; want exit 2 naming --cache-size", code, errs)
			}
		})
		tried++
	}
	t.Logf("%d values past their type tried", tried)
}
