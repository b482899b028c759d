#!/usr/bin/env bash
# HTTP batch searches, two parqdb binaries in turn (docs/serve.md,
# "Concurrency"): each serves WAREHOUSE (holding INDEX) alone on loopback
# while bench/serve/batch_client.py posts 250-vector requests; R rounds,
# the binaries alternating. Prints one line per run: binary, query vectors/s.
#   bench/serve/batch.sh OLD_BIN NEW_BIN WAREHOUSE INDEX QUERIES.fvecs   # R=2 REPS=8 NPROBE=48
set -euo pipefail
cd "$(dirname "$0")/../.."
old=$1 new=$2 wh=$3 index=$4 queries=$5
R=${R:-2} REPS=${REPS:-8} NPROBE=${NPROBE:-48}
port=7893
for _ in $(seq "$R"); do
  for bin in "$old" "$new"; do
    "$bin" --warehouse "$wh" serve --listen "127.0.0.1:$port" --flight "" --log-level warn &
    pid=$!
    for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.1; done
    echo "$bin $(/usr/bin/python3 bench/serve/batch_client.py "$port" "$index" "$queries" "$REPS" "$NPROBE")"
    kill "$pid"
    wait "$pid" 2>/dev/null || true
  done
done
