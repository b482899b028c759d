package serving

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/filter"
	"github.com/parqdb/parqdb/internal/errclass"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/storage"
)

// Error codes. They are part of the API contract (openapi.yaml, Error
// schema): clients may branch on them, so a code never changes meaning.
const (
	CodeMalformedJSON        = "malformed_json"         // 400: the body is not valid JSON
	CodeInvalidArgument      = "invalid_argument"       // 400: a field is missing, unknown, of the wrong type or inconsistent
	CodeWrongDimension       = "wrong_dimension"        // 400: a query vector's length differs from the index dimension
	CodeInvalidVector        = "invalid_vector"         // 400: NaN, infinity, float32 overflow or (cosine) zero norm
	CodeOutOfRange           = "out_of_range"           // 400: k, nprobe, refine, batch size or timeout outside its limits
	CodeUnknownColumn        = "unknown_column"         // 400: a requested column is not a source column
	CodeFilterSyntax         = "filter_syntax"          // 400: "where" is not a valid predicate
	CodeFilterColumn         = "filter_unknown_column"  // 400: "where" names a column the source does not have
	CodeFilterType           = "filter_type_mismatch"   // 400: "where" compares a column with a literal of another type, or filters an unsupported column
	CodeSQLError             = "sql_error"              // 400: the SQL statement failed to parse, bind or run
	CodeUnauthenticated      = "unauthenticated"        // 401: missing or wrong token
	CodeSourceNotBound       = "source_not_bound"       // 403: the snapshot reads a source the catalog does not bind
	CodeIndexNotFound        = "index_not_found"        // 404: no index has that name
	CodeSnapshotNotFound     = "snapshot_not_found"     // 404: the snapshot is not retained
	CodeKeyNotFound          = "key_not_found"          // 404: no source row has that key
	CodeKeyNotIndexed        = "key_not_indexed"        // 404: only a source file added since the snapshot was built has that key
	CodeNotFound             = "not_found"              // 404: no such route
	CodeMethodNotAllowed     = "method_not_allowed"     // 405
	CodeTimeout              = "timeout"                // 408: the request took longer than its time limit
	CodeStaleIndex           = "stale_index"            // 409: the source changed since the snapshot was built
	CodeBodyTooLarge         = "body_too_large"         // 413: the body exceeds the size limit
	CodeUnsupportedMediaType = "unsupported_media_type" // 415: Content-Type is not application/json
	CodeInternal             = "internal"               // 500
	CodeUnavailable          = "unavailable"            // 503: not ready, or shutting down
)

// Error codes of data problems found while answering: the request is
// valid, but what the index reads is not (see dataError).
const (
	CodeSourceInvalid      = "source_invalid"      // 409: source rows break the source contract (duplicate or null key, bad vector) or a source file does not decode
	CodeIndexCorrupt       = "index_corrupt"       // 409: an index file is missing or disagrees with the metadata
	CodeStorageUnavailable = "storage_unavailable" // 503: reading the warehouse or the source failed
)

