#!/usr/bin/env bash
# Issue 14's acceptance in one run (docs/benchmarks.md, "Recall–speed frontier, side by side"):
# ParqDB (lvq8 with refine 0–8, and the `source` encoding) and Debian FAISS 1.7 (IVF-SQ8 and
# IVF-Flat, the same nlist, one thread, one query per call) on Fashion-MNIST, the GloVe sample
# and the text set, one after the other; summary.py then picks each engine's fastest setting at
# recall@10 ≥ 0.95 and ≥ 0.99 and prints the ratios. Figures are queries per CPU-second of the
# searching thread (ParqDB qps_1t_cpu, FAISS qps_cpu): the machine is shared.
#
#   bench/frontier/run.sh PARQDB WORK          # SETS="fashion glove text" by default
#
# WORK holds the data and indexes; made when missing, except the text set (7–8 minutes, see
# bench/README.md, "textdata"), which is read from $TEXT (default WORK/text: text-base.parquet,
# text-base.fvecs, text-queries.fvecs, text-gt.ivecs) and skipped if absent.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
parqdb=$(realpath "$1")
work=$(realpath -m "$2")
SETS=${SETS:-fashion glove text}
TEXT=${TEXT:-$work/text}
py=/usr/bin/python3
mkdir -p "$work"
out="$work/results-$(date -u +%Y%m%dT%H%M%S)"
mkdir -p "$out"
B=(-k 10 --threads 1 --cold-queries 1 -q --format json)
faiss() { OMP_NUM_THREADS=1 "$py" "$repo/bench/faiss_ivf.py" search "$@"; }
index() { # WAREHOUSE NAME SOURCE FIELD KEY METRIC NLIST ENCODING
  # (the list is read whole first: grep -q closing the pipe early would fail it under pipefail)
  local have
  # (no warehouse yet: index list fails, and index create makes it)
  have=$("$parqdb" --warehouse "$1" index list 2>/dev/null | awk 'NR > 1 {print $1}' || true)
  grep -qx "$2" <<<"$have" ||
    "$parqdb" --warehouse "$1" index create "$2" --source "$3" --vector-field "$4" --key-fields "$5" \
      --metric "$6" --nlist "$7" --encoding "$8" -q >/dev/null
}
echo "frontier: $parqdb ($("$parqdb" --version 2>&1 | head -1)), results in $out; $(uptime)" >&2

for set in $SETS; do
  case $set in
  fashion)
    d=$work/fashion
    [ -f "$d/fashion-train.parquet" ] || (cd "$repo" && go run ./bench/mkdata fashion "$d" >/dev/null)
    [ -f "$d/fashion-q1k.fvecs" ] || head -c 3140000 "$d/fashion-test.fvecs" >"$d/fashion-q1k.fvecs"
    for e in lvq8 source; do index "$work/wh" fashion-$e "$d/fashion-train.parquet" vec id l2_squared 980 $e; done
    "$parqdb" --warehouse "$work/wh" bench fashion-lvq8 --queries "$d/fashion-q1k.fvecs" "${B[@]}" \
      --nprobe 6,8,10,12,14,16,18,20,24,32 --refine 0,2 >"$out/fashion-lvq8.jsonl"
    "$parqdb" --warehouse "$work/wh" bench fashion-source --queries "$d/fashion-q1k.fvecs" "${B[@]}" \
      --nprobe 8,10,12,14,16,18,20,24,32 >"$out/fashion-source.jsonl"
    for kind in sq8 flat; do
      faiss "$d/fashion-train.fvecs" "$d/fashion-q1k.fvecs" 980 $kind 10 8,10,12,14,16,18,20,24,32,48,64 >"$out/fashion-faiss-$kind.txt"
    done
    ;;
  glove)
    d=$work/glove
    if [ ! -f "$d/glove-q5k.fvecs" ]; then
      mkdir -p "$d"
      (cd "$repo" && go run ./bench/fvecs -metric cosine examples/glove/glove-10k.parquet embedding word "$d/glove-base.fvecs" "$d/glove-q1k.fvecs")
      for _ in 1 2 3 4 5; do cat "$d/glove-q1k.fvecs"; done >"$d/glove-q5k.fvecs"
    fi
    for e in lvq8 source; do index "$work/wh" glove-$e "$repo/examples/glove/glove-10k.parquet" embedding word cosine 100 $e; done
    "$parqdb" --warehouse "$work/wh" bench glove-lvq8 --queries "$d/glove-q5k.fvecs" "${B[@]}" \
      --nprobe 8,10,12,14,16,20,24,28,32,40 --refine 0,2,4 >"$out/glove-lvq8.jsonl"
    "$parqdb" --warehouse "$work/wh" bench glove-source --queries "$d/glove-q5k.fvecs" "${B[@]}" \
      --nprobe 8,10,12,14,16,20,24,28,32,40 >"$out/glove-source.jsonl"
    for kind in sq8 flat; do
      faiss "$d/glove-base.fvecs" "$d/glove-q5k.fvecs" 100 $kind 10 8,10,12,14,16,20,24,28,32,40,48 >"$out/glove-faiss-$kind.txt"
    done
    ;;
  text)
    if [ ! -f "$TEXT/text-gt.ivecs" ]; then
      echo "frontier: no text set in $TEXT (bench/README.md, textdata, makes it); skipped" >&2
      continue
    fi
    for e in lvq8 source; do index "$work/wh" text-$e "$TEXT/text-base.parquet" vec id cosine 1505 $e; done
    G=(--ground-truth "$TEXT/text-gt.ivecs")
    "$parqdb" --warehouse "$work/wh" bench text-lvq8 --queries "$TEXT/text-queries.fvecs" "${G[@]}" "${B[@]}" \
      --nprobe 32,40,48,64 --refine 0,2,4 >"$out/text-lvq8.jsonl"
    "$parqdb" --warehouse "$work/wh" bench text-lvq8 --queries "$TEXT/text-queries.fvecs" "${G[@]}" "${B[@]}" \
      --nprobe 128,256,384,512,640,768 --refine 4,8 >>"$out/text-lvq8.jsonl"
    "$parqdb" --warehouse "$work/wh" bench text-source --queries "$TEXT/text-queries.fvecs" "${G[@]}" "${B[@]}" \
      --nprobe 32,34,36,40,48,384,448,512,640 >"$out/text-source.jsonl"
    faiss "$TEXT/text-base.fvecs" "$TEXT/text-queries.fvecs" 1505 flat 10 32,40,48,64,128,256,384,448,512,640,768 \
      --gt "$TEXT/text-gt.ivecs" >"$out/text-faiss-flat.txt"
    faiss "$TEXT/text-base.fvecs" "$TEXT/text-queries.fvecs" 1505 sq8 10 64,128,256,512 \
      --gt "$TEXT/text-gt.ivecs" >"$out/text-faiss-sq8.txt"
    ;;
  *) echo "frontier: unknown set $set" >&2; exit 2 ;;
  esac
done
echo "frontier: done; $(uptime)" >&2
"$py" "$repo/bench/frontier/summary.py" "$out"
