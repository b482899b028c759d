#!/usr/bin/env bash
# Paired re-runs of the headline's two-thread batch cells on Fashion-MNIST that a single
# frontier run left short on a noisy machine (docs/benchmarks.md, "Headline"): ParqDB's
# `bench --threads 2` and the FAISS 1.15 peer with 2 OpenMP threads, one right after the other,
# ROUNDS times, at the settings the frontier picked —
#   recall@10 ≥ 0.99: lvq8 nprobe 18 (and 20, refine 0 and 2) against IVF-PQ392x4fs + RFlat
#                     nprobe 18 and 20, k_factor 4;
#   recall@10 ≥ 0.95: `source` nprobe 8 against IVF-Flat nprobe 8, and lvq8 nprobe 8 against
#                     IVF-PQ392x4fs + RFlat nprobe 10 and 14, k_factor 2.
# Prints one line per measurement; the ratio of each round's pair is what to read.
#
#   bench/frontier/paired.sh PARQDB WORK [ROUNDS]     # WORK: bench/frontier/run.sh's (its indexes and data)
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
parqdb=$(realpath "$1")
work=$(realpath "$2")
rounds=${3:-4}
py=/usr/bin/python3
L=$(grep -qw avx512_fp16 /proc/cpuinfo && echo avx512_spr || echo avx512)
grep -qw avx512f /proc/cpuinfo || L=avx2
PEER=${PEER:-$(realpath -m "$repo/../shared/peers/faiss-1.15.0-$L")}
d=$work/fashion
pq() { # parqdb bench INDEX ARGS…
  local ix=$1
  shift
  "$parqdb" --warehouse "$work/wh" bench "$ix" -k 10 --threads 2 --cold-queries 0 -q --format json \
    --queries "$d/fashion-q1k.fvecs" "$@" | "$py" -c '
import json, sys
for l in sys.stdin:
    r = json.loads(l)
    print("parqdb %s nprobe %d refine %d recall %.4f q/s %.0f" % (sys.argv[1], r["nprobe"], r["refine"], r["recall"], r["qps_nt"]))
' "$ix"
}
fa() { # faiss_peer.py ARGS…
  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=2 PYTHONPATH="$PEER" \
    FAISS_OPT_LEVEL=$L "$py" "$repo/bench/frontier/faiss_peer.py" "$d/fashion-train.fvecs" "$d/fashion-q1k.fvecs" \
    --nlist 980 --metric l2 --threads 2 --modes batch "$@" 2>/dev/null | "$py" -c '
import json, sys
for l in sys.stdin:
    r = json.loads(l)
    print("faiss %s nprobe %d k_factor %s recall %.4f q/s %.0f" % (r["kind"], r["nprobe"], r.get("k_factor", "-"), r["recall"], r["qps"]))
'
}
echo "paired: $(uptime); $("$parqdb" --version 2>&1 | head -1); peer $PEER"
for i in $(seq "$rounds"); do
  echo "round $i"
  pq fashion-lvq8 --nprobe 18,20 --refine 0,2
  fa --kinds pqfs --nprobe 18,20 --k-factor 4
  pq fashion-source --nprobe 8
  fa --kinds flat --nprobe 8
  pq fashion-lvq8 --nprobe 8 --refine 0
  fa --kinds pqfs --nprobe 10,14 --k-factor 2
done
