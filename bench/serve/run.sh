#!/usr/bin/env bash
# The serve load test (docs/benchmarks.md, "Serve, HTTP and SQL"): index the GloVe
# sample, start `parqdb serve` on 127.0.0.1, drive it from a second process
# with C concurrent clients for D, and halfway through commit a successor
# snapshot with `parqdb index refresh --retrain`. Prints one Markdown table
# row; exits non-zero if any request failed.
#   bench/serve/run.sh            # 60 s at concurrency 32
#   D=5s C=8 bench/serve/run.sh   # a short run
set -euo pipefail
cd "$(dirname "$0")/../.."
D=${D:-60s}
C=${C:-32}
PORT=${PORT:-7878}
work=$(mktemp -d)
trap 'kill $srv 2>/dev/null || true; wait $srv 2>/dev/null || true; rm -rf "$work"' EXIT
go build -o "$work/parqdb" ./cmd/parqdb
go build -o "$work/serve-load" ./bench/serve
wh="$work/wh"
"$work/parqdb" --warehouse "$wh" index create words --source examples/glove/glove-10k.parquet \
  --vector-field embedding --key-fields word --metric cosine >/dev/null 2>&1
"$work/parqdb" --warehouse "$wh" serve --listen "127.0.0.1:$PORT" --flight "" --refresh-interval 1s \
  --log-level warn 2>"$work/serve.log" &
srv=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null && break; sleep 0.1; done
secs=${D%s}
( sleep $(( ${secs%.*} / 2 )) && "$work/parqdb" --warehouse "$wh" index refresh words --retrain -q >/dev/null 2>&1 ) &
refresh=$!
echo "| clients | duration | requests | errors | QPS | p50 ms | p90 ms | p99 ms | p99.9 ms | answers by snapshot | RSS MB (start → end) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
"$work/serve-load" -url "http://127.0.0.1:$PORT" -c "$C" -d "$D"
wait $refresh
