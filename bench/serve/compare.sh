#!/usr/bin/env bash
# Two parqdb binaries serving the same GloVe index side by side
# (docs/benchmarks.md, "Serve, HTTP and SQL"): both servers run at once on loopback
# over one warehouse; the load generator (bench/serve, C clients of
# near-key searches) drives them in turn for D each, R rounds, swapping
# which goes first every round, so both see the same machine load. Prints
# one Markdown table row per run, ending with the server process's CPU
# time per request (user + system from /proc, in µs): the load generator
# shares the cores, so QPS moves with its cost and the machine's load too.
#   bench/serve/compare.sh OLD_BIN NEW_BIN        # R=3 D=20s C=16
set -euo pipefail
cd "$(dirname "$0")/../.."
old=$1 new=$2
D=${D:-20s} C=${C:-16} R=${R:-3}
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
go build -o "$work/serve-load" ./bench/serve
wh="$work/wh"
"$new" --warehouse "$wh" index create words --source examples/glove/glove-10k.parquet \
  --vector-field embedding --key-fields word --metric cosine >/dev/null 2>&1
port=7890
for bin in "$old" "$new"; do
  # room in the queue for every client: the comparison is throughput, not 503s
  "$bin" --warehouse "$wh" serve --listen "127.0.0.1:$port" --flight "" --max-queue $((4 * C)) \
    --log-level warn 2>"$work/serve-$port.log" &
  pids+=($!)
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.1; done
  port=$((port + 1))
done
cputicks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
echo "| round | binary | clients | duration | requests | errors | QPS | p50 ms | p90 ms | p99 ms | p99.9 ms | answers by snapshot | RSS MB (start → end) | server CPU µs/request |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for r in $(seq "$R"); do
  order="0 1"
  if (( r % 2 == 0 )); then order="1 0"; fi
  for i in $order; do
    name=old
    if (( i == 1 )); then name=new; fi
    t0=$(cputicks "${pids[$i]}")
    row=$("$work/serve-load" -url "http://127.0.0.1:$((7890 + i))" -c "$C" -d "$D")
    t1=$(cputicks "${pids[$i]}")
    n=$(awk -F'|' '{gsub(/ /, "", $4); print $4}' <<<"$row")
    printf '| %d | %s %s %.0f |\n' "$r" "$name" "$row" "$(echo "($t1 - $t0) * 1000000 / $hz / $n" | bc -l)"
  done
done
