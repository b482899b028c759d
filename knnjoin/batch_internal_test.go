package knnjoin

import "testing"

// TestBatchQueries: the batch size follows the budget, stays within its
// bounds and leaves a small shard at least four batches.
func TestBatchQueries(t *testing.T) {
	for _, c := range []struct {
		dim, k      int
		limit, rows int64
		want        int
	}{
		{50, 10, 1 << 30, 1 << 30, maxBatchQueries},  // a large budget: the cap
		{784, 10, 64 << 20, 1 << 30, 346},            // 64 MiB / 16 / 3 / 4,032 bytes
		{784, 10, 1 << 20, 1 << 30, minBatchQueries}, // a tiny budget: the floor
		{50, 10, 1 << 30, 10000, 2500},               // a small shard: a quarter
		{50, 10, 1 << 30, 100, minBatchQueries},
	} {
		if got := batchQueries(c.dim, c.k, c.limit, c.rows); got != c.want {
			t.Errorf("batchQueries(%d, %d, %d, %d) = %d, want %d", c.dim, c.k, c.limit, c.rows, got, c.want)
		}
	}
}
