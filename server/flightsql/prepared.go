//go:build duckdb

package flightsql

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/duckdb/duckdb-go/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parqdb/parqdb/server/serving"
)

// maxPrepared bounds the prepared statements open at once (all clients
// together), so that clients that never close theirs cannot exhaust
// memory.
const maxPrepared = 4096

// preparedIdle is how long a prepared statement stays open unused: a
// client that went away without closing its statements (a crashed
// notebook) does not hold them, or a share of maxPrepared, for ever.
var preparedIdle = 30 * time.Minute

// prepared is an open prepared statement. Its fields do not change once
// stored, except args, which DoPut replaces under sqlServer.mu.
type prepared struct {
	statement string
	params    *arrow.Schema // parameter_1, parameter_2, … in order
	dataset   *arrow.Schema // nil until known (statements with parameters)
	args      []any         // bound values; nil until bound
	used      time.Time     // last created, bound or run
}

// paramSchema is the Arrow schema of a statement's parameters. DuckDB
// cannot type a parameter whose type only the table function's bind
// would tell (such as k in ivf_search); those are Null-typed, and any
// value binds to them.
func paramSchema(ts []duckdb.Type) *arrow.Schema {
	fields := make([]arrow.Field, len(ts))
	for i, t := range ts {
		var dt arrow.DataType = arrow.Null
		switch t {
		case duckdb.TYPE_BOOLEAN:
			dt = arrow.FixedWidthTypes.Boolean
		case duckdb.TYPE_TINYINT, duckdb.TYPE_SMALLINT, duckdb.TYPE_INTEGER:
			dt = arrow.PrimitiveTypes.Int32
		case duckdb.TYPE_BIGINT:
			dt = arrow.PrimitiveTypes.Int64
		case duckdb.TYPE_FLOAT:
			dt = arrow.PrimitiveTypes.Float32
		case duckdb.TYPE_DOUBLE:
			dt = arrow.PrimitiveTypes.Float64
		case duckdb.TYPE_VARCHAR:
			dt = arrow.BinaryTypes.String
		case duckdb.TYPE_BLOB:
			dt = arrow.BinaryTypes.Binary
		}
		fields[i] = arrow.Field{Name: fmt.Sprintf("parameter_%d", i+1), Type: dt, Nullable: true}
	}
	return arrow.NewSchema(fields, nil)
}

func notPrepared() error {
	return status.Error(codes.NotFound, serving.CodeNotFound+": unknown, closed or expired prepared statement handle (statements unused for "+preparedIdle.String()+" are closed; create it again with CreatePreparedStatement)")
}

// CreatePreparedStatement parses and binds a statement and returns its
// parameter schema and, when it has no parameters, its result schema.
// With parameters the result schema is known once they are bound
// (GetSchemaPreparedStatement, or the FlightInfo of the execution):
// ivf_search types its columns when it runs.
func (s *sqlServer) CreatePreparedStatement(ctx context.Context, req flightsql.ActionCreatePreparedStatementRequest) (flightsql.ActionCreatePreparedStatementResult, error) {
	var res flightsql.ActionCreatePreparedStatementResult
	if len(req.GetTransactionId()) > 0 {
		return res, status.Error(codes.InvalidArgument, serving.CodeInvalidArgument+": the server is read-only and has no transactions; prepare the statement without one")
	}
	p, err := s.eng.Prepare(ctx, req.GetQuery())
	if err != nil {
		return res, toStatus(err)
	}
	ps := &prepared{statement: req.GetQuery(), params: paramSchema(p.Params)}
	if len(p.Params) == 0 {
		if ps.dataset, err = s.schemaOf(ctx, ps.statement, nil); err != nil {
			return res, err
		}
	}
	handle := newHandle()
	ps.used = time.Now()
	s.mu.Lock()
	for h, p := range s.prepared {
		if ps.used.Sub(p.used) > preparedIdle {
			delete(s.prepared, h)
		}
	}
	if len(s.prepared) >= maxPrepared {
		s.mu.Unlock()
		return res, status.Error(codes.ResourceExhausted, fmt.Sprintf("%s: %d prepared statements are open; close some (ClosePreparedStatement) first", serving.CodeOutOfRange, maxPrepared))
	}
	s.prepared[handle] = ps
	s.mu.Unlock()
	isUpdate := false
	return flightsql.ActionCreatePreparedStatementResult{
		Handle: []byte(handle), DatasetSchema: ps.dataset, ParameterSchema: ps.params, IsUpdate: &isUpdate,
	}, nil
}

