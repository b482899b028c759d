//go:build duckdb

package flightsql

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/parqdb/parqdb/server/serving"
	"github.com/parqdb/parqdb/server/sqlengine"
)

// Available reports whether this binary was built with Flight SQL.
const Available = true

// pendingTTL is how long an executed statement waits for its DoGet.
const pendingTTL = time.Minute

type sqlServer struct {
	flightsql.BaseServer
	srv Backend
	eng *sqlengine.Engine

	sqlInfo []uint32 // the GetSqlInfo ids registered

	mu       sync.Mutex
	pending  map[string]*pending  // results waiting for their DoGet, by handle
	prepared map[string]*prepared // open prepared statements, by handle
}

type pending struct {
	rr      array.RecordReader
	created time.Time
}

// Serve serves Flight SQL in plain text on ln over srv's pool, token and
// limits until ctx ends, then stops gracefully.
func Serve(ctx context.Context, ln net.Listener, srv Backend) error {
	return ServeTLS(ctx, ln, srv, nil)
}

// ServeTLS is Serve over TLS with cfg (clients connect to
// grpc+tls://host:port); a nil cfg serves plain text. cfg must not be
// changed after the call.
func ServeTLS(ctx context.Context, ln net.Listener, srv Backend, cfg *tls.Config) error {
	eng, err := sqlengine.New(srv.Pool(), sqlengine.Options{Limits: srv.Limits(), Admitter: srv.Admitter(), AllowedDirs: srv.SQLAllowDirs(), MemoryLimit: srv.SQLMemory()})
	if err != nil {
		return err
	}
	defer eng.Close()
	s := &sqlServer{srv: srv, eng: eng, pending: map[string]*pending{}, prepared: map[string]*prepared{}}
	s.Alloc = memory.DefaultAllocator
	if err := s.registerSqlInfo(); err != nil {
		return err
	}
	tok := srv.Token()
	var opts []grpc.ServerOption
	if cfg != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(cfg)))
	}
	gs := flight.NewServerWithMiddleware([]flight.ServerMiddleware{{
		Unary:  unaryAuth(tok),
		Stream: streamAuth(tok),
	}}, opts...)
	gs.RegisterFlightService(flightsql.NewFlightServer(s))
	gs.InitListener(ln)
	stopped := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			gs.Shutdown()
		case <-stopped:
		}
	}()
	srv.Logger().Info("serving Flight SQL", "addr", ln.Addr().String(), "token", tok.Set(), "tls", cfg != nil)
	err = gs.Serve()
	close(stopped)
	s.releaseAll()
	if errors.Is(err, grpc.ErrServerStopped) {
		err = nil
	}
	return err
}

func authorized(ctx context.Context, tok serving.Token) bool {
	md, _ := metadata.FromIncomingContext(ctx)
	v := md.Get("authorization")
	return len(v) > 0 && tok.CheckAuthorization(v[0], true) || !tok.Set()
}

var errUnauthenticated = status.Error(codes.Unauthenticated, serving.CodeUnauthenticated+": missing or wrong token (send authorization: Bearer <token>, or basic auth with the token as password)")

func unaryAuth(tok serving.Token) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if !authorized(ctx, tok) {
			return nil, errUnauthenticated
		}
		return h(ctx, req)
	}
}

// streamAuth checks every stream; a Handshake (basic auth from clients
// such as flightsql.Client.AuthenticateBasicToken) that passes answers
// with the bearer header the client uses afterwards.
func streamAuth(tok serving.Token) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		if !authorized(ss.Context(), tok) {
			return errUnauthenticated
		}
		if strings.HasSuffix(info.FullMethod, "/Handshake") {
			md, _ := metadata.FromIncomingContext(ss.Context())
			v := md.Get("authorization")
			if len(v) > 0 && strings.HasPrefix(strings.ToLower(v[0]), "basic ") {
				// The secret goes back to the client that just proved it
				// knows it: a bearer token for later calls.
				raw := strings.TrimSpace(v[0][len("basic "):])
				if pass, ok := serving.BasicPassword(raw); ok {
					_ = ss.SetHeader(metadata.Pairs("authorization", "Bearer "+pass))
				}
			}
			return nil
		}
		return h(srv, ss)
	}
}

// toStatus maps an API error to a gRPC status whose message starts with
// the stable code.
func toStatus(err error) error {
	if errors.Is(err, context.Canceled) {
		return status.Error(codes.Canceled, "canceled: the client canceled the statement")
	}
	ae := serving.AsError(err)
	c := codes.Internal
	switch ae.Status {
	case 400:
		c = codes.InvalidArgument
	case 401:
		c = codes.Unauthenticated
	case 403:
		c = codes.PermissionDenied
	case 404:
		c = codes.NotFound
	case 408, 504:
		c = codes.DeadlineExceeded
	case 409:
		c = codes.FailedPrecondition
	case 413:
		c = codes.ResourceExhausted
	case 503:
		c = codes.Unavailable
	}
	return status.Error(c, ae.Code+": "+ae.Message)
}

func newHandle() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// GetFlightInfoStatement runs the statement (DuckDB binds ivf_search, which
// searches, at planning time) and keeps its result for DoGetStatement.
func (s *sqlServer) GetFlightInfoStatement(ctx context.Context, cmd flightsql.StatementQuery, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.execute(ctx, desc, func(qctx context.Context) (array.RecordReader, error) {
		return s.eng.Query(qctx, cmd.GetQuery())
	})
}

