package server

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/parqdb/parqdb/internal/membudget"
	"github.com/parqdb/parqdb/metadata"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/server/serving"
	"github.com/parqdb/parqdb/storage"
)

// Config configures a Server. Env is required; every other field has a
// documented default.
type Config struct {
	// Env is the warehouse and catalog served.
	Env query.Env
	// Token, when set, is required on every route except /healthz,
	// /readyz, /openapi.yaml and the console's files (/, /console/…).
	Token serving.Token
	// Limits bound requests (zero fields: serving.DefaultLimits).
	Limits serving.Limits
	// Load bounds concurrent searches and rows per answer (zero fields:
	// defaults, see serving.LoadLimits).
	Load serving.LoadLimits
	// Pool tunes the opened indexes and their refresh.
	Pool serving.PoolOptions
	// Logger receives access and event logs (default slog.Default()).
	// Logs never contain tokens or catalog credentials.
	Logger *slog.Logger
	// ShutdownTimeout bounds the graceful shutdown of Serve (default 30 s).
	ShutdownTimeout time.Duration
	// Preload opens every index of the catalog when Serve starts; /readyz
	// answers 503 until that is done.
	Preload bool
	// SQLAllowDirs are directories whose files SQL statements (Flight
	// SQL) may read besides the indexes' sources; nothing else is
	// reachable from SQL.
	SQLAllowDirs []string
	// SQLMemory bounds the SQL engine's memory, in bytes (0: its default,
	// half the process cache budget; package sqlengine).
	SQLMemory int64
}

// Server serves the HTTP JSON API. It is safe for concurrent use; one
// Server may Serve several listeners.
type Server struct {
	cfg     Config
	log     *slog.Logger
	pool    *serving.Pool
	metrics *metrics
	admit   *serving.Admitter
	rowJSON *rowJSON // encoded answer rows (rowjson.go)
	routes  routeTable
	handler http.Handler
	ready   atomic.Bool

	catCheck struct {
		sync.Mutex
		at  time.Time
		err error
	}
}

// New returns a server over cfg.Env. The server owns its Pool; Close
// releases it.
func New(cfg Config) (*Server, error) {
	if cfg.Env.Warehouse == nil || cfg.Env.Catalog == nil {
		return nil, errors.New("server: Config.Env needs a warehouse and a catalog")
	}
	if err := errors.Join(cfg.Limits.Validate(), cfg.Load.Validate()); err != nil {
		return nil, err
	}
	cfg.Load = cfg.Load.WithDefaults()
	cfg.Limits = cfg.Limits.WithDefaults()
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.ShutdownTimeout == 0 {
		cfg.ShutdownTimeout = 30 * time.Second
	}
	wh, st := storage.WithStats(cfg.Env.Warehouse)
	env := query.Env{Warehouse: wh, Catalog: cfg.Env.Catalog}
	if cfg.Pool.Logger == nil {
		cfg.Pool.Logger = cfg.Logger
	}
	s := &Server{cfg: cfg, log: cfg.Logger, pool: serving.NewPool(env, cfg.Pool), admit: serving.NewAdmitter(cfg.Load),
		rowJSON: newRowJSON(membudget.Default)}
	s.metrics = newMetrics(s.pool, st, s.admit)
	s.routes = s.newRoutes()
	s.handler = http.HandlerFunc(s.serveHTTP)
	s.ready.Store(!cfg.Preload)
	return s, nil
}

// Pool returns the server's pool, shared with the Flight SQL front end.
func (s *Server) Pool() *serving.Pool { return s.pool }

// Limits returns the server's effective limits.
func (s *Server) Limits() serving.Limits { return s.cfg.Limits }

// Admitter returns the server's admission control, shared with the
// Flight SQL front end.
func (s *Server) Admitter() *serving.Admitter { return s.admit }

// SQLAllowDirs returns Config.SQLAllowDirs, for the SQL front end.
func (s *Server) SQLAllowDirs() []string { return s.cfg.SQLAllowDirs }

// SQLMemory returns Config.SQLMemory, for the SQL front end.
func (s *Server) SQLMemory() int64 { return s.cfg.SQLMemory }

// Token returns the server's token.
func (s *Server) Token() serving.Token { return s.cfg.Token }

// Logger returns the server's logger.
func (s *Server) Logger() *slog.Logger { return s.log }