// schemaOf runs a statement to learn its result schema.
func (s *sqlServer) schemaOf(ctx context.Context, statement string, args []any) (*arrow.Schema, error) {
	ctx, cancel := context.WithTimeout(ctx, s.srv.Limits().Timeout)
	defer cancel()
	rr, err := s.eng.QueryArgs(ctx, statement, args)
	if err != nil {
		return nil, toStatus(err)
	}
	defer rr.Release()
	return rr.Schema(), nil
}

// lookup returns a copy of a prepared statement and marks it used.
func (s *sqlServer) lookup(handle []byte) (prepared, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.prepared[string(handle)]
	if p == nil {
		return prepared{}, notPrepared()
	}
	p.used = time.Now()
	return *p, nil
}

// bound returns a prepared statement's arguments, or an error when it
// has parameters that are not bound.
func (p prepared) bound() ([]any, error) {
	if n := len(p.params.Fields()); n > 0 && p.args == nil {
		return nil, status.Error(codes.InvalidArgument, fmt.Sprintf("%s: the statement has %d parameter(s); bind them (DoPut) before executing it", serving.CodeInvalidArgument, n))
	}
	return p.args, nil
}

// ClosePreparedStatement forgets a prepared statement.
func (s *sqlServer) ClosePreparedStatement(_ context.Context, req flightsql.ActionClosePreparedStatementRequest) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := string(req.GetPreparedStatementHandle())
	if s.prepared[h] == nil {
		return notPrepared()
	}
	delete(s.prepared, h)
	return nil
}

