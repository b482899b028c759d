// Command membw measures one core's memory read bandwidth: it sums a
// 1 GiB array of uint64 five times and prints GB/s per pass. It is the
// ceiling for a single-thread scan of postings held in RAM (docs/benchmarks.md,
// "10M rows": the bound).
//
//	membw [-mib 1024] [-passes 5]
package main

import (
	"flag"
	"fmt"
	"time"
)

func main() {
	mib := flag.Int("mib", 1024, "array size in MiB (well beyond the CPU caches)")
	passes := flag.Int("passes", 5, "timed passes")
	flag.Parse()
	b := make([]uint64, *mib<<17)
	for i := range b {
		b[i] = uint64(i)
	}
	for range *passes {
		t := time.Now()
		var s0, s1, s2, s3 uint64
		for i := 0; i+3 < len(b); i += 4 {
			s0 += b[i]
			s1 += b[i+1]
			s2 += b[i+2]
			s3 += b[i+3]
		}
		el := time.Since(t)
		fmt.Printf("%.1f GB/s (checksum %d)\n", float64(len(b)*8)/el.Seconds()/1e9, s0+s1+s2+s3)
	}
}
