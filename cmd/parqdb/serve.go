package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/server"
	"github.com/parqdb/parqdb/server/flightsql"
	"github.com/parqdb/parqdb/server/serving"
)

func init() { subcommands = append(subcommands, newServeCmd) }

type serveFlags struct {
	listen, flight, tokenFile string
	tlsCert, tlsKey           string
	refresh, timeout          time.Duration
	shutdown                  time.Duration
	maxK, maxBatch, maxNProbe int
	maxConcurrent, maxQueue   int
	maxRows                   int
	maxBody                   int64
	cacheBytes, vectorBytes   int64
	cacheSize                 string
	logFormat, logLevel       string
	noPreload                 bool
	sqlAllowDirs              []string
	sqlMemory                 string
}

// defaultFlightAddr is the Flight SQL address when the binary has it.
func defaultFlightAddr() string {
	if flightsql.Available {
		return "127.0.0.1:7879"
	}
	return ""
}

func newServeCmd(g *globals) *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve [--listen 127.0.0.1:7878] [--flight 127.0.0.1:7879] [--token-file F] [--tls-cert F --tls-key F]",
		Short: "Serve every index of the catalog over HTTP (JSON) and Arrow Flight SQL",
		Long: `serve answers searches on every index of the warehouse's catalog: an HTTP
JSON API on --listen (OpenAPI document at /openapi.yaml, Prometheus metrics at
/metrics, /healthz and /readyz) and, in the DuckDB build (bin/parqdb-sql:
make build-sql), Arrow Flight SQL on --flight, where SQL runs in an
embedded DuckDB with the table function ivf_search(index, '[vector]', k).

The server keeps no state but caches: several replicas can serve one
warehouse and catalog. It polls the catalog every --refresh-interval and
serves a newly committed snapshot once it has opened it; until then the
previous snapshot keeps serving.

Listening on anything but a loopback address requires --token-file: clients
then send "Authorization: Bearer <token>". --tls-cert and --tls-key serve
both HTTP (https://) and Flight SQL (grpc+tls://) over TLS; the token rule
is the same with or without TLS. Logs go to standard error as JSON.
SIGINT or SIGTERM shuts down gracefully. See docs/serve.md.`,
		Example: `  parqdb serve
  curl -s localhost:7878/v1/indexes/words/search -H 'Content-Type: application/json' -d '{"key": "king", "k": 5}'

  # off loopback: token.txt holds the token clients must send
  parqdb serve --listen 0.0.0.0:7878 --token-file token.txt
  curl -s localhost:7878/v1/indexes/words/search -H "Authorization: Bearer $(head -n 1 token.txt)" \
      -H 'Content-Type: application/json' -d '{"key": "king", "k": 5}'`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			flightSet := cmd.Flags().Changed("flight")
			return runServe(cmd, g, f, flightSet)
		},
	}
	fl := cmd.Flags()
	d := serving.DefaultLimits
	fl.StringVar(&f.listen, "listen", "127.0.0.1:7878", "HTTP address")
	fl.StringVar(&f.flight, "flight", defaultFlightAddr(), "Arrow Flight SQL address (empty: off; needs the DuckDB build, bin/parqdb-sql: make build-sql)")
	fl.StringVar(&f.tokenFile, "token-file", "", "file whose first line is the access token (required off loopback)")
	fl.StringVar(&f.tlsCert, "tls-cert", "", "PEM certificate chain: serve HTTPS and Flight SQL over TLS (grpc+tls://); needs --tls-key")
	fl.StringVar(&f.tlsKey, "tls-key", "", "PEM private key of --tls-cert")
	fl.DurationVar(&f.refresh, "refresh-interval", serving.DefaultRefreshInterval, "how often to poll the catalog for new snapshots")
	fl.DurationVar(&f.timeout, "timeout", d.Timeout, "time limit of one request")
	fl.DurationVar(&f.shutdown, "shutdown-timeout", 30*time.Second, "how long a graceful shutdown waits for in-flight requests")
	fl.IntVar(&f.maxK, "max-k", d.MaxK, "largest k a request may ask for")
	fl.IntVar(&f.maxBatch, "max-batch", d.MaxBatch, "most query vectors in one request")
	fl.IntVar(&f.maxNProbe, "max-nprobe", d.MaxNProbe, "largest nprobe a request may ask for")
	fl.Int64Var(&f.maxBody, "max-body-bytes", d.MaxBodyBytes, "largest request body")
	fl.IntVar(&f.maxConcurrent, "max-concurrent", runtime.GOMAXPROCS(0), "search requests (HTTP and SQL) running at once")
	fl.IntVar(&f.maxQueue, "max-queue", -1, "search requests waiting for a running slot; beyond, 503 overloaded with Retry-After (-1: 4 × --max-concurrent; 0: no queue)")
	fl.IntVar(&f.maxRows, "max-rows", serving.DefaultMaxRows, "most rows one answer may hold (k × query vectors)")
	fl.Int64Var(&f.cacheBytes, "cache-bytes", 0, "postings cache bound per open snapshot, within --cache-size (0: --cache-size alone)")
	fl.Int64Var(&f.vectorBytes, "vector-cache-bytes", 0, "exact-vector store bound per open snapshot, within --cache-size (0: --cache-size alone)")
	addCacheSizeFlag(fl, &f.cacheSize)
	fl.StringVar(&f.logFormat, "log-format", "json", "log format: json or text")
	fl.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fl.BoolVar(&f.noPreload, "no-preload", false, "open indexes on first use instead of at start")
	fl.StringVar(&f.sqlMemory, "sql-memory", "", sqlMemoryHelp)
	fl.StringArrayVar(&f.sqlAllowDirs, "sql-allow-dir", nil, "a directory whose files Flight SQL statements may read (read_parquet …) besides the indexes' sources; repeatable")
	durationRange(fl, "refresh-interval", time.Millisecond, maxDuration, "")
	durationRange(fl, "timeout", time.Millisecond, maxDuration, "")
	durationRange(fl, "shutdown-timeout", 0, maxDuration, "")
	intRange(fl, "max-k", query.MinK, query.MaxK, "")
	intRange(fl, "max-batch", 1, query.MaxBatch, "")
	intRange(fl, "max-nprobe", query.MinNProbe, query.MaxNProbe, "")
	intRange(fl, "max-body-bytes", 1<<10, math.MaxInt64, "")
	intRange(fl, "max-concurrent", 1, 1<<16, "GOMAXPROCS")
	intRange(fl, "max-queue", -1, 1<<20, "4 × --max-concurrent; -1 also selects that, 0 is no queue")
	intRange(fl, "max-rows", 1, query.MaxK*query.MaxBatch, "")
	intRange(fl, "cache-bytes", -1, math.MaxInt64, "the --cache-size budget; -1 disables the cache")
	intRange(fl, "vector-cache-bytes", -1, math.MaxInt64, "the --cache-size budget; -1 disables the store")
	return cmd
}

