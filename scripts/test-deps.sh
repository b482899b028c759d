#!/usr/bin/env bash
# Installs what ParqDB's tests need and is missing, so that `make test` works
# on a fresh Debian machine with Go: PostgreSQL and strace (Debian packages), versitygw
# (an S3-compatible server, from the Go module proxy), staticcheck, and
# DuckDB's Node API (an independent Parquet reader, from npm).
# Binaries go to $PARQDB_TOOLS (default ~/.cache/parqdb-tools) and are
# reused between runs on the same machine.
set -euo pipefail
TOOLS=${PARQDB_TOOLS:-$HOME/.cache/parqdb-tools}
mkdir -p "$TOOLS/bin"
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo

if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  echo "test-deps: installing PostgreSQL (Debian package)" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq postgresql >/dev/null
fi
if ! command -v strace >/dev/null 2>&1; then
  # reliability.TestOutsideOpenGuard traces every file the CLI opens.
  echo "test-deps: installing strace (Debian package)" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq strace >/dev/null
fi
if [ ! -x "$TOOLS/bin/versitygw" ]; then
  echo "test-deps: building versitygw v1.8.0 (a few minutes, once)" >&2
  GOBIN="$TOOLS/bin" GOFLAGS= go install github.com/versity/versitygw/cmd/versitygw@v1.8.0
fi
if [ ! -x "$TOOLS/bin/staticcheck" ]; then
  echo "test-deps: installing staticcheck" >&2
  GOBIN="$TOOLS/bin" GOFLAGS= go install honnef.co/go/tools/cmd/staticcheck@v0.7.0
fi
