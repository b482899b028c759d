#!/bin/sh
# Filtered search side by side, in one run: ParqDB (unfiltered and each
# filter, back to back), Debian FAISS IVF-SQ8 with an ID selector, and
# DuckDB's exact WHERE … ORDER BY array_distance … LIMIT k.
#
#   bench/filter_compare.sh PARQDB WAREHOUSE DATA_DIR OUT_DIR
#
# DATA_DIR holds fashion-attr.parquet (+ .u.i32), fashion-train.fvecs and
# fashion-q1k.fvecs (docs/benchmarks.md, "Filtered search"); the index
# "fashion" is built on fashion-attr.parquet with nlist 980. DuckDB needs
# `npm ci` in bench/duckdb. Results: OUT_DIR/parqdb.jsonl (one JSON line per
# setting, after a "## where" line), faiss.txt, duckdb.txt.
set -eu
PARQDB=$1 WH=$2 D=$3 OUT=$4
NPROBE=${NPROBE:-1,2,3,4,6,8,12,16}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
: > "$OUT/parqdb.jsonl"
for w in "" "u < 500" "u < 100" "u < 10" "u < 1" "label = 3"; do
  echo "## where $w" >> "$OUT/parqdb.jsonl"
  "$PARQDB" --warehouse "$WH" bench fashion --queries "$D/fashion-q1k.fvecs" -k 10 --nprobe "$NPROBE" \
    --threads 1 --cold-queries 1 --format json ${w:+--where "$w"} >> "$OUT/parqdb.jsonl"
done
# One OpenMP/BLAS thread, not spinning: on a loaded machine two spinning
# threads kept FAISS's training from finishing in 30 minutes.
OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 "$HERE/faiss_filter.py" "$D/fashion-train.fvecs" "$D/fashion-q1k.fvecs" \
  "$D/fashion-attr.parquet.u.i32" 980 10 1000,500,100,10,1 8,16,32,64,128 > "$OUT/faiss.txt"
node "$HERE/duckdb/duckdb_filter.mjs" search "$D/fashion-attr.parquet" "$D/fashion-q1k.fvecs" 10 \
  "u < 500" "u < 100" "u < 10" "u < 1" "label = 3" > "$OUT/duckdb.txt"
