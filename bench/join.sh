#!/bin/sh
# join.sh: parqdb join against parqdb search --queries on the same query
# vectors and options, both on --workers W (default 2), both writing Parquet
# (search: one file with --columns KEY; join: the output folder); prints,
# per round, each command's wall seconds, CPU seconds (user + system), peak
# RSS and queries per wall second, and their ratio (join ÷ search).
# Usage: bench/join.sh PARQDB WAREHOUSE INDEX QUERIES.parquet KEY VECTOR K ROUNDS [self] [W]
# With "self" the join drops each query's own row (--self) and search asks
# for K+1, as the join does. Example (GloVe sample, cosine):
#   bin/parqdb --warehouse $W index create words --source examples/glove/glove-10k.parquet \
#     --vector-field embedding --key-fields word --metric cosine
#   bench/join.sh bin/parqdb $W words examples/glove/glove-10k.parquet word embedding 10 3 self
set -eu
P=$1 WH=$2 IX=$3 Q=$4 KEY=$5 VEC=$6 K=$7 N=${8:-3} SELF=${9:-} W=${10:-2}
export PARQDB_WAREHOUSE="$WH"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
SK=$K JF=""
if [ "$SELF" = self ]; then SK=$((K + 1)) JF=--self; fi
nq=""
# run NAME CMD…: prints "NAME wall cpu rss_mb"
run() {
	name=$1; shift
	/usr/bin/time -f "%e %U %S %M" -o "$T/time" "$@" >"$T/out" 2>"$T/err" || { cat "$T/err" >&2; exit 1; }
	read -r wall user sys rss <"$T/time"
	echo "$name $wall $(echo "$user + $sys" | bc) $((rss / 1024))"
}
i=0
while [ "$i" -lt "$N" ]; do
	rm -rf "$T/knn" "$T/s.parquet"
	s=$(run search "$P" search "$IX" --queries "$Q" --query-column "$VEC" -k "$SK" --columns "$KEY" --workers "$W" --format parquet --output "$T/s.parquet")
	j=$(run join "$P" join "$IX" --queries-table "$Q" --query-key "$KEY" --query-vector "$VEC" -k "$K" $JF --workers "$W" --output "$T/knn" -q)
	[ -n "$nq" ] || nq=$(awk '$1 == "queries" {print $2}' "$T/out")
	echo "$s" | { read -r _ sw sc sr; echo "$j" | { read -r _ jw jc jr
		echo "round $i queries $nq search: ${sw}s cpu ${sc}s rss ${sr}MB qps $(echo "$nq / $sw" | bc) | join: ${jw}s cpu ${jc}s rss ${jr}MB qps $(echo "$nq / $jw" | bc) | qps ratio $(echo "scale=2; $sw / $jw" | bc) cpu ratio search/join $(echo "scale=2; $sc / $jc" | bc)"; }; }
	i=$((i + 1))
done
