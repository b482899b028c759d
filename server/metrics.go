package server

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/parqdb/parqdb/internal/membudget"
	"github.com/parqdb/parqdb/query"
	"github.com/parqdb/parqdb/server/serving"
	"github.com/parqdb/parqdb/storage"
)

// metrics are a server's Prometheus collectors, in their own registry so
// that several servers can live in one process (tests).
type metrics struct {
	reg        *prometheus.Registry
	requests   *prometheus.CounterVec   // route, method, code
	latency    *prometheus.HistogramVec // route
	queries    *prometheus.CounterVec   // index
	lists      prometheus.Counter
	candidates prometheus.Counter
	postReqs   prometheus.Counter
	postBytes  prometheus.Counter
	vfReqs     prometheus.Counter
	vfBytes    prometheus.Counter
	srcVecRows prometheus.Counter
	cacheHits  *prometheus.CounterVec // result = hit | miss
	SQL        *prometheus.CounterVec // code
	SQLLatency prometheus.Histogram

	// The children of requests and latency by label values, looked up
	// once (WithLabelValues hashes the values and takes a lock per call).
	reqCounters sync.Map // reqLabels → prometheus.Counter
	latencies   sync.Map // route → prometheus.Observer
}

type reqLabels struct {
	route, method string
	status        int
}

// observeRequest counts one HTTP request and its latency. route is a
// label of the route table or "other"; the method is folded by
// methodLabel and the status by statusLabel, so that no request, however
// odd and whether or not it is authorized, adds a series of its own: the
// series count is bounded by routes × methods × statuses.
func (m *metrics) observeRequest(route, method string, status int, d time.Duration) {
	k := reqLabels{route, methodLabel(method), statusLabel(status)}
	c, ok := m.reqCounters.Load(k)
	if !ok {
		c, _ = m.reqCounters.LoadOrStore(k, m.requests.WithLabelValues(k.route, k.method, strconv.Itoa(k.status)))
	}
	c.(prometheus.Counter).Inc()
	o, ok := m.latencies.Load(route)
	if !ok {
		o, _ = m.latencies.LoadOrStore(route, m.latency.WithLabelValues(route))
	}
	o.(prometheus.Observer).Observe(d.Seconds())
}

// methodLabel is the method label of a request: one of the methods of
// RFC 9110 (and PATCH), or "other" for any other token a client sends.
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return method
	}
	return "other"
}

// statusLabel is the code label of a status: the server writes only
// statuses of net/http's table, and anything else (a status outside
// 100–599) counts as 0, so that the label set stays bounded whatever a
// handler writes.
func statusLabel(status int) int {
	if status < 100 || status > 599 || http.StatusText(status) == "" {
		return 0
	}
	return status
}

