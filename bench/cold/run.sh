#!/usr/bin/env bash
# The cold exact-vector path (docs/benchmarks.md, "Cold exact vectors"): a
# `source` index over 30,000 × 384 vectors in zstd pages of ≈ 1 MB, searched
# at nprobe 32 by `parqdb bench` with no cache and no vector store (its cold
# pass), from a local folder and from an S3 server (versitygw on 127.0.0.1,
# scripts/services.sh), for a file with an offset index and one without
# (as pyarrow writes by default). A cold query's time is the wall time of
# `bench --cold-queries N` less that of `--cold-queries 0`, over N.
#
#   bench/cold/run.sh PARQDB WORK        # COLD="1 10" by default; make deps first (versitygw)
#
# Prints one line per (storage, file, N): wall seconds, and the per-query
# bytes, requests and source-vector rows bench reports. WORK holds the data
# and the services' folder (stopped and removed at the end); the S3 run's
# catalog is the services' PostgreSQL.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
parqdb=$(realpath "$1")
work=$(realpath -m "$2")
COLD=${COLD:-1 10}
mkdir -p "$work"
for idx in index noindex; do
  d=$work/data-$idx
  [ -f "$d/synth-30000x384.parquet" ] && continue
  flag=()
  [ $idx = noindex ] && flag=(-no-page-index)
  (cd "$repo" && go run ./bench/mkdata synth -n 30000 -d 384 -clusters 200 -queries 20 \
    -zstd-page-bytes 1048576 "${flag[@]}" "$d" >/dev/null)
done

svc=$work/services
"$repo/scripts/services.sh" stop "$svc" >/dev/null 2>&1 || true
"$repo/scripts/services.sh" start "$svc" >/dev/null
trap '"$repo/scripts/services.sh" stop "$svc" >/dev/null 2>&1 || true' EXIT
# (the S3 server's posix backend serves the bucket's folder: a copy is an upload)
for idx in index noindex; do
  mkdir -p "$svc/s3/parqdb/src-$idx"
  cp "$work/data-$idx/synth-30000x384.parquet" "$svc/s3/parqdb/src-$idx/"
done

run() { # STORAGE WAREHOUSE SOURCE-PREFIX CATALOG-FLAG…
  local st=$1 wh=$2 src=$3
  shift 3
  local cat=("$@")
  for idx in index noindex; do
    "$parqdb" --warehouse "$wh" "${cat[@]}" index create "c-$idx" --encoding source --nlist 693 \
      --source "$src-$idx/synth-30000x384.parquet" --vector-field vec --key-fields id -q >/dev/null
    for n in 0 $COLD; do
      local t0 t1 out
      t0=$(date +%s.%N)
      out=$("$parqdb" --warehouse "$wh" "${cat[@]}" bench "c-$idx" \
        --queries "$work/data-$idx/synth-30000x384-queries.fvecs" --nprobe 32 --threads 1 \
        --min-time 0 --cold-queries "$n" -q --format json 2>/dev/null)
      t1=$(date +%s.%N)
      /usr/bin/python3 -c '
import json, sys
st, idx, n, t0, t1 = sys.argv[1:6]
r = json.loads(sys.stdin.read().splitlines()[0])
b, q, rows = (r.get(k, 0) for k in ("cold_bytes_per_query", "cold_requests_per_query", "cold_source_vector_rows_per_query"))
wall, warm = float(t1) - float(t0), r["qps_1t"]
print(f"{st:6} {idx:8} cold-queries {int(n):3}  wall {wall:7.3f} s  bytes/q {b:12.0f}  requests/q {q:7.1f}  "
      f"source rows/q {rows:7.1f}  warm qps_1t {warm:.0f}")
' "$st" "$idx" "$n" "$t0" "$t1" <<<"$out"
    done
  done
}

for idx in index noindex; do # the local sources, by the same names
  mkdir -p "$work/src-$idx"
  cp "$work/data-$idx/synth-30000x384.parquet" "$work/src-$idx/"
done
rm -rf "$work/wh"
run local "$work/wh" "$work/src" --catalog=
set -a
. "$svc/env"
set +a
run s3 s3://parqdb/wh s3://parqdb/src # (the catalog: the services' PostgreSQL)
