// Package source reads user Parquet source tables for ParqDB: a single
// .parquet object or a folder (prefix) of them in a storage.Bucket.
//
// The flow is Open (footers only) → Check (schema rules, returns a Layout)
// → Scan (streams every row in file order, converting and validating the
// vector and key of each row against the source contract of
// ivf-index-schema §8), CheckUniqueKeys (the unique-key rule, which one
// row cannot show: builds feed it the key hashes their Scan collects) and,
// for queries, ReadRows / ReadVectors (random access by RowLoc) and
// BuildKeyIndex (source key → RowLoc).
//
// # Vector shapes
//
// The vector field is a top-level field whose single leaf column is FLOAT
// or DOUBLE with exactly one repeated level. Accepted shapes:
//
//	3-level list   <opt|req> group v (LIST) { repeated group <any> { <opt|req> float|double <any>; } }
//	2-level list   <opt|req> group v [(LIST)] { repeated float|double <any>; }
//	repeated leaf  repeated float|double v;
//
// Arrow FixedSizeList, DuckDB ARRAY and pyarrow lists (element or item
// naming) are written as one of these. Doubles convert to float32 with
// round-to-nearest-even (clarification 5); for the cosine metric each
// vector is normalised with a float64 norm and a float64 division rounded
// once to float32 (clarification 4).
//
// # Keys
//
// Key fields are top-level, non-repeated primitive columns of a supported
// type (see KeyKind). Keys are carried as KeyValue and encoded to a
// canonical byte string by AppendKey; see AppendKey for the exact bytes.
//
// # Errors
//
// Every failure is an *Error naming the file, row (within the file), key
// and field where known, and wrapping one sentinel from errors.go;
// source-contract violations also wrap ErrContract.
package source

// Every page this package reads is decompressed within its declared size.
import _ "github.com/parqdb/parqdb/internal/pagecodec"
