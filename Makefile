# ParqDB developer targets. `make test` is the one test command (README, .ci/run).
TOOLS ?= $(HOME)/.cache/parqdb-tools
export PATH := $(TOOLS)/bin:$(PATH)
GO ?= go

.PHONY: all build build-sql python python-lib test-python test test-short test-race test-race-core lint bench fuzz fuzz-smoke demo deps services services-stop

all: build

# VERSION is what `parqdb --version` prints and every written Parquet file
# records in created_by (internal/version).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null)
# STRIP drops the symbol table and debug information (-s -w): the CLI is
# 40% smaller (docs/benchmarks.md, "Binary size"). `make build STRIP=`
# keeps them, for a debugger or a size breakdown (bench/binsize).
STRIP ?= -s -w
LDFLAGS = $(STRIP) -X github.com/parqdb/parqdb/internal/version.Version=$(VERSION)
# TAGS are extra build tags of build and build-sql: TAGS=noiceberg leaves
# out the Apache Iceberg source provider (iceberg:// sources) and
# iceberg-go, a third of the binary (docs/iceberg.md, "Binary size").
TAGS ?=
comma := ,

# One binary name per build: build (and demo) write bin/parqdb, build-sql
# writes bin/parqdb-sql, so neither replaces the other (README, docs/serve.md
# and the errors of a binary without SQL name the same files).
build:
	@echo "building bin/parqdb: the first build downloads the Go modules and compiles them, which takes minutes; later builds take seconds"
	$(GO) build -ldflags "$(LDFLAGS)" -tags "$(TAGS)" -o bin/parqdb ./cmd/parqdb

# build-sql builds parqdb with the embedded DuckDB SQL engine (cgo) as
# bin/parqdb-sql: `parqdb-sql sql` and the Flight SQL port of
# `parqdb-sql serve`. The first build compiles DuckDB (minutes).
build-sql:
	@echo "building bin/parqdb-sql with DuckDB (cgo): the first build compiles DuckDB and takes minutes"
	$(GO) build -ldflags "$(LDFLAGS)" -tags "$(DUCKDB_TAGS)$(if $(TAGS),$(comma)$(TAGS))" -o bin/parqdb-sql ./cmd/parqdb

# python-lib builds the C API (cmd/libparqdb) as the shared library the
# Python package loads, and the package's C extension (parqdb/_core.c),
# into python/parqdb/ (for the tests and PYTHONPATH use from the checkout);
# python also builds the wheel into python/dist/ (pip wheel with Debian's
# setuptools, no PyPI). docs/python.md.
PYTHON ?= /usr/bin/python3
python-lib:
	$(GO) build -buildmode=c-shared -ldflags "$(LDFLAGS)" -o python/parqdb/libparqdb.so ./cmd/libparqdb
	rm -f python/parqdb/libparqdb.h
	cd python && $(PYTHON) setup.py -q build_ext --inplace

python: python-lib
	$(PYTHON) -m pip wheel --no-build-isolation --no-deps -w python/dist ./python

# test-python runs the Python package's tests (pytest, Debian's
# python3-pytest) against the library and the CLI built from this tree;
# make test runs it after the Go tests.
test-python: deps build python-lib
	cd python && PARQDB_CLI=$(CURDIR)/bin/parqdb PYTHONPATH=. $(PYTHON) -m pytest -q -p no:cacheprovider tests

# deps installs PostgreSQL, versitygw and staticcheck when missing.
deps:
	./scripts/test-deps.sh

# services starts a local S3 server (versitygw) and PostgreSQL on 127.0.0.1,
# data in $(SERVICES_DIR), for trying S3 warehouses and PostgreSQL catalogs,
# and prints the settings to export (also in $(SERVICES_DIR)/env);
# services-stop stops them and removes their data (scripts/services.sh).
SERVICES_DIR ?= services
services: deps
	@./scripts/services.sh start $(SERVICES_DIR)

services-stop:
	@./scripts/services.sh stop $(SERVICES_DIR)

# test installs what the tests need (scripts/test-deps.sh; once), then runs
# every test. Tests that need PostgreSQL or an S3 server start private
# instances on 127.0.0.1. The second run builds the SQL engine (DuckDB, cgo)
# behind its build tags and tests the Flight SQL server, `parqdb sql` and the
# examples that need them (cmd/parqdb/examples_test.go): the packages the
# tags change (package server builds the same with them, so it is not run
# again; in cmd/parqdb the tests of a CLI built without the tags skip).
DUCKDB_TAGS = duckdb,duckdb_arrow
DUCKDB_PKGS = ./server/flightsql/... ./server/sqlengine/... ./cmd/parqdb/...
test: deps
	$(GO) test -count=1 -timeout 25m ./...
	$(GO) test -count=1 -timeout 15m -tags $(DUCKDB_TAGS) $(DUCKDB_PKGS)
	$(MAKE) --no-print-directory test-python

# test-short is the fast loop (README, "Tests"): go test -short skips the
# tests that start PostgreSQL or S3 servers, child processes, the built CLI
# or a pseudo-terminal, and the long sizes (internal/testenv.SkipShort, the
# one rule), so it needs nothing from make deps.
test-short:
	$(GO) test -short -count=1 ./...

