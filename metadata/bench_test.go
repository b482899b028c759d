package metadata

import (
	"os"
	"testing"
)

func BenchmarkParse(b *testing.B) {
	data, err := os.ReadFile("testdata/valid/base.json")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMarshal(b *testing.B) {
	data, err := os.ReadFile("testdata/valid/base.json")
	if err != nil {
		b.Fatal(err)
	}
	m, err := Parse(data)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Marshal(m); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFingerprint(b *testing.B) {
	d := Descriptor{"embedding", 768, MetricL2Squared, 4096, 1}
	for b.Loop() {
		_ = Fingerprint(d)
	}
}