func newMetrics(pool *serving.Pool, st *storage.Stats, adm *serving.Admitter) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "parqdb_http_requests_total", Help: "HTTP requests by route, method and status code.",
	}, []string{"route", "method", "code"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "parqdb_http_request_duration_seconds", Help: "HTTP request latency by route.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	}, []string{"route"})
	m.queries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "parqdb_search_queries_total", Help: "Query vectors searched, by index (HTTP and SQL).",
	}, []string{"index"})
	m.lists = prometheus.NewCounter(prometheus.CounterOpts{Name: "parqdb_search_lists_total", Help: "Lists probed."})
	m.candidates = prometheus.NewCounter(prometheus.CounterOpts{Name: "parqdb_search_candidates_total", Help: "Postings rows scored."})
	m.postReqs = prometheus.NewCounter(prometheus.CounterOpts{Name: "parqdb_search_postings_requests_total", Help: "Storage requests for postings not in the cache."})
	m.postBytes = prometheus.NewCounter(prometheus.CounterOpts{Name: "parqdb_search_postings_bytes_total", Help: "Postings bytes fetched from storage."})
	m.vfReqs = prometheus.NewCounter(prometheus.CounterOpts{Name: "parqdb_search_vectors_file_requests_total", Help: "Ranged reads of vectors files for exact vectors (refine, source encoding) not in a cache."})
	m.vfBytes = prometheus.NewCounter(prometheus.CounterOpts{Name: "parqdb_search_vectors_file_bytes_total", Help: "Vectors-file bytes fetched from storage."})
	m.srcVecRows = prometheus.NewCounter(prometheus.CounterOpts{Name: "parqdb_search_source_vector_rows_total", Help: "Exact vectors read from source pages (neither the vector store nor a vectors file held them)."})
	m.cacheHits = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "parqdb_postings_cache_queries_total",
		Help: "Queries by postings cache outcome: hit (every probed list was cached) or miss (at least one was fetched).",
	}, []string{"result"})
	m.SQL = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "parqdb_sql_statements_total", Help: "Flight SQL statements by outcome code (ok or an error code).",
	}, []string{"code"})
	m.SQLLatency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "parqdb_sql_statement_duration_seconds", Help: "Flight SQL statement latency.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2.5, 12),
	})
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f)
	}
	counter := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, f)
	}
	m.reg.MustRegister(
		cacheCollector{membudget.Default},
		m.requests, m.latency, m.queries, m.lists, m.candidates, m.postReqs, m.postBytes, m.vfReqs, m.vfBytes, m.srcVecRows, m.cacheHits, m.SQL, m.SQLLatency,
		gauge("parqdb_open_snapshots", "Index snapshots open now (current, pinned and retiring).",
			func() float64 { return float64(pool.Stats().OpenSnapshots) }),
		counter("parqdb_snapshot_cache_hits_total", "Requests served by an already open snapshot.",
			func() float64 { return float64(pool.Stats().Hits) }),
		counter("parqdb_snapshot_cache_misses_total", "Requests that had to open a snapshot.",
			func() float64 { return float64(pool.Stats().Misses) }),
		counter("parqdb_snapshot_refreshes_total", "Swaps to a newly committed snapshot.",
			func() float64 { return float64(pool.Stats().Refreshes) }),
		counter("parqdb_snapshot_refresh_failures_total", "Failed opens of a newly committed snapshot (the old one kept serving).",
			func() float64 { return float64(pool.Stats().RefreshFailures) }),
		counter("parqdb_storage_requests_total", "Requests to the warehouse (opens, stats, lists, ranged reads).",
			func() float64 { return float64(st.Snapshot().Requests) }),
		counter("parqdb_storage_read_bytes_total", "Bytes read from the warehouse.",
			func() float64 { return float64(st.Snapshot().BytesRead) }),
		gauge("parqdb_search_running", "Search requests running now (at most --max-concurrent).",
			func() float64 { return float64(adm.Stats().Running) }),
		gauge("parqdb_search_waiting", "Search requests waiting for a running slot (at most --max-queue).",
			func() float64 { return float64(adm.Stats().Waiting) }),
		counter("parqdb_search_rejected_total", "Search requests answered 503 overloaded (queue full).",
			func() float64 { return float64(adm.Stats().Rejected) }),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// observeSearch records the work of one search request.
func (m *metrics) observeSearch(index string, results []*query.Result) {
	m.queries.WithLabelValues(index).Add(float64(len(results)))
	for _, r := range results {
		m.lists.Add(float64(r.Stats.Lists))
		m.candidates.Add(float64(r.Stats.Candidates))
		m.postReqs.Add(float64(r.Stats.Requests))
		m.postBytes.Add(float64(r.Stats.BytesRead))
		m.vfReqs.Add(float64(r.Stats.VectorFileRequests))
		m.vfBytes.Add(float64(r.Stats.VectorFileBytes))
		m.srcVecRows.Add(float64(r.Stats.SourceVectorRows))
		if r.Stats.Requests == 0 {
			m.cacheHits.WithLabelValues("hit").Inc()
		} else {
			m.cacheHits.WithLabelValues("miss").Inc()
		}
	}
}

// cacheCollector exports the process cache budget (membudget): its limit,
// and per cache (postings, vectors, pages) the lookups by result, the hit
// ratio, the evictions and the bytes held.
type cacheCollector struct{ b *membudget.Budget }

var (
	cacheLimitDesc = prometheus.NewDesc("parqdb_cache_limit_bytes",
		"Memory budget shared by all caches of all open indexes (--cache-size).", nil, nil)
	cacheUsedDesc = prometheus.NewDesc("parqdb_cache_bytes",
		"Bytes held, by cache.", []string{"cache"}, nil)
	cacheLookupsDesc = prometheus.NewDesc("parqdb_cache_lookups_total",
		"Cache lookups by cache and result (hit or miss).", []string{"cache", "result"}, nil)
	cacheHitRatioDesc = prometheus.NewDesc("parqdb_cache_hit_ratio",
		"Hits / lookups since start, by cache.", []string{"cache"}, nil)
	cacheEvictionsDesc = prometheus.NewDesc("parqdb_cache_evictions_total",
		"Entries evicted to stay within the budget, by cache.", []string{"cache"}, nil)
)

func (c cacheCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{cacheLimitDesc, cacheUsedDesc, cacheLookupsDesc, cacheHitRatioDesc, cacheEvictionsDesc} {
		ch <- d
	}
}

func (c cacheCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(cacheLimitDesc, prometheus.GaugeValue, float64(c.b.Limit()))
	for _, s := range c.b.Stats() {
		ch <- prometheus.MustNewConstMetric(cacheUsedDesc, prometheus.GaugeValue, float64(s.Bytes), s.Name)
		ch <- prometheus.MustNewConstMetric(cacheLookupsDesc, prometheus.CounterValue, float64(s.Hits), s.Name, "hit")
		ch <- prometheus.MustNewConstMetric(cacheLookupsDesc, prometheus.CounterValue, float64(s.Misses), s.Name, "miss")
		ch <- prometheus.MustNewConstMetric(cacheHitRatioDesc, prometheus.GaugeValue, s.HitRate(), s.Name)
		ch <- prometheus.MustNewConstMetric(cacheEvictionsDesc, prometheus.CounterValue, float64(s.Evictions), s.Name)
	}
}
