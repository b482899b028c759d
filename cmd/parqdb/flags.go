package main

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/parqdb/parqdb/metadata"
)

// Every numeric flag of every command declares the range it accepts when
// given (checkFlagRanges runs before each command). The rule is the same
// everywhere: a flag left out selects its default, a given value must lie
// in the range — there is no "0 means default" — and NaN and ±Inf are never
// in range.

// rangeAnnotation is the pflag annotation holding a flag's range:
// [low, high, note], low and high in the flag's own syntax.
const rangeAnnotation = "parqdb-range"

// numericFlagTypes are the pflag value types that must carry a range.
var numericFlagTypes = map[string]bool{
	"int": true, "int8": true, "int16": true, "int32": true, "int64": true,
	"uint": true, "uint8": true, "uint16": true, "uint32": true, "uint64": true,
	"float32": true, "float64": true, "duration": true,
}

// maxWorkers bounds --workers and --threads.
const maxWorkers = 4096

// setRange records that flag name of fs accepts [lo, hi]; note (may be
// empty) says what leaving the flag out selects.
func setRange(fs *pflag.FlagSet, name, lo, hi, note string) {
	if err := fs.SetAnnotation(name, rangeAnnotation, []string{lo, hi, note}); err != nil {
		panic(fmt.Sprintf("flag --%s: %v", name, err)) // a programming error: the flag is not defined
	}
}

func intRange(fs *pflag.FlagSet, name string, lo, hi int64, note string) {
	setRange(fs, name, strconv.FormatInt(lo, 10), strconv.FormatInt(hi, 10), note)
}

func uintRange(fs *pflag.FlagSet, name string, lo, hi uint64, note string) {
	setRange(fs, name, strconv.FormatUint(lo, 10), strconv.FormatUint(hi, 10), note)
}

func floatRange(fs *pflag.FlagSet, name string, lo, hi float64, note string) {
	setRange(fs, name, strconv.FormatFloat(lo, 'g', -1, 64), strconv.FormatFloat(hi, 'g', -1, 64), note)
}

func durationRange(fs *pflag.FlagSet, name string, lo, hi time.Duration, note string) {
	setRange(fs, name, lo.String(), hi.String(), note)
}

// flagName is how the user writes a flag: -k for one letter, --name else.
func flagName(f *pflag.Flag) string {
	if len(f.Name) == 1 {
		return "-" + f.Name
	}
	return "--" + f.Name
}

// checkFlagRanges checks every numeric flag the user gave to cmd against
// its range and returns a usage error naming the flag and the range.
func checkFlagRanges(cmd *cobra.Command) error {
	var err error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if err != nil || !numericFlagTypes[f.Value.Type()] {
			return
		}
		r := f.Annotations[rangeAnnotation]
		if len(r) != 3 {
			return // TestEveryNumericFlagHasRange keeps this from happening
		}
		if !inRange(f.Value.Type(), f.Value.String(), r[0], r[1]) {
			msg := fmt.Sprintf("%s %s is outside the allowed range [%s, %s]", flagName(f), f.Value.String(), r[0], r[1])
			if r[2] != "" {
				msg += "; leave it out for " + r[2]
			}
			err = usagef("%s", msg)
		}
	})
	return err
}

// inRange reports whether v lies in [lo, hi], all in the syntax of type
// typ. NaN is never in range.
func inRange(typ, v, lo, hi string) bool {
	switch typ {
	case "duration":
		x, e1 := time.ParseDuration(v)
		l, e2 := time.ParseDuration(lo)
		h, e3 := time.ParseDuration(hi)
		return e1 == nil && e2 == nil && e3 == nil && x >= l && x <= h
	case "uint", "uint8", "uint16", "uint32", "uint64":
		x, e1 := strconv.ParseUint(v, 10, 64)
		l, e2 := strconv.ParseUint(lo, 10, 64)
		h, e3 := strconv.ParseUint(hi, 10, 64)
		return e1 == nil && e2 == nil && e3 == nil && x >= l && x <= h
	case "float32", "float64":
		x, e1 := strconv.ParseFloat(v, 64)
		l, e2 := strconv.ParseFloat(lo, 64)
		h, e3 := strconv.ParseFloat(hi, 64)
		return e1 == nil && e2 == nil && e3 == nil && !math.IsNaN(x) && !math.IsInf(x, 0) && x >= l && x <= h
	default:
		x, e1 := strconv.ParseInt(v, 10, 64)
		l, e2 := strconv.ParseInt(lo, 10, 64)
		h, e3 := strconv.ParseInt(hi, 10, 64)
		return e1 == nil && e2 == nil && e3 == nil && x >= l && x <= h
	}
}

// flagError turns pflag's parse errors into usage errors; an unknown flag
// gets the nearest flags of the command as suggestions (cobra suggests
// commands, not flags).
func flagError(c *cobra.Command, err error) error {
	const prefix = "unknown flag: --"
	msg := err.Error()
	if !strings.HasPrefix(msg, prefix) {
		return usageError{err}
	}
	name := strings.TrimPrefix(msg, prefix)
	var near []string
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		if d := levenshtein(name, f.Name); d <= 2 || (len(name) >= 3 && strings.HasPrefix(f.Name, name)) {
			near = append(near, "--"+f.Name)
		}
	})
	if len(near) == 0 {
		return usagef("%v; see %s --help", err, c.CommandPath())
	}
	sort.Strings(near)
	return usagef("%v; did you mean %s?", err, strings.Join(near, " or "))
}

// levenshtein is the edit distance between a and b (bytes).
func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// metricAliases maps the names other tools use for a metric to the spec's
// name, which is what the metadata stores. Euclidean distance ranks rows
// exactly as its square does, so l2 and euclidean select l2_squared
// (_distance is then the squared distance).
var metricAliases = map[string]string{
	"l2_squared": metadata.MetricL2Squared, "l2": metadata.MetricL2Squared, "euclidean": metadata.MetricL2Squared,
	"sqeuclidean": metadata.MetricL2Squared, "squared_l2": metadata.MetricL2Squared,
	"cosine": metadata.MetricCosine, "cos": metadata.MetricCosine, "angular": metadata.MetricCosine,
}

// canonicalMetric returns the spec's name for --metric's value, or a usage
// error that suggests the nearest accepted name.
func canonicalMetric(s string) (string, error) {
	key := strings.ToLower(strings.TrimSpace(s))
	if m, ok := metricAliases[key]; ok {
		return m, nil
	}
	// Suggest only a near name: a third of the letters may differ.
	best, bestD := "", max(1, len(key)/3)+1
	for _, a := range slices.Sorted(maps.Keys(metricAliases)) {
		if d := levenshtein(key, a); d < bestD {
			best, bestD = a, d
		}
	}
	msg := fmt.Sprintf("--metric %q is not a metric: give l2_squared (also l2, euclidean) or cosine (also cos)", s)
	if best != "" {
		msg += fmt.Sprintf("; did you mean %s?", best)
	}
	return "", usagef("%s", msg)
}
