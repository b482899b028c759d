#!/usr/bin/env bash
# The headline comparison (docs/benchmarks.md, "Headline"): ParqDB (lvq8 with refine,
# and the `source` encoding) against FAISS 1.15 compiled for this CPU (../shared/peers: IVF-Flat,
# IVF-Flat Panorama, IVF-SQ8, IVF-PQ{d/2}x4fs + RFlat and its residual form fsr, IVF-RaBitQ
# FastScan + RFlat, HNSW32), the same nlist, on each data set, in both modes a user meets (the whole query batch per call:
# `SearchBatch` / one FAISS `search`; one query per call: `Search` / one FAISS call per query),
# with 1 and 2 threads (single queries with 2: two callers at once, `Search` from two goroutines /
# two Python threads each calling FAISS on one OpenMP thread); summary.py then picks each engine's fastest setting at recall@10 ≥ 0.95
# and ≥ 0.99 and prints the ratios against issue 29's goals, and recheck.py searches the chosen
# one-thread settings again with `parqdb search` and counts their recall against numpy's exact
# answer (appended to summary.md).
#
#   bench/frontier/run.sh PARQDB WORK      # every set, 1 and 2 threads: SETS="fashion glove text m10m" THREADS="1 2"
#   SETS=m10m bench/frontier/run.sh PARQDB WORK   # the 10M mixture alone (≈ 2 hours the first time, 40 GB of disk)
#
# One-thread figures are queries per CPU-second (ParqDB qps_1t_cpu for single queries and
# qps_nt_cpu for the batch; FAISS per CPU-second of the calling thread with OpenMP and OpenBLAS
# on one thread), which hold on a shared machine; two-thread figures are wall clock and need a
# quiet one. WORK holds the data and indexes; made when missing, except the text set (7–8
# minutes, bench/README.md, "textdata"), read from $TEXT (default WORK/text: text-base.parquet,
# text-base.fvecs, text-queries.fvecs, text-gt.ivecs) and skipped if absent. Fashion-MNIST
# comes from Debian's dataset-fashion-mnist (apt-get install dataset-fashion-mnist). The 10M
# mixture (SETS=m10m; bench/mkdata mixture, 10M × 96, l2, its 1,000 queries, nlist 12,649 = the
# default) is made in WORK/m10m when missing (mkdata, groundtruth, two 10M-row builds: ≈ 25
# minutes); FAISS's IVF kinds use the lvq8 index's centroids and lists there (faiss_peer.py
# --centroids --list-ids: k-means and the assignment of 10M rows to 12,649 lists for each IVF
# kind would take hours), and every FAISS index is kept in WORK/m10m/faiss (≈ 30 GB; HNSW32 alone
# takes 45 minutes to build) for the next run.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
parqdb=$(realpath "$1")
work=$(realpath -m "$2")
SETS=${SETS:-fashion glove text m10m}
THREADS=${THREADS:-1 2}
TEXT=${TEXT:-$work/text}
py=/usr/bin/python3
L=$(grep -qw avx512_fp16 /proc/cpuinfo && echo avx512_spr || echo avx512)
grep -qw avx512f /proc/cpuinfo || L=avx2 # no prebuilt: build one (../shared/peers/README.md)
PEER=${PEER:-$(realpath -m "$repo/../shared/peers/faiss-1.15.0-$L")}
[ -d "$PEER/faiss" ] || { echo "frontier: no FAISS build in $PEER (set PEER; ../shared/peers/README.md)" >&2; exit 2; }
mkdir -p "$work"
out="$work/results-$(date -u +%Y%m%dT%H%M%S)"
mkdir -p "$out"
faiss() { # SET ARGS…: faiss_peer.py for each thread count
  local set=$1
  shift
  for t in $THREADS; do
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS="$t" \
      PYTHONPATH="$PEER" FAISS_OPT_LEVEL=$L "$py" "$repo/bench/frontier/faiss_peer.py" \
      --threads "$t" --modes batch,single "$@" >"$out/$set-faiss-t$t.jsonl"
  done
}
bench() { # WAREHOUSE INDEX OUTNAME ARGS…: parqdb bench for each thread count
  local wh=$1 ix=$2 name=$3
  shift 3
  for t in $THREADS; do
    "$parqdb" --warehouse "$wh" bench "$ix" -k 10 --threads "$t" --cold-queries 0 -q --format json "$@" \
      >"$out/$name-t$t.jsonl"
  done
}
index() { # WAREHOUSE NAME SOURCE FIELD KEY METRIC NLIST ENCODING
  # (the list is read whole first: grep -q closing the pipe early would fail it under pipefail)
  local have
  # (no warehouse yet: index list fails, and index create makes it)
  have=$("$parqdb" --warehouse "$1" index list 2>/dev/null | awk 'NR > 1 {print $1}' || true)
  grep -qx "$2" <<<"$have" ||
    "$parqdb" --warehouse "$1" index create "$2" --source "$3" --vector-field "$4" --key-fields "$5" \
      --metric "$6" --nlist "$7" --encoding "$8" -q >/dev/null
}
{
  echo "frontier: $parqdb ($("$parqdb" --version 2>&1 | head -1)), peer $PEER ($L), results in $out"
  echo "frontier: $(uptime); $(grep -m1 'model name' /proc/cpuinfo)"
} | tee "$out/machine.txt" >&2

