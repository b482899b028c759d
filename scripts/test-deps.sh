#!/usr/bin/env bash
# Installs what ParqDB's tests and lint need and is missing, so that
# `make test` and `make lint` work on a fresh Debian machine with Go:
# PostgreSQL, strace, chromium and Python's numpy, pandas, pytest, tqdm,
# cffi, pip, venv, setuptools, wheel and headers (Debian packages, with apt-get, as
# root or through sudo; strace for the outside-open guard test, chromium for
# the web console's browser test, server/console_browser_test.go, the
# Python packages for python/: make python, make test-python),
# versitygw v1.8.0 (an S3-compatible server, built with go install) and
# staticcheck v0.7.0 (go install). It only installs: the tests start their
# own private PostgreSQL and S3 servers (internal/testenv). The two Go tools
# go to $PARQDB_TOOLS/bin (default ~/.cache/parqdb-tools/bin), where the
# Makefile and internal/testenv look for them, and are reused between runs.
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
if ! command -v chromium >/dev/null 2>&1; then
  # server.TestConsoleBrowser drives the web console in headless chromium.
  echo "test-deps: installing chromium (Debian package)" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi
if ! /usr/bin/python3 -c 'import numpy, pandas, pytest, tqdm, setuptools, wheel' >/dev/null 2>&1 ||
  ! /usr/bin/python3 -m pip --version >/dev/null 2>&1 ||
  [ ! -e "$(/usr/bin/python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])')/Python.h" ]; then
  # The Python package's tests (make test-python) and wheel (make python);
  # python3-dev: the headers its C extension (python/parqdb/_core.c) needs.
  echo "test-deps: installing Python packages (Debian packages)" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-numpy python3-pandas python3-pytest \
    python3-cffi python3-tqdm python3-pip python3-venv python3-setuptools python3-wheel python3-dev >/dev/null
fi
if [ ! -x "$TOOLS/bin/versitygw" ]; then
  echo "test-deps: building versitygw v1.8.0 (a few minutes, once)" >&2
  GOBIN="$TOOLS/bin" GOFLAGS= go install github.com/versity/versitygw/cmd/versitygw@v1.8.0
fi
if [ ! -x "$TOOLS/bin/staticcheck" ]; then
  echo "test-deps: installing staticcheck" >&2
  GOBIN="$TOOLS/bin" GOFLAGS= go install honnef.co/go/tools/cmd/staticcheck@v0.7.0
fi