// DoPutPreparedStatementQuery binds one row of parameter values (the
// columns in parameter order) to a prepared statement; a list of numbers
// (LIST, LARGE_LIST or FIXED_SIZE_LIST of integers or floats) binds as
// its JSON text, the form ivf_search takes a query vector in.
func (s *sqlServer) DoPutPreparedStatementQuery(_ context.Context, cmd flightsql.PreparedStatementQuery, rdr flight.MessageReader, _ flight.MetadataWriter) ([]byte, error) {
	p, err := s.lookup(cmd.GetPreparedStatementHandle())
	if err != nil {
		return nil, err
	}
	want := len(p.params.Fields())
	var args []any
	rows := 0
	for rdr.Next() {
		rec := rdr.RecordBatch()
		if int(rec.NumCols()) != want {
			return nil, badBind("the statement has %d parameter(s); got %d column(s)", want, rec.NumCols())
		}
		for r := 0; r < int(rec.NumRows()); r++ {
			rows++
			if rows > 1 {
				continue
			}
			args = make([]any, want)
			for c := range want {
				if args[c], err = argValue(rec.Column(c), r); err != nil {
					return nil, badBind("parameter %d (%s): %v", c+1, rec.ColumnName(c), err)
				}
			}
		}
	}
	if err := rdr.Err(); err != nil {
		return nil, badBind("reading the parameters: %v", err)
	}
	if rows != 1 && want > 0 {
		return nil, badBind("bind exactly one row of parameters; got %d (execute once per row, or join with a table of the values in SQL)", rows)
	}
	if args == nil {
		args = []any{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.prepared[string(cmd.GetPreparedStatementHandle())]
	if cur == nil {
		return nil, notPrepared()
	}
	cp := *cur
	cp.args = args
	cp.used = time.Now()
	s.prepared[string(cmd.GetPreparedStatementHandle())] = &cp
	return cmd.GetPreparedStatementHandle(), nil
}

func badBind(format string, args ...any) error {
	return status.Error(codes.InvalidArgument, serving.CodeInvalidArgument+": "+fmt.Sprintf(format, args...))
}

// argValue converts one bound Arrow value to what DuckDB binds: nil,
// bool, int64, uint64, float64, string, []byte, or a list of numbers as
// JSON text.
func argValue(a arrow.Array, i int) (any, error) {
	if a.IsNull(i) {
		return nil, nil
	}
	switch a := a.(type) {
	case *array.Boolean:
		return a.Value(i), nil
	case *array.Int8:
		return int64(a.Value(i)), nil
	case *array.Int16:
		return int64(a.Value(i)), nil
	case *array.Int32:
		return int64(a.Value(i)), nil
	case *array.Int64:
		return a.Value(i), nil
	case *array.Uint8:
		return int64(a.Value(i)), nil
	case *array.Uint16:
		return int64(a.Value(i)), nil
	case *array.Uint32:
		return int64(a.Value(i)), nil
	case *array.Uint64:
		return a.Value(i), nil
	case *array.Float32:
		return float64(a.Value(i)), nil
	case *array.Float64:
		return a.Value(i), nil
	case *array.String:
		return a.Value(i), nil
	case *array.LargeString:
		return a.Value(i), nil
	case *array.StringView:
		return a.Value(i), nil
	case *array.Binary:
		return append([]byte(nil), a.Value(i)...), nil
	case *array.LargeBinary:
		return append([]byte(nil), a.Value(i)...), nil
	case array.ListLike:
		start, end := a.ValueOffsets(i)
		return numberList(a.ListValues(), int(start), int(end))
	}
	return nil, fmt.Errorf("type %s cannot be bound; bind a boolean, integer, float, string, binary or a list of numbers", a.DataType())
}

// numberList writes vals[start:end] as a JSON array of numbers.
func numberList(vals arrow.Array, start, end int) (string, error) {
	var b strings.Builder
	b.WriteByte('[')
	for j := start; j < end; j++ {
		if j > start {
			b.WriteString(", ")
		}
		if vals.IsNull(j) {
			return "", fmt.Errorf("list element %d is NULL; a query vector needs a number in every element", j-start)
		}
		switch v := vals.(type) {
		case *array.Float32:
			b.WriteString(strconv.FormatFloat(float64(v.Value(j)), 'g', -1, 32))
		case *array.Float64:
			b.WriteString(strconv.FormatFloat(v.Value(j), 'g', -1, 64))
		case *array.Float16:
			b.WriteString(strconv.FormatFloat(float64(v.Value(j).Float32()), 'g', -1, 32))
		case *array.Int8:
			b.WriteString(strconv.FormatInt(int64(v.Value(j)), 10))
		case *array.Int16:
			b.WriteString(strconv.FormatInt(int64(v.Value(j)), 10))
		case *array.Int32:
			b.WriteString(strconv.FormatInt(int64(v.Value(j)), 10))
		case *array.Int64:
			b.WriteString(strconv.FormatInt(v.Value(j), 10))
		default:
			return "", fmt.Errorf("a list of %s cannot be bound; bind a list of floats or integers (a query vector)", vals.DataType())
		}
	}
	b.WriteByte(']')
	return b.String(), nil
}

// GetSchemaPreparedStatement returns a prepared statement's result
// schema: known at creation without parameters, else once they are bound.
func (s *sqlServer) GetSchemaPreparedStatement(ctx context.Context, cmd flightsql.PreparedStatementQuery, _ *flight.FlightDescriptor) (*flight.SchemaResult, error) {
	p, err := s.lookup(cmd.GetPreparedStatementHandle())
	if err != nil {
		return nil, err
	}
	sc := p.dataset
	if sc == nil {
		args, err := p.bound()
		if err != nil {
			return nil, err
		}
		if sc, err = s.schemaOf(ctx, p.statement, args); err != nil {
			return nil, err
		}
	}
	return &flight.SchemaResult{Schema: flight.SerializeSchema(sc, s.Alloc)}, nil
}

// GetFlightInfoPreparedStatement runs a prepared statement with its bound
// parameters and keeps the result for DoGet, like GetFlightInfoStatement.
func (s *sqlServer) GetFlightInfoPreparedStatement(ctx context.Context, cmd flightsql.PreparedStatementQuery, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	p, err := s.lookup(cmd.GetPreparedStatementHandle())
	if err != nil {
		return nil, err
	}
	args, err := p.bound()
	if err != nil {
		return nil, err
	}
	return s.execute(ctx, desc, func(qctx context.Context) (array.RecordReader, error) {
		return s.eng.QueryArgs(qctx, p.statement, args)
	})
}

// DoGetPreparedStatement runs a prepared statement and streams its
// result, for clients that send the command itself as the ticket.
func (s *sqlServer) DoGetPreparedStatement(ctx context.Context, cmd flightsql.PreparedStatementQuery) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	p, err := s.lookup(cmd.GetPreparedStatementHandle())
	if err != nil {
		return nil, nil, err
	}
	args, err := p.bound()
	if err != nil {
		return nil, nil, err
	}
	qctx, cancel := context.WithTimeout(ctx, s.srv.Limits().Timeout)
	rr, err := s.eng.QueryArgs(qctx, p.statement, args)
	if err != nil {
		cancel()
		return nil, nil, toStatus(err)
	}
	return s.stream(ctx, &cancelReader{RecordReader: rr, cancel: cancel})
}
