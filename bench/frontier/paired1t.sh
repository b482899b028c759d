#!/usr/bin/env bash
# Paired re-runs of the headline's one-thread batch cells that the run of 2026-12-08 left short
# (docs/benchmarks.md, "After the run"): each ParqDB binary's `bench --threads 1` (batch,
# queries per CPU-second, qps_nt_cpu), then the FAISS 1.15 peer on one thread, ROUNDS times —
#   text, recall@10 ≥ 0.95: lvq8 nprobe 34, 40, 48 (refine 0 and 2) and `source` nprobe 34
#                           against IVF-PQ128x4fsr + RFlat nprobe 48 and 64, k_factor 8;
#   Fashion-MNIST, ≥ 0.95:  `source` nprobe 8 against IVF-Flat nprobe 8.
#
#   bench/frontier/paired1t.sh WORK ROUNDS PARQDB [PARQDB…]   # WORK: run.sh's (its indexes and data)
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(realpath "$1")
rounds=$2
shift 2
py=/usr/bin/python3
L=$(grep -qw avx512_fp16 /proc/cpuinfo && echo avx512_spr || echo avx512)
grep -qw avx512f /proc/cpuinfo || L=avx2
PEER=${PEER:-$(realpath -m "$repo/../shared/peers/faiss-1.15.0-$L")}
TEXT=${TEXT:-$work/text}
pq() { # parqdb bench BINARY INDEX ARGS…
  local b=$1 ix=$2
  shift 2
  "$b" --warehouse "$work/wh" bench "$ix" -k 10 --threads 1 --cold-queries 0 -q --format json "$@" | "$py" -c '
import json, sys
for l in sys.stdin:
    r = json.loads(l)
    print("parqdb %s %s nprobe %d refine %d recall %.4f q/CPU-s %.0f" % (sys.argv[1], sys.argv[2], r["nprobe"], r["refine"], r["recall"], r["qps_nt_cpu"]))
' "$b" "$ix"
}
fa() { # faiss_peer.py BASE QUERIES ARGS…
  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 PYTHONPATH="$PEER" \
    FAISS_OPT_LEVEL=$L "$py" "$repo/bench/frontier/faiss_peer.py" "$@" --threads 1 --modes batch 2>/dev/null | "$py" -c '
import json, sys
for l in sys.stdin:
    r = json.loads(l)
    print("faiss %s nprobe %d k_factor %s recall %.4f q/CPU-s %.0f" % (r["kind"], r["nprobe"], r.get("k_factor", "-"), r["recall"], r["qps_cpu"]))
'
}
echo "paired1t: $(uptime); peer $PEER"
for i in $(seq "$rounds"); do
  echo "round $i $(date -u +%T)"
  for b in "$@"; do
    pq "$b" text-lvq8 --ground-truth "$TEXT/text-gt.ivecs" --queries "$TEXT/text-queries.fvecs" --nprobe 34,40,48 --refine 0,2
    pq "$b" text-source --ground-truth "$TEXT/text-gt.ivecs" --queries "$TEXT/text-queries.fvecs" --nprobe 34
  done
  fa "$TEXT/text-base.fvecs" "$TEXT/text-queries.fvecs" --nlist 1505 --metric cosine --gt "$TEXT/text-gt.ivecs" \
    --kinds pqfsr --nprobe 48,64 --k-factor 8
  for b in "$@"; do
    pq "$b" fashion-source --queries "$work/fashion/fashion-q1k.fvecs" --nprobe 8
  done
  fa "$work/fashion/fashion-train.fvecs" "$work/fashion/fashion-q1k.fvecs" --nlist 980 --metric l2 --kinds flat --nprobe 8
done
