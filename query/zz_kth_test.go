package query

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func BenchmarkKthFloatZZ(b *testing.B) {
	for _, c := range [][2]int{{100, 20}, {52, 20}, {20, 10}, {12, 10}} {
		b.Run(fmt.Sprintf("n=%d/k=%d", c[0], c[1]), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			src := make([][]float32, 64)
			for i := range src {
				src[i] = make([]float32, c[0])
				for j := range src[i] {
					src[i][j] = r.Float32()
				}
			}
			a := make([]float32, c[0])
			for i := 0; i < b.N; i++ {
				copy(a, src[i&63])
				kthFloat(a, c[1])
			}
		})
	}
}
