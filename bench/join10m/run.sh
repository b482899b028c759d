#!/bin/sh
# run.sh: issue 26's benchmark — the 10M × 96 mixture joined with 1M of its own rows
# (the first source file, ids 0..999,999), k 10, on 2 cores:
#   (1) parqdb join, (2) the same queries through parqdb search --queries (both --workers 2,
#   Parquet out), (3) FAISS 1.15 (../shared/peers) IVF-Flat and IVF-SQ8 on the same lists, one
#   search call for the whole batch with 2 OpenMP threads;
# wall and CPU seconds, queries per second, peak RSS, recall@10 over 200 sampled queries
# (0, 5000, …) against their exact answer (bench/groundtruth), and whether join and search
# wrote the same neighbours and distances (bench/joinrecall -same).
# Usage: bench/join10m/run.sh W [NPROBE REFINE [FAISS_RUNS]]   (W ≈ 16 GB of disk; FAISS_RUNS as
# faiss_batch.py takes them, KIND:NPROBE[:REFINE[:QUERIES]],…; steps
# whose output exists are skipped, so a rerun only re-measures)
#   PEER=../shared/peers/faiss-1.15.0-avx512 bench/join10m/run.sh /tmp/j10m 64 2 sq8:64:2,sq8:96,flat:64:0:100000
set -eu
W=$1 NPROBE=${2:-64} REFINE=${3:-2} RUNS=${4:-sq8:64:2,sq8:96,flat:64:0:100000}
R=$(cd "$(dirname "$0")/../.." && pwd)
PEER=${PEER:-$R/../shared/peers/faiss-1.15.0-avx512}
mkdir -p "$W/bin"
(cd "$R" && go build -o "$W/bin/" ./cmd/parqdb ./bench/mkdata ./bench/groundtruth ./bench/centroids ./bench/listids ./bench/joinrecall)
B=$W/bin D=$W/data WH=$W/wh
BASE=$D/mixture-10000000x96.fvecs
Q=$D/base/mixture-10000000x96-part-00-of-10.parquet
[ -f "$BASE" ] || "$B/mkdata" mixture -n 10000000 -d 96 "$D"
if [ ! -f "$WH/build.time" ]; then
	/usr/bin/time -f "build: %e s wall, %U s user, %S s sys, %M KB peak RSS" -o "$WH.time" \
		"$B/parqdb" --warehouse "$WH" index create m10m --source "$D/base" --vector-field vec --key-fields id -q
	mv "$WH.time" "$WH/build.time"
fi
cat "$WH/build.time"
[ -f "$W/c.fvecs" ] || "$B/centroids" "$WH" m10m "$W/c.fvecs"
[ -f "$W/lists.i32" ] || "$B/listids" "$WH" m10m "$W/lists.i32"
if [ ! -f "$W/gt200.ivecs" ]; then
	/usr/bin/python3 -c "import numpy as np, sys; m = np.memmap(sys.argv[1], dtype=np.int32, mode='r').reshape(-1, 97); np.ascontiguousarray(m[0:1000000:5000]).tofile(sys.argv[2])" "$BASE" "$W/sample200.fvecs"
	"$B/groundtruth" -k 10 "$BASE" "$W/sample200.fvecs" "$W/gt200.ivecs"
fi
T="/usr/bin/time -f %e\t%U\t%S\t%M -o $W/time"
show() { # NAME: wall, CPU, q/s, peak RSS of the last timed command
	awk -v n="$1" -F'\t' '{ printf "%s: %.1f s wall, %.1f s CPU, %.0f queries/s, %.0f queries/CPU-s, peak RSS %.2f GiB\n", n, $1, $2 + $3, 1e6 / $1, 1e6 / ($2 + $3), $4 / 1048576 }' "$W/time"
}
export PARQDB_WAREHOUSE=$WH
rm -rf "$W/join" "$W/search.parquet"
$T "$B/parqdb" join m10m --queries-table "$Q" --query-key id --query-vector vec -k 10 \
	--nprobe "$NPROBE" --refine "$REFINE" --workers 2 --output "$W/join" -q >"$W/join.out"
show "parqdb join (nprobe $NPROBE, refine $REFINE)"
"$B/joinrecall" -query query_id -gt "$W/gt200.ivecs" "$W/join"
$T "$B/parqdb" search m10m --queries "$Q" --query-column vec -k 10 --nprobe "$NPROBE" --refine "$REFINE" \
	--workers 2 --columns id --format parquet --output "$W/search.parquet"
show "parqdb search --queries (nprobe $NPROBE, refine $REFINE)"
"$B/joinrecall" -query query_id -same "$W/search.parquet" -other-query query "$W/join"
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2 \
	PYTHONPATH="$PEER" FAISS_OPT_LEVEL=avx512 /usr/bin/python3 "$R/bench/join10m/faiss_batch.py" \
	"$BASE" "$W/c.fvecs" "$W/lists.i32" 1000000 "$W/gt200.ivecs" 5000 10 "$RUNS"
