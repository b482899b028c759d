// Package lvq implements the LVQ4 and LVQ8 vector encodings of the IVF index
// schema (§7, with clarifications 1–5): per-vector offset and scale, codes
// rounded half-up from the exact real value, nibble packing, reconstruction,
// cosine normalisation and double-to-float conversion of source values, and
// the code-domain squared L2 distance used by the search scanner.
//
// Encoding is bit-exact: every implementation that follows the schema must
// produce the same codes, offset and scale. A fast float64 path decides all
// codes that are not within a rigorous error bound of a half-way point; the
// rare near-ties are decided exactly with integer arithmetic. docs/lvq.md
// explains the error analysis and the rulings this package makes.
//
// All functions are safe for concurrent use; none retains its arguments.
package lvq