// ObserveSQL records one SQL statement for /metrics: its outcome code
// ("ok" or an error code) and duration.
func (s *Server) ObserveSQL(code string, d time.Duration) {
	s.metrics.SQL.WithLabelValues(code).Inc()
	s.metrics.SQLLatency.Observe(d.Seconds())
}

// ObserveSearch records the work of searches made outside the HTTP API
// (the SQL table function).
func (s *Server) ObserveSearch(index string, results []*query.Result) {
	s.metrics.observeSearch(index, results)
}

// Handler returns the HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

// Serve serves HTTP on ln and polls the catalog until ctx ends, then shuts
// down gracefully: it stops accepting, lets in-flight requests finish
// (up to ShutdownTimeout) and returns. It does not close the pool.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       s.cfg.Limits.Timeout + 10*time.Second,
		WriteTimeout:      s.cfg.Limits.Timeout + 30*time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
		ConnContext:       withHeldConn,
	}
	go s.pool.Run(ctx)
	if s.cfg.Preload {
		go func() {
			if err := s.pool.Preload(ctx); err != nil {
				s.log.Warn("preload", "err", err)
			}
			s.ready.Store(true)
		}()
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(holdListener{ln}) }()
	s.log.Info("serving HTTP", "addr", ln.Addr().String(), "catalog", s.cfg.Env.Catalog.String(),
		"warehouse", s.cfg.Env.Warehouse.String(), "token", s.cfg.Token.Set())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.ready.Store(false)
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	err := hs.Shutdown(sctx)
	<-errc
	s.log.Info("HTTP stopped", "addr", ln.Addr().String())
	return err
}

// Close releases the pool (snapshots still in use close when released).
func (s *Server) Close() error {
	s.rowJSON.close()
	return s.pool.Close()
}

// route is a matched request: its label for metrics and its handler.
type route struct {
	label  string
	public bool // no token needed
	method string
	fn     func(w http.ResponseWriter, r *http.Request, name string) error
}

// routeTable is a server's routes, made once (a method value made per
// request would be allocated per request).
type routeTable struct {
	health, ready, openapi, metrics, list, describe, search, calibration, console route
}

func (s *Server) newRoutes() routeTable {
	return routeTable{
		health:      route{"/healthz", true, http.MethodGet, s.health},
		ready:       route{"/readyz", true, http.MethodGet, s.readiness},
		openapi:     route{"/openapi.yaml", true, http.MethodGet, s.openapi},
		metrics:     route{"/metrics", false, http.MethodGet, s.promMetrics},
		list:        route{"/v1/indexes", false, http.MethodGet, s.listIndexes},
		describe:    route{"/v1/indexes/{name}", false, http.MethodGet, s.describe},
		search:      route{"/v1/indexes/{name}/search", false, http.MethodPost, s.search},
		calibration: route{"/v1/indexes/{name}/calibration", false, http.MethodGet, s.calibration},
		// The console's files hold no data: the token is asked for by the
		// console and sent with its API requests (console.go).
		console: route{"/console/", true, http.MethodGet, s.console},
	}
}

func (s *Server) match(path string) (route, string, bool) {
	switch path {
	case "/healthz":
		return s.routes.health, "", true
	case "/readyz":
		return s.routes.ready, "", true
	case "/openapi.yaml":
		return s.routes.openapi, "", true
	case "/metrics":
		return s.routes.metrics, "", true
	case "/v1/indexes", "/v1/indexes/":
		return s.routes.list, "", true
	case "/", "/console":
		return s.routes.console, "", true
	}
	if strings.HasPrefix(path, "/console/") {
		return s.routes.console, "", true
	}
	rest, ok := strings.CutPrefix(path, "/v1/indexes/")
	if !ok {
		return route{}, "", false
	}
	name, action, _ := strings.Cut(rest, "/")
	switch action {
	case "":
		return s.routes.describe, name, true
	case "search":
		return s.routes.search, name, true
	case "calibration":
		return s.routes.calibration, name, true
	}
	return route{}, "", false
}

type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection (deadlines).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(p)
	w.bytes += int64(n)
	return n, err
}