// GetSchemaStatement returns a statement's result schema. DuckDB binds
// ivf_search by running it, so this runs the statement and drops its
// rows.
func (s *sqlServer) GetSchemaStatement(ctx context.Context, cmd flightsql.StatementQuery, _ *flight.FlightDescriptor) (*flight.SchemaResult, error) {
	sc, err := s.schemaOf(ctx, cmd.GetQuery(), nil)
	if err != nil {
		return nil, err
	}
	return &flight.SchemaResult{Schema: flight.SerializeSchema(sc, s.Alloc)}, nil
}

// execute runs a statement with run and keeps its result for DoGet under
// a new ticket. The result streams in a later call, so the statement
// must outlive this one: the server's time limit bounds it, and until
// this call returns the client's cancellation or deadline stops it too.
func (s *sqlServer) execute(ctx context.Context, desc *flight.FlightDescriptor, run func(context.Context) (array.RecordReader, error)) (*flight.FlightInfo, error) {
	start := time.Now()
	qctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.srv.Limits().Timeout)
	stop := context.AfterFunc(ctx, cancel)
	rr, err := run(qctx)
	if !stop() && err == nil {
		// The client went away while the statement started: its
		// result would be cut.
		rr.Release()
		err = ctx.Err()
	}
	if err != nil {
		cancel()
		st := toStatus(err)
		code := serving.AsError(err).Code
		if status.Code(st) == codes.Canceled {
			code = "canceled"
		}
		s.srv.ObserveSQL(code, time.Since(start))
		s.srv.Logger().Info("sql", "code", code, "err", status.Convert(st).Message())
		return nil, st
	}
	s.srv.ObserveSQL("ok", time.Since(start))
	handle := newHandle()
	s.put(handle, &cancelReader{RecordReader: rr, cancel: cancel})
	ticket, err := flightsql.CreateStatementQueryTicket([]byte(handle))
	if err != nil {
		return nil, toStatus(err)
	}
	return &flight.FlightInfo{
		Endpoint:         []*flight.FlightEndpoint{{Ticket: &flight.Ticket{Ticket: ticket}}},
		FlightDescriptor: desc,
		Schema:           flight.SerializeSchema(rr.Schema(), s.Alloc),
		TotalRecords:     -1,
		TotalBytes:       -1,
	}, nil
}

// CancelFlightInfo drops a result that waits for its DoGet, ending its
// statement. A result already streaming stops when its DoGet's client
// cancels that call.
func (s *sqlServer) CancelFlightInfo(_ context.Context, req *flight.CancelFlightInfoRequest) (flight.CancelFlightInfoResult, error) {
	info := req.GetInfo()
	if info == nil {
		return flight.CancelFlightInfoResult{}, status.Error(codes.InvalidArgument, serving.CodeInvalidArgument+": CancelFlightInfo needs the FlightInfo that GetFlightInfo returned")
	}
	st := flight.CancelStatusNotCancellable
	for _, ep := range info.GetEndpoint() {
		if ep.GetTicket() == nil {
			continue
		}
		t, err := flightsql.GetStatementQueryTicket(ep.GetTicket())
		if err != nil {
			continue
		}
		if rr := s.take(string(t.GetStatementHandle())); rr != nil {
			rr.Release()
			st = flight.CancelStatusCancelled
		}
	}
	return flight.CancelFlightInfoResult{Status: st}, nil
}

// cancelReader ends the statement's context on release.
type cancelReader struct {
	array.RecordReader
	cancel context.CancelFunc
}

func (r *cancelReader) Release() { r.RecordReader.Release(); r.cancel() }

func (s *sqlServer) put(handle string, rr array.RecordReader) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	for h, p := range s.pending {
		if now.Sub(p.created) > pendingTTL {
			p.rr.Release()
			delete(s.pending, h)
		}
	}
	s.pending[handle] = &pending{rr: rr, created: now}
}

func (s *sqlServer) take(handle string) array.RecordReader {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pending[handle]
	if p == nil {
		return nil
	}
	delete(s.pending, handle)
	return p.rr
}

func (s *sqlServer) releaseAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for h, p := range s.pending {
		p.rr.Release()
		delete(s.pending, h)
	}
}

// DoGetStatement streams a result kept by GetFlightInfoStatement.
func (s *sqlServer) DoGetStatement(ctx context.Context, t flightsql.StatementQueryTicket) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	rr := s.take(string(t.GetStatementHandle()))
	if rr == nil {
		return nil, nil, status.Error(codes.NotFound, serving.CodeNotFound+": unknown, canceled or expired statement handle (results wait "+pendingTTL.String()+" for DoGet)")
	}
	return s.stream(ctx, rr)
}

// stream sends rr's batches until it ends or ctx (the DoGet call) ends,
// then releases rr.
func (s *sqlServer) stream(ctx context.Context, rr array.RecordReader) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	ch := make(chan flight.StreamChunk)
	go func() {
		defer close(ch)
		defer rr.Release()
		for rr.Next() {
			rec := rr.RecordBatch()
			rec.Retain()
			select {
			case ch <- flight.StreamChunk{Data: rec}:
			case <-ctx.Done():
				rec.Release()
				return
			}
		}
		if err := rr.Err(); err != nil {
			select {
			case ch <- flight.StreamChunk{Err: toStatus(err)}:
			case <-ctx.Done():
			}
		}
	}()
	return rr.Schema(), ch, nil
}