test-race: deps
	$(GO) test -race -count=1 -timeout 40m ./...

# test-race-core runs the race detector (cgo: gcc) over the packages with
# concurrency, a part of make test-race that fits CI's time budget (.ci/run).
RACE_PKGS = ./query/... ./server/... ./storage/... ./catalog/... ./filter/... ./internal/membudget/ ./knnjoin/
test-race-core: deps
	$(GO) test -race -count=1 -timeout 25m $(RACE_PKGS)

lint: deps
	$(GO) mod tidy -diff || (echo 'go.mod/go.sum need go mod tidy'; exit 1)
	test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); echo 'gofmt needed'; exit 1)
	$(GO) vet ./...
	$(GO) vet -tags $(DUCKDB_TAGS) $(DUCKDB_PKGS)
	staticcheck ./...
	staticcheck -tags $(DUCKDB_TAGS) $(DUCKDB_PKGS)

# bench runs every benchmark once so that they keep working (CI); use
# BENCH=... BENCHTIME=... COUNT=6 for real measurements.
BENCH ?= .
BENCHTIME ?= 1x
COUNT ?= 1
bench:
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchtime $(BENCHTIME) -count $(COUNT) ./...

# fuzz runs every fuzz target (func Fuzz* in a _test.go file) for FUZZTIME
# each. Each package's test binary is built once, instrumented for fuzzing
# (go test -c -fuzz), and run once per target in the package's folder
# (testdata/fuzz there, the corpus cache in GOCACHE, as go test -fuzz
# does), so that a package with several targets is linked once. Minimising
# a new input is bounded by a count, FUZZMINIMIZE: with Go's default (60 s
# per input) FuzzSource spent its run minimising, 7-10 executions and 3 GB;
# with 100x it runs about 3,000 a second.
# Go before 1.27 can end a fuzz run whose -fuzztime expires with a bare
# "context deadline exceeded" failure and no failing input (golang/go#75804,
# a race in the coordinator): such a run, and only such a run, is retried
# once. A real finding writes "Failing input written to …" and fails at once.
FUZZTIME ?= 30s
FUZZMINIMIZE ?= 100x
fuzz:
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; log=$$tmp/log; \
	cache=$$($(GO) env GOCACHE)/fuzz; \
	grep -r --include='*_test.go' --exclude-dir=testdata --exclude-dir=.git -o '^func Fuzz[A-Za-z0-9_]*' . | sort | \
	while IFS=: read -r file fn; do \
	  dir=$$(dirname "$$file"); f=$${fn#func }; \
	  bin=$$tmp/$$(echo "$$dir" | tr ./ __).test; \
	  if [ ! -x "$$bin" ]; then \
	    echo "build $$dir (instrumented for fuzzing)"; \
	    $(GO) test -c -fuzz=. -o "$$bin" "$$dir" || exit 1; \
	  fi; \
	  pkg=$$($(GO) list "$$dir"); \
	  for try in 1 2; do \
	    echo "fuzz $$dir $$f"; \
	    if (cd "$$dir" && "$$bin" -test.run='^$$' -test.fuzz="^$$f$$" -test.fuzztime=$(FUZZTIME) \
	        -test.fuzzminimizetime=$(FUZZMINIMIZE) -test.fuzzcachedir="$$cache/$$pkg") >"$$log" 2>&1; then \
	      cat "$$log"; break; \
	    fi; \
	    cat "$$log"; \
	    if [ $$try = 1 ] && grep -q 'context deadline exceeded' "$$log" && ! grep -q 'Failing input written' "$$log"; then \
	      echo "fuzz $$dir $$f: the -fuzztime deadline race of go test (golang/go#75804), no failing input: again"; \
	    else \
	      exit 1; \
	    fi; \
	  done; \
	done

# fuzz-smoke runs every fuzz target for a few seconds (CI, after the tests):
# a target that no longer builds, fails on its seeds or breaks at once fails
# the run. Targets and timings: docs/reliability.md.
FUZZSMOKETIME ?= 3s
fuzz-smoke:
	@$(MAKE) --no-print-directory fuzz FUZZTIME=$(FUZZSMOKETIME)

# demo builds the CLI, indexes the GloVe sample that ships in examples/ and
# searches it: the README's quick start. It keeps to a warehouse of its own,
# $(DEMO_WAREHOUSE) with its SQLite catalog inside (--catalog= overrides a
# PARQDB_CATALOG from the environment), and deletes nothing but that folder,
# so the indexes in ./warehouse, the CLI's default, are never touched.
DEMO_WAREHOUSE = demo-warehouse
demo: build
	rm -rf $(DEMO_WAREHOUSE)
	./bin/parqdb --warehouse $(DEMO_WAREHOUSE) --catalog= index create words \
	  --source examples/glove/glove-10k.parquet --vector-field embedding --key-fields word --metric cosine
	./bin/parqdb --warehouse $(DEMO_WAREHOUSE) --catalog= search words --near-key king -k 10 --columns word,rank