func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	id := newRequestID()
	sw := &statusWriter{ResponseWriter: w}
	sw.Header().Set("X-Request-Id", id)
	rt, name, ok := s.match(r.URL.Path)
	label := rt.label
	var err error
	switch {
	case !ok:
		label = "other"
		err = serving.Errorf(http.StatusNotFound, serving.CodeNotFound, "no route %s; see /openapi.yaml", r.URL.Path)
	case !rt.public && !s.authorized(r):
		sw.Header().Set("WWW-Authenticate", `Bearer realm="parqdb"`)
		err = serving.Errorf(http.StatusUnauthorized, serving.CodeUnauthenticated, "missing or wrong bearer token")
	case r.Method != rt.method && !(rt.method == http.MethodGet && r.Method == http.MethodHead):
		sw.Header().Set("Allow", rt.method)
		err = serving.Errorf(http.StatusMethodNotAllowed, serving.CodeMethodNotAllowed, "%s takes %s, not %s", rt.label, rt.method, r.Method)
	default:
		err = rt.fn(sw, r, name)
	}
	var ae *serving.Error
	if err != nil {
		ae = httpTimeout(serving.AsError(err))
		if sw.status == 0 {
			writeError(sw, ae)
		}
	}
	d := time.Since(start)
	status := sw.status
	if status == 0 {
		status = http.StatusOK
	}
	s.metrics.observeRequest(label, r.Method, status, d)
	level := slog.LevelInfo
	switch {
	case ae != nil && ae.Status >= 500:
		level = slog.LevelError
	case ae == nil && (label == "/healthz" || label == "/readyz" || label == "/metrics"):
		level = slog.LevelDebug
	}
	// The logger drops the record below its level (as Info does, asking
	// Enabled with a background context): the attributes are not made.
	if !s.log.Enabled(context.Background(), level) {
		return
	}
	attrs := []any{"id", id, "method", r.Method, "route", label, "status", status,
		"ms", float64(d.Microseconds()) / 1000, "bytes", sw.bytes, "remote", r.RemoteAddr}
	if name != "" {
		attrs = append(attrs, "index", name)
	}
	switch {
	case ae != nil && ae.Status >= 500:
		s.log.Error("request", append(attrs, "code", ae.Code, "err", errText(ae))...)
	case ae != nil:
		s.log.Info("request", append(attrs, "code", ae.Code, "err", ae.Message)...)
	case level == slog.LevelDebug:
		s.log.Debug("request", attrs...)
	default:
		s.log.Info("request", attrs...)
	}
}

func errText(e *serving.Error) string {
	if e.Err != nil {
		return e.Err.Error()
	}
	return e.Message
}

// errorBody is the JSON shape of every error answer.
type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func writeError(w http.ResponseWriter, e *serving.Error) {
	var b errorBody
	b.Error.Code, b.Error.Message = e.Code, e.Message
	writeJSON(w, e.Status, b)
}

func writeJSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	bw := bufio.NewWriterSize(w, 32<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	return bw.Flush()
}