// loadLimits checks --max-concurrent, --max-queue and --max-rows.
func (f serveFlags) loadLimits() (serving.LoadLimits, error) {
	switch {
	case f.maxConcurrent < 1:
		return serving.LoadLimits{}, usagef("--max-concurrent %d: want at least 1", f.maxConcurrent)
	case f.maxQueue < -1:
		return serving.LoadLimits{}, usagef("--max-queue %d: want -1 (4 × --max-concurrent), 0 (no queue) or more", f.maxQueue)
	case f.maxRows < 1:
		return serving.LoadLimits{}, usagef("--max-rows %d: want at least 1", f.maxRows)
	}
	l := serving.LoadLimits{MaxConcurrent: f.maxConcurrent, MaxQueue: f.maxQueue, MaxRows: f.maxRows}
	switch f.maxQueue {
	case -1:
		l.MaxQueue = 4 * f.maxConcurrent
	case 0:
		l.MaxQueue = -1 // serving.LoadLimits: negative is no queue
	}
	return l, nil
}

func newLogger(format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, usagef("--log-level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, opts)), nil
	case "text":
		return slog.New(slog.NewTextHandler(os.Stderr, opts)), nil
	}
	return nil, usagef("--log-format %q: want json or text", format)
}

// serveReady, when set (tests), receives the bound HTTP and Flight
// addresses once both listen.
var serveReady func(httpAddr, flightAddr string)