// Error is an API error: an HTTP status, a stable Code and a message for
// people. It is what every failed request answers, as
// {"error": {"code": …, "message": …}}.
type Error struct {
	Status  int
	Code    string
	Message string
	Err     error // the cause, logged but not sent; may be nil
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the given status, code and formatted
// message, and no cause.
func Errorf(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// AsError maps any error from the search pipeline to an *Error: catalog
// and query sentinels to their 4xx codes, context deadlines to timeout,
// data problems (a bad source, a damaged index, failed storage reads) to
// their 409 and 503 codes, and everything else to internal.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	msg := err.Error()
	switch {
	case errors.Is(err, catalog.ErrNotFound):
		return &Error{http.StatusNotFound, CodeIndexNotFound, msg, err}
	case errors.Is(err, catalog.ErrInvalidName):
		return &Error{http.StatusBadRequest, CodeInvalidArgument, msg, err}
	case errors.Is(err, query.ErrNoSnapshot):
		return &Error{http.StatusNotFound, CodeSnapshotNotFound, msg, err}
	case errors.Is(err, query.ErrKeyNotIndexed):
		return &Error{http.StatusNotFound, CodeKeyNotIndexed, msg, err}
	case errors.Is(err, query.ErrKeyNotFound):
		return &Error{http.StatusNotFound, CodeKeyNotFound, msg, err}
	case errors.Is(err, query.ErrStale):
		return &Error{http.StatusConflict, CodeStaleIndex, msg, err}
	case errors.Is(err, filter.ErrSyntax):
		return &Error{http.StatusBadRequest, CodeFilterSyntax, msg, err}
	case errors.Is(err, filter.ErrUnknownColumn):
		return &Error{http.StatusBadRequest, CodeFilterColumn, msg, err}
	case errors.Is(err, filter.ErrType):
		return &Error{http.StatusBadRequest, CodeFilterType, msg, err}
	case errors.Is(err, query.ErrBadQuery):
		return &Error{http.StatusBadRequest, CodeInvalidArgument, msg, err}
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{http.StatusRequestTimeout, CodeTimeout, "the request exceeded its time limit", err}
	case errors.Is(err, ErrSourceNotBound):
		return &Error{http.StatusForbidden, CodeSourceNotBound, msg, err}
	case errors.Is(err, ErrClosed):
		return &Error{http.StatusServiceUnavailable, CodeUnavailable, msg, err}
	}
	if e := dataError(err, msg); e != nil {
		return e
	}
	return &Error{http.StatusInternalServerError, CodeInternal, msg, err}
}

// Code classifies err as AsError does and returns its stable code and
// HTTP status (code "internal" and 500 for an error no class matches).
// Front ends other than HTTP (SQL, Flight SQL, the C API) map the code to
// their own status.
func Code(err error) (code string, httpStatus int) {
	e := AsError(err)
	return e.Code, e.Status
}

// dataError classifies the errors caused by the data a search reads — the
// source or the index's own files — rather than by the request or a bug:
// none of them is a 500, and each code names what an operator must look
// at. It returns nil for any other error.
func dataError(err error, msg string) *Error {
	var se *storage.Error
	switch {
	case errors.Is(err, query.ErrSourceInvalid):
		return &Error{http.StatusConflict, CodeSourceInvalid, msg, err}
	case errors.Is(err, query.ErrSourceUnreadable) && (errors.Is(err, storage.ErrNotExist) || errors.Is(err, storage.ErrChanged)):
		// A source file was removed or replaced after the index was opened.
		return &Error{http.StatusConflict, CodeStaleIndex, msg, err}
	case errors.Is(err, storage.ErrChanged):
		// Index files are immutable: a replaced one was tampered with.
		return &Error{http.StatusConflict, CodeIndexCorrupt, msg, err}
	case errors.As(err, &se) && !errors.Is(err, storage.ErrNotExist) && !errors.Is(err, context.Canceled):
		return &Error{http.StatusServiceUnavailable, CodeStorageUnavailable, msg, err}
	case errors.Is(err, query.ErrSourceUnreadable):
		return &Error{http.StatusConflict, CodeSourceInvalid, msg, err}
	case errors.Is(err, errclass.ErrCorrupt), errors.Is(err, storage.ErrNotExist):
		// Damaged index data, whichever package found it (errclass), or
		// a missing index file.
		return &Error{http.StatusConflict, CodeIndexCorrupt, msg, err}
	}
	return nil
}

// ErrClosed means the pool was closed (the server is shutting down).
var ErrClosed = errors.New("server is shutting down")

// ErrSourceNotBound means a snapshot reads a source location other than
// the one the catalog binds to the index; the server refuses to read it.
var ErrSourceNotBound = errors.New("snapshot source is not the source bound in the catalog")