func (s *Server) health(w http.ResponseWriter, r *http.Request, _ string) error {
	return writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readiness answers 200 when the preload (if any) is done, the server is
// not shutting down and the catalog answered a List within 2 s (checked
// at most once a second).
func (s *Server) readiness(w http.ResponseWriter, r *http.Request, _ string) error {
	if !s.ready.Load() {
		return serving.Errorf(http.StatusServiceUnavailable, serving.CodeUnavailable, "not ready: loading indexes or shutting down")
	}
	s.catCheck.Lock()
	if time.Since(s.catCheck.at) > time.Second {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		_, s.catCheck.err = s.cfg.Env.Catalog.List(ctx)
		cancel()
		s.catCheck.at = time.Now()
	}
	err := s.catCheck.err
	s.catCheck.Unlock()
	if err != nil {
		return &serving.Error{Status: http.StatusServiceUnavailable, Code: serving.CodeUnavailable, Message: "catalog unreachable: " + err.Error(), Err: err}
	}
	return writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

func (s *Server) openapi(w http.ResponseWriter, r *http.Request, _ string) error {
	w.Header().Set("Content-Type", "application/yaml")
	_, err := w.Write(OpenAPI)
	return err
}

func (s *Server) promMetrics(w http.ResponseWriter, r *http.Request, _ string) error {
	promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{}).ServeHTTP(w, r)
	return nil
}

// IndexSummary is one entry of GET /v1/indexes.
type IndexSummary struct {
	Name string `json:"name"`
}

func (s *Server) listIndexes(w http.ResponseWriter, r *http.Request, _ string) error {
	names, err := s.cfg.Env.Catalog.List(r.Context())
	if err != nil {
		return err
	}
	out := struct {
		Indexes []IndexSummary `json:"indexes"`
	}{Indexes: make([]IndexSummary, len(names))}
	for i, n := range names {
		out.Indexes[i] = IndexSummary{Name: n}
	}
	return writeJSON(w, http.StatusOK, out)
}

// IndexDescription is the answer of GET /v1/indexes/{name}.
type IndexDescription struct {
	Name              string            `json:"name"`
	IndexUUID         string            `json:"index_uuid"`
	MetadataLocation  string            `json:"metadata_location"`
	CurrentSnapshotID int64             `json:"current_snapshot_id"`
	Metric            string            `json:"metric"`
	Dimension         int               `json:"dimension"`
	NList             int               `json:"nlist"`
	Encoding          string            `json:"encoding"`
	VectorField       string            `json:"vector_field"`
	KeyFields         []string          `json:"key_fields"`
	IndexedRows       int64             `json:"indexed_rows"`
	Columns           []string          `json:"columns"`
	Source            map[string]string `json:"source"`
	Snapshots         []SnapshotSummary `json:"snapshots"`
	// VectorsFile is the served snapshot's vectors file (profile §4.2),
	// absent when it has none.
	VectorsFile *VectorsFileDescription `json:"vectors_file,omitempty"`
	// Stale is true when the source gained data the served snapshot does
	// not index (query.Staleness, as last checked); StaleReason then says
	// what, as the ParqDB-Stale header does.
	Stale       bool     `json:"stale"`
	StaleReason string   `json:"stale_reason,omitempty"`
	AddedFiles  []string `json:"added_files,omitempty"`
}

// VectorsFileDescription describes a snapshot's vectors file.
type VectorsFileDescription struct {
	Location  string `json:"location"`
	SizeBytes int64  `json:"size_bytes,omitempty"`
	// Error says why the file cannot be used (damaged, foreign, or
	// unreadable): searches that need it fail until it is deleted or
	// repaired (parqdb index verify).
	Error string `json:"error,omitempty"`
}

// SnapshotSummary describes one retained snapshot.
type SnapshotSummary struct {
	SnapshotID  int64 `json:"snapshot_id"`
	TimestampMS int64 `json:"timestamp_ms"`
	IndexedRows int64 `json:"indexed_rows"`
	// Operation is what committed the snapshot (its summary's
	// "operation": create, refresh, optimize, …; absent when not recorded).
	Operation string `json:"operation,omitempty"`
}

// Describe returns the description of the served snapshot of an index.
// Describing its vectors file opens the file if no search has (a HEAD and
// a footer read on S3).
func Describe(ctx context.Context, ix *query.Index) IndexDescription {
	m, loc := ix.Metadata()
	snap := ix.Snapshot()
	d := IndexDescription{
		Name: ix.Name(), IndexUUID: m.IndexUUID, MetadataLocation: loc, CurrentSnapshotID: snap.SnapshotID,
		Metric: snap.Metric, Dimension: ix.Dim(), NList: ix.NList(), VectorField: snap.VectorField,
		KeyFields: snap.SourceKeyFields, IndexedRows: snap.IndexedRows, Columns: ix.Columns(),
		Source: map[string]string{"provider": snap.SourceTable.Provider, "location": snap.SourceTable.Properties["location"]},
	}
	if p, err := snap.IVF(); err == nil {
		d.Encoding = p.PostingEncoding
	}
	if st := ix.Stale(); st != nil {
		d.Stale, d.StaleReason, d.AddedFiles = true, staleSummary(st), st.Added
	}
	for _, sn := range m.Snapshots {
		d.Snapshots = append(d.Snapshots, SnapshotSummary{sn.SnapshotID, sn.TimestampMs, sn.IndexedRows, sn.Summary["operation"]})
	}
	size, ok, err := ix.VectorsFileSize(ctx)
	switch {
	case err != nil:
		d.VectorsFile = &VectorsFileDescription{Location: ix.VectorsFileLocation(), Error: err.Error()}
	case ok:
		d.VectorsFile = &VectorsFileDescription{Location: ix.VectorsFileLocation(), SizeBytes: size}
	}
	return d
}

func (s *Server) describe(w http.ResponseWriter, r *http.Request, name string) error {
	l, err := s.pool.Acquire(r.Context(), name, 0)
	if err != nil {
		return err
	}
	defer l.Release()
	setStaleHeader(w, l.Index().Stale())
	return writeJSON(w, http.StatusOK, Describe(r.Context(), l.Index()))
}

// search answers POST /v1/indexes/{name}/search. Its time limit runs
// from the moment the handler starts and covers reading the body, waiting
// for a running slot, the search, the join, encoding and writing the
// answer (serving.WithTimeLimit; docs/serve.md, "Limits").
func (s *Server) search(w http.ResponseWriter, r *http.Request, name string) error {
	start := time.Now()
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(start.Add(s.cfg.Limits.Timeout))
	var req SearchRequest
	if err := decodeSearch(w, r, s.cfg.Limits.MaxBodyBytes, &req); err != nil {
		if time.Since(start) >= s.cfg.Limits.Timeout {
			ctx, cancel := serving.WithTimeLimit(r.Context(), start, s.cfg.Limits.Timeout)
			defer cancel()
			return serving.TimeoutError(ctx, "reading the body")
		}
		return err
	}
	plan, err := req.plan(s.cfg.Limits)
	if err != nil {
		return err
	}
	if err := s.admit.Limits().CheckRows(plan.opts.K, plan.queries()); err != nil {
		return err
	}
	ctx, cancel := serving.WithTimeLimit(r.Context(), start, plan.timeout)
	defer cancel()
	release, err := s.admit.Admit(ctx)
	if err != nil {
		if serving.AsError(err).Code == serving.CodeOverloaded {
			w.Header().Set("Retry-After", serving.RetryAfter)
		}
		return err
	}
	defer release()
	admitted := time.Now()
	resp, err := s.runSearch(ctx, name, plan)
	if err != nil {
		if ctx.Err() != nil {
			return serving.TimeoutError(ctx, "searching")
		}
		return err
	}
	searched := time.Now()
	// Accept: application/vnd.apache.arrow.stream asks for Arrow IPC;
	// JSON is the default (and the form of every error).
	w.Header().Set("Vary", "Accept")
	setStaleHeader(w, resp.stale)
	var body []byte
	ctype := "application/json"
	if wantsArrow(r) {
		ctype = ArrowStreamType
		body, err = encodeArrow(ctx, resp)
	} else {
		buf := respBufs.Get().(*bytes.Buffer)
		defer func() { // the answer is written (copied) before this runs
			if buf.Cap() <= maxPooledResp {
				respBufs.Put(buf)
			}
		}()
		body, err = encodeResponseTo(ctx, buf, resp)
	}
	if err != nil {
		return err
	}
	w.Header().Set("Server-Timing", serverTiming(start, admitted, searched, time.Now()))
	// The slot is held while writing too: the encoded answer is part of
	// the memory that MaxConcurrent bounds.
	return writeBody(ctx, w, rc, body, ctype)
}

func (s *Server) runSearch(ctx context.Context, name string, plan *searchPlan) (*SearchResponse, error) {
	l, err := s.pool.Acquire(ctx, name, plan.snapshot)
	if err != nil {
		return nil, err
	}
	defer l.Release()
	ix := l.Index()
	if err := plan.checkColumns(ix); err != nil {
		return nil, err
	}
	var qs [][]float32
	if plan.key != nil {
		vals, err := ix.ParseKey(plan.key)
		if err != nil {
			return nil, err
		}
		v, err := ix.VectorOf(ctx, vals)
		if err != nil {
			return nil, err
		}
		qs = [][]float32{v}
	} else if qs, err = plan.queryVectors(ix); err != nil {
		return nil, err
	}
	opts, err := s.cfg.Limits.ResolveRecall(ctx, ix, plan.opts)
	if err != nil {
		return nil, err
	}
	opts.SharedRows = true // the answer only reads the rows (JSON or Arrow)
	results, err := s.admit.SearchBatch(ctx, ix, qs, opts)
	if err != nil {
		return nil, err
	}
	s.metrics.observeSearch(name, results)
	resp := newSearchResponse(ix, results, s.rowJSON, l.State())
	resp.stale = ix.Stale()
	if resp.Columns == nil {
		resp.Columns = []string{metadata.ReservedField}
	}
	return resp, nil
}
