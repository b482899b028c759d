package calibrate

import (
	"errors"
	"math"
	"reflect"
	"testing"
)

func testCalibration() *Calibration {
	return &Calibration{
		FormatVersion: FormatVersion, IndexUUID: "u", SnapshotID: 7,
		Source: map[string]string{"table-identity": "sha256:x"}, Encoding: "lvq8", NList: 64, K: 10, Queries: 300,
		Seed: DefaultSeed, Weights: WeightsFor("lvq8"),
		Points: []Point{
			{NProbe: 1, Refine: 0, Recall: 0.70, StdErr: 0.01, Cost: 100},
			{NProbe: 2, Refine: 0, Recall: 0.80, StdErr: 0.03, Cost: 200},
			{NProbe: 4, Refine: 0, Recall: 0.90, StdErr: 0.005, Cost: 400},
			{NProbe: 8, Refine: 0, Recall: 0.93, StdErr: 0.004, Cost: 800},
			{NProbe: 4, Refine: 4, Recall: 0.955, StdErr: 0.003, Cost: 520},
			{NProbe: 8, Refine: 4, Recall: 0.985, StdErr: 0.002, Cost: 920},
			{NProbe: 16, Refine: 4, Recall: 0.996, StdErr: 0.001, Cost: 1720},
		},
	}
}

func TestPick(t *testing.T) {
	c := testCalibration()
	for _, tc := range []struct {
		target      float64
		nprobe, ref int
		met         bool
	}{
		{0.5, 1, 0, true},
		{0.69, 1, 0, true},  // 0.70 − 2·0.01 = 0.68 ≥ 0.69 − 0.01
		{0.70, 2, 0, true},  // nprobe 1's bound 0.68 < 0.69; nprobe 2: 0.80 − 2·0.03 = 0.74
		{0.75, 2, 0, true},  // 0.74 ≥ 0.74
		{0.76, 4, 0, true},  // nprobe 2's bound 0.74 < 0.75
		{0.9, 4, 0, true},   // 0.90 − 0.01 = 0.89 ≥ 0.89
		{0.91, 4, 4, true},  // 0.955 at cost 520 beats nprobe 8 (0.93) at 800
		{0.96, 8, 4, true},  // 0.955 < 0.96
		{0.99, 16, 4, true}, // 0.985 < 0.99
		{0.996, 16, 4, true},
		{0.999, 16, 4, false}, // nothing reaches it: the highest recall
		{1, 16, 4, false},
	} {
		p, met, err := c.Pick(tc.target)
		if err != nil {
			t.Fatal(err)
		}
		if p.NProbe != tc.nprobe || p.Refine != tc.ref || met != tc.met {
			t.Errorf("Pick(%v) = nprobe %d refine %d met %v, want %d %d %v", tc.target, p.NProbe, p.Refine, met, tc.nprobe, tc.ref, tc.met)
		}
	}
	for _, bad := range []float64{0, -1, 1.0001, math.NaN(), math.Inf(1)} {
		if _, _, err := c.Pick(bad); !errors.Is(err, ErrBadTarget) {
			t.Errorf("Pick(%v): %v, want ErrBadTarget", bad, err)
		}
	}
	// A noisy point that meets the target by its recall alone is used
	// when nothing qualifies.
	noisy := &Calibration{Points: []Point{{NProbe: 1, Recall: 0.9, StdErr: 0.02, Cost: 1}, {NProbe: 2, Recall: 0.85, Cost: 2}}}
	if p, met, _ := noisy.Pick(0.9); p.NProbe != 1 || !met {
		t.Errorf("noisy Pick(0.9) = %+v %v", p, met)
	}
}

func TestFrontier(t *testing.T) {
	var got [][2]int
	for _, p := range testCalibration().Frontier() {
		got = append(got, [2]int{p.NProbe, p.Refine})
	}
	want := [][2]int{{1, 0}, {2, 0}, {4, 0}, {4, 4}, {8, 4}, {16, 4}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Frontier = %v, want %v", got, want)
	}
}

func TestParseRoundTrip(t *testing.T) {
	c := testCalibration()
	data, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse("x.json", data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, c) {
		t.Fatalf("round trip:\n%+v\n%+v", got, c)
	}
	if !got.Matches("u", 7, map[string]string{"table-identity": "sha256:x"}) {
		t.Fatal("does not match its own binding")
	}
	for _, m := range []struct {
		uuid string
		snap int64
		src  map[string]string
	}{{"v", 7, c.Source}, {"u", 8, c.Source}, {"u", 7, map[string]string{"table-identity": "sha256:y"}}} {
		if got.Matches(m.uuid, m.snap, m.src) {
			t.Errorf("matches another binding %v", m)
		}
	}
}

func TestParseInvalid(t *testing.T) {
	for name, doc := range map[string]string{
		"not json":       `{`,
		"unknown member": `{"format-version":1,"snapshot-id":1,"k":10,"queries":1,"extra":1,"points":[{"nprobe":1,"refine":0,"recall":1,"stderr":0,"cost":1}]}`,
		"version":        `{"format-version":2,"snapshot-id":1,"k":10,"queries":1,"points":[{"nprobe":1,"refine":0,"recall":1,"stderr":0,"cost":1}]}`,
		"no points":      `{"format-version":1,"snapshot-id":1,"k":10,"queries":1,"points":[]}`,
		"recall > 1":     `{"format-version":1,"snapshot-id":1,"k":10,"queries":1,"points":[{"nprobe":1,"refine":0,"recall":1.5,"stderr":0,"cost":1}]}`,
		"nprobe 0":       `{"format-version":1,"snapshot-id":1,"k":10,"queries":1,"points":[{"nprobe":0,"refine":0,"recall":1,"stderr":0,"cost":1}]}`,
		"trailing data":  `{"format-version":1,"snapshot-id":1,"k":10,"queries":1,"points":[{"nprobe":1,"refine":0,"recall":1,"stderr":0,"cost":1}]} {}`,
	} {
		if _, err := Parse("calibration-1.json", []byte(doc)); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
}

func TestSample(t *testing.T) {
	a, b := Sample(1000, 50, 1), Sample(1000, 50, 1)
	if !reflect.DeepEqual(a, b) || len(a) != 50 {
		t.Fatalf("Sample not deterministic: %v %v", a, b)
	}
	for i := 1; i < len(a); i++ {
		if a[i] <= a[i-1] || a[i] >= 1000 {
			t.Fatalf("Sample not sorted, distinct and in range: %v", a)
		}
	}
	if reflect.DeepEqual(a, Sample(1000, 50, 2)) {
		t.Fatal("seed ignored")
	}
	if got := Sample(3, 10, 1); !reflect.DeepEqual(got, []int64{0, 1, 2}) {
		t.Fatalf("Sample(3, 10) = %v", got)
	}
}

func TestNProbeGrid(t *testing.T) {
	if got := nprobeGrid(DefaultNProbes, 10); !reflect.DeepEqual(got, []int{1, 2, 3, 4, 5, 6, 7, 8, 10}) {
		t.Fatalf("grid for nlist 10 = %v", got)
	}
	if got := nprobeGrid(DefaultNProbes, 1); !reflect.DeepEqual(got, []int{1}) {
		t.Fatalf("grid for nlist 1 = %v", got)
	}
}
