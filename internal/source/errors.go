package source

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrContract is wrapped by every error that reports a violation of the
// source contract (ivf-index-schema §8) or of the schema rules checked by
// Check, as opposed to I/O errors and unreadable files.
var ErrContract = errors.New("source contract violated")

// Rule sentinels. An *Error wraps exactly one of them; contract rules are
// also reported as ErrContract.
var (
	ErrEmpty          = errors.New("source is empty")
	ErrMissingField   = errors.New("field is missing")
	ErrFieldType      = errors.New("field has the wrong type")
	ErrUnsupportedKey = errors.New("unsupported key type")
	ErrReservedField  = errors.New("_distance is reserved and must not be a source field")
	ErrVectorKey      = errors.New("vector field used as a key field")
	ErrKeyFields      = errors.New("invalid key field list")
	ErrNullVector     = errors.New("null vector")
	ErrNullElement    = errors.New("null vector element")
	ErrNullKey        = errors.New("null key")
	ErrDimension      = errors.New("wrong vector dimension")
	ErrNaN            = errors.New("NaN vector element")
	ErrInf            = errors.New("vector element is ±Inf as float32")
	ErrZeroNorm       = errors.New("zero-norm vector under cosine")
	ErrDuplicateKey   = errors.New("duplicate source key")
	// ErrBinding reports a bad Binding or option (not a property of the
	// source); it is not a contract violation.
	ErrBinding = errors.New("invalid source binding")
	// ErrCorrupt reports a file that cannot be decoded as Parquet, or whose
	// pages disagree with its footer. It is not a contract violation.
	ErrCorrupt = errors.New("unreadable Parquet file")
	// ErrRowLoc reports a RowLoc outside the table.
	ErrRowLoc = errors.New("row location out of range")
)

var contractRules = []error{
	ErrEmpty, ErrMissingField, ErrFieldType, ErrUnsupportedKey, ErrReservedField,
	ErrVectorKey, ErrKeyFields, ErrNullVector, ErrNullElement, ErrNullKey,
	ErrDimension, ErrNaN, ErrInf, ErrZeroNorm, ErrDuplicateKey,
}

// Error is the error type of this package. Its message reads
//
//	source <source>: file "<key>": row <n> (key <k>): field "<f>": <rule>: <detail>
//
// leaving out the parts that are unknown.
type Error struct {
	Source string // the table (bucket and prefix); may be empty
	File   string // object key of the file; empty when not about one file
	Row    int64  // row index within File; -1 when not about one row
	Key    string // the row's key as "name=value, ..."; empty when unknown
	Field  string // field name; empty when not about one field
	Rule   error  // one of the sentinels in this file
	Detail string // what exactly was wrong
	Err    error  // underlying cause (I/O or decoder error), may be nil
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Source != "" {
		b.WriteString("source ")
		b.WriteString(e.Source)
		b.WriteString(": ")
	}
	if e.File != "" {
		fmt.Fprintf(&b, "file %q: ", e.File)
	}
	if e.Row >= 0 {
		b.WriteString("row ")
		b.WriteString(strconv.FormatInt(e.Row, 10))
		if e.Key != "" {
			b.WriteString(" (key ")
			b.WriteString(e.Key)
			b.WriteString(")")
		}
		b.WriteString(": ")
	}
	if e.Field != "" {
		fmt.Fprintf(&b, "field %q: ", e.Field)
	}
	if e.Rule != nil {
		b.WriteString(e.Rule.Error())
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the rule, ErrContract for contract rules, and the cause.
func (e *Error) Unwrap() []error {
	errs := make([]error, 0, 3)
	if e.Rule != nil {
		errs = append(errs, e.Rule)
		for _, r := range contractRules {
			if r == e.Rule {
				errs = append(errs, ErrContract)
				break
			}
		}
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}