func runServe(cmd *cobra.Command, g *globals, f serveFlags, flightSet bool) error {
	if err := applyCacheSize(f.cacheSize); err != nil {
		return err
	}
	log, err := newLogger(f.logFormat, f.logLevel)
	if err != nil {
		return err
	}
	var tok serving.Token
	if f.tokenFile != "" {
		if tok, err = serving.ReadTokenFile(f.tokenFile); err != nil {
			return usageError{err}
		}
	}
	if err := serving.CheckListen(f.listen, tok); err != nil {
		return usageError{err}
	}
	var tlsCfg *tls.Config
	if f.tlsCert != "" || f.tlsKey != "" {
		if tlsCfg, err = server.LoadTLS(f.tlsCert, f.tlsKey); err != nil {
			return usageError{err}
		}
	}
	sqlMemory, err := parseSQLMemory(f.sqlMemory)
	if err != nil {
		return err
	}
	for _, d := range f.sqlAllowDirs {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			return usagef("--sql-allow-dir %s: not a directory", d)
		}
	}
	load, err := f.loadLimits()
	if err != nil {
		return err
	}
	if f.flight != "" {
		if !flightsql.Available {
			if flightSet {
				return usagef("--flight: this parqdb was built without Flight SQL; the DuckDB build is bin/parqdb-sql: make build-sql (or go build -tags duckdb,duckdb_arrow -o bin/parqdb-sql ./cmd/parqdb; see docs/serve.md)")
			}
			f.flight = ""
		} else if err := serving.CheckListen(f.flight, tok); err != nil {
			return usageError{fmt.Errorf("--flight: %w", err)}
		}
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	e, err := openEnv(ctx, g)
	if err != nil {
		return err
	}
	defer e.Close()
	srv, err := server.New(server.Config{
		Env:   query.Env{Warehouse: e.wh, Catalog: e.cat},
		Token: tok,
		Limits: serving.Limits{MaxBodyBytes: f.maxBody, MaxK: f.maxK, MaxNProbe: f.maxNProbe,
			MaxBatch: f.maxBatch, Timeout: f.timeout},
		Load: load,
		Pool: serving.PoolOptions{RefreshInterval: f.refresh, CacheBytes: f.cacheBytes,
			VectorCacheBytes: f.vectorBytes, Logger: log},
		Logger: log, ShutdownTimeout: f.shutdown, Preload: !f.noPreload,
		SQLAllowDirs: f.sqlAllowDirs, SQLMemory: sqlMemory,
	})
	if err != nil {
		return usageError{err}
	}
	defer srv.Close()
	hln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return err
	}
	if tlsCfg != nil {
		hcfg := tlsCfg.Clone()
		hcfg.NextProtos = []string{"http/1.1"}
		hln = tls.NewListener(hln, hcfg)
	}
	var fln net.Listener
	if f.flight != "" {
		if fln, err = net.Listen("tcp", f.flight); err != nil {
			hln.Close()
			return err
		}
	}
	if serveReady != nil {
		fa := ""
		if fln != nil {
			fa = fln.Addr().String()
		}
		serveReady(hln.Addr().String(), fa)
	}
	grp, gctx := errgroup.WithContext(ctx)
	grp.Go(func() error { return srv.Serve(gctx, hln) })
	if fln != nil {
		grp.Go(func() error { return flightsql.ServeTLS(gctx, fln, srv, tlsCfg) })
	}
	err = grp.Wait()
	if err != nil && !errors.Is(err, context.Canceled) {
		log.Error("serve", "err", err)
		return err
	}
	log.Info("stopped", "reason", strings.TrimSpace(fmt.Sprint(context.Cause(ctx))))
	return nil
}