for set in $SETS; do
  case $set in
  fashion)
    d=$work/fashion
    [ -f "$d/fashion-train.parquet" ] || (cd "$repo" && go run ./bench/mkdata fashion "$d" >/dev/null)
    [ -f "$d/fashion-q1k.fvecs" ] || head -c 3140000 "$d/fashion-test.fvecs" >"$d/fashion-q1k.fvecs"
    for e in lvq8 source; do index "$work/wh" fashion-$e "$d/fashion-train.parquet" vec id l2_squared 980 $e; done
    bench "$work/wh" fashion-lvq8 fashion-lvq8 --queries "$d/fashion-q1k.fvecs" \
      --nprobe 6,8,10,12,14,16,18,20,24,32 --refine 0,2
    bench "$work/wh" fashion-source fashion-source --queries "$d/fashion-q1k.fvecs" \
      --nprobe 8,10,12,14,16,18,20,24,32
    faiss fashion "$d/fashion-train.fvecs" "$d/fashion-q1k.fvecs" --nlist 980 --metric l2 \
      --nprobe 6,8,10,12,14,16,18,20,24,32,48,64 --ef 10,12,16,24,32,48,64,96,128,192,256
    ;;
  glove)
    d=$work/glove
    # (glove-keys.txt: the keys in row order, for recheck.py; a folder made before it gets
    # the same .fvecs again, byte for byte)
    if [ ! -f "$d/glove-q5k.fvecs" ] || [ ! -f "$d/glove-keys.txt" ]; then
      mkdir -p "$d"
      (cd "$repo" && go run ./bench/fvecs -metric cosine -keys "$d/glove-keys.txt" examples/glove/glove-10k.parquet embedding word "$d/glove-base.fvecs" "$d/glove-q1k.fvecs")
      for _ in 1 2 3 4 5; do cat "$d/glove-q1k.fvecs"; done >"$d/glove-q5k.fvecs"
    fi
    for e in lvq8 source; do index "$work/wh" glove-$e "$repo/examples/glove/glove-10k.parquet" embedding word cosine 100 $e; done
    bench "$work/wh" glove-lvq8 glove-lvq8 --queries "$d/glove-q5k.fvecs" \
      --nprobe 8,10,12,14,16,20,24,28,32,40 --refine 0,2,4
    bench "$work/wh" glove-source glove-source --queries "$d/glove-q5k.fvecs" \
      --nprobe 8,10,12,14,16,20,24,28,32,40
    faiss glove "$d/glove-base.fvecs" "$d/glove-q5k.fvecs" --nlist 100 --metric cosine \
      --nprobe 8,10,12,14,16,20,24,28,32,40,48 --ef 10,12,16,24,32,48,64,96,128,192,256,384
    ;;
  text)
    if [ ! -f "$TEXT/text-gt.ivecs" ]; then
      echo "frontier: no text set in $TEXT (bench/README.md, textdata, makes it); skipped" >&2
      continue
    fi
    for e in lvq8 source; do index "$work/wh" text-$e "$TEXT/text-base.parquet" vec id cosine 1505 $e; done
    G=(--ground-truth "$TEXT/text-gt.ivecs" --queries "$TEXT/text-queries.fvecs")
    bench "$work/wh" text-lvq8 text-lvq8 "${G[@]}" --nprobe 32,40,48,64,128,256,384,512,640,768 --refine 0,2,4,8
    bench "$work/wh" text-source text-source "${G[@]}" --nprobe 32,34,36,40,48,384,448,512,640
    faiss text "$TEXT/text-base.fvecs" "$TEXT/text-queries.fvecs" --nlist 1505 --metric cosine \
      --gt "$TEXT/text-gt.ivecs" --nprobe 32,40,48,64,128,256,384,448,512,640,768 \
      --ef 32,48,64,96,128,192,256,384,512,768,1024
    ;;
  m10m)
    d=$work/m10m
    base=$d/mixture-10000000x96
    mkdir -p "$d/bin"
    (cd "$repo" && go build -o "$d/bin/" ./bench/mkdata ./bench/groundtruth ./bench/listids ./bench/centroids)
    [ -f "$base.fvecs" ] || "$d/bin/mkdata" mixture -n 10000000 -d 96 "$d" >/dev/null
    [ -f "$d/gt1k.ivecs" ] || "$d/bin/groundtruth" -queries 1000 "$base.fvecs" "$base-queries.fvecs" "$d/gt1k.ivecs" 2>/dev/null
    for e in lvq8 source; do index "$work/wh" m10m-$e "$d/base" vec id l2_squared 12649 $e; done
    [ -f "$d/lists.i32" ] || "$d/bin/listids" "$work/wh" m10m-lvq8 "$d/lists.i32"
    [ -f "$d/centroids.fvecs" ] || "$d/bin/centroids" "$work/wh" m10m-lvq8 "$d/centroids.fvecs"
    G=(--ground-truth "$d/gt1k.ivecs" --queries "$base-queries.fvecs")
    bench "$work/wh" m10m-lvq8 m10m-lvq8 "${G[@]}" --nprobe 16,24,32,48,64,96,128,192,256 --refine 0,2,4
    bench "$work/wh" m10m-source m10m-source "${G[@]}" --nprobe 16,24,32,48,64,96,128,192,256
    faiss m10m "$base.fvecs" "$base-queries.fvecs" --nlist 12649 --metric l2 --gt "$d/gt1k.ivecs" \
      --centroids "$d/centroids.fvecs" --list-ids "$d/lists.i32" --cache "$d/faiss" \
      --nprobe 16,24,32,48,64,96,128,192,256 --ef 16,24,32,48,64,96,128,192,256,384,512
    ;;
  *) echo "frontier: unknown set $set" >&2; exit 2 ;;
  esac
done
echo "frontier: done; $(uptime)" | tee -a "$out/machine.txt" >&2
"$py" "$repo/bench/frontier/summary.py" "$out" | tee "$out/summary.md"
# the chosen settings' recall again, from `parqdb search` output against a numpy exact answer
if ls "$out"/*-t1.jsonl >/dev/null 2>&1; then
  { echo; "$py" "$repo/bench/frontier/recheck.py" "$out" "$parqdb" "$work" "${TEXT:-}"; } | tee -a "$out/summary.md"
fi
