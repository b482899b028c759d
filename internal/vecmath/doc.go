// Package vecmath holds the hot numeric kernels of ParqDB: float32 squared L2
// distance and dot product, dot products of a float32 query with 8-bit and
// 4-bit LVQ codes, code sums, batch forms that score one query against
// many rows stored contiguously, and the small selections of a query
// (RanksBelow, SmallestK).
//
// On amd64 the kernels are written in Go assembly for AVX-512 and AVX2 and
// chosen once at program start with golang.org/x/sys/cpu; everywhere else,
// and with the build tag purego, portable Go is used. Impl reports which.
//
// Floating-point results depend on the summation order, which differs
// between implementations: results agree with a sequential float64 reference
// within a few float32 rounding errors of the sum of absolute products (see
// the tests for the exact tolerance). Integer results (SumU8 and the code
// sums of the DotSums kernels) are exact everywhere.
//
// The kernels do not allocate, are safe for concurrent use, and panic when
// the slice lengths do not match their contract (a programming error, like
// an index out of range): they are internal building blocks whose callers
// validate input first.
package vecmath
