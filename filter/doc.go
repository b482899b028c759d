// Package filter parses, type-checks and evaluates the predicates of
// filtered search: SQL-like boolean expressions over the top-level columns
// of a Parquet source, such as
//
//	price < 50 AND category IN ('shoes', 'boots') AND "release date" >= DATE '2024-01-01'
//
// Parse turns text into an immutable *Predicate (safe to share between
// goroutines and reuse across queries); Predicate.Check binds it to a
// Parquet schema and returns a *Program. A Program decides from
// column-chunk statistics whether a row group may hold a matching row
// (MayMatch), and MatchRowGroup evaluates it over one row group's column
// chunks: the page indexes skip the pages where no row can match and take
// whole the runs where every row does, and the remaining pages are decoded
// typed and evaluated a vector of rows at a time (one Scratch per
// goroutine, NewScratch). That is the path filtered search runs
// (query/filter.go); the row-at-a-time evaluator the tests compare it with
// is in roweval_test.go.
//
// # Grammar
//
//	expr      = or
//	or        = and { OR and }
//	and       = not { AND not }
//	not       = NOT not | primary
//	primary   = '(' expr ')' | column rest | literal cmpop column
//	rest      = cmpop literal
//	          | [NOT] IN '(' literal { ',' literal } ')'
//	          | [NOT] BETWEEN literal AND literal
//	          | IS [NOT] NULL
//	          | [NOT] LIKE 'prefix%'
//	cmpop     = '=' | '!=' | '<>' | '<' | '<=' | '>' | '>='
//	column    = identifier | '"' any text, "" for a quote '"'
//	literal   = number | 'string' ('' for a quote) | TRUE | FALSE | NULL
//	          | DATE 'YYYY-MM-DD' | TIMESTAMP 'YYYY-MM-DD[ HH:MM:SS[.fff]][Z|±HH:MM]'
//
// Keywords are case-insensitive; bare identifiers are case-sensitive
// column names. A string literal compared with a date or timestamp column
// is read as a date or timestamp.
//
// # Meaning
//
// NULL follows SQL's three-valued logic: a comparison, IN, BETWEEN or LIKE
// with a NULL column value (or a NULL literal) is unknown, NOT unknown is
// unknown, and a row matches only when the whole predicate is true. So
// `x != 5` does not match rows where x is NULL; `x IS NULL` does.
//
// Column types: BOOLEAN; INT32/INT64 (signed or unsigned 8–32 bit) as
// integers; FLOAT/DOUBLE; BYTE_ARRAY (strings, compared byte-wise, which
// is code-point order for UTF-8); INT32 DATE; INT64 TIMESTAMP (any unit;
// literals without a zone are UTC). Integers and floats compare with each
// other numerically. Other types (decimal, INT96, fixed-length, nested or
// repeated fields) are refused by Check with ErrType.
//
// # Errors
//
// Every error is an *Error carrying the 1-based character position in the
// text and wrapping one sentinel of errors.go; unknown columns list the
// available ones, type mismatches name both types.
package filter
