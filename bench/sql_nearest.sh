#!/bin/sh
# sql_nearest.sh: per-row SQL search (ivf_nearest, one statement) against
# the batch CLI (parqdb search --queries) on the same query vectors, in
# interleaved rounds, both returning the word and _distance of 5 hits per
# query; prints each round's seconds, the start-up cost of each (one
# search), and the ratio of their query rates after start-up.
# Usage: bench/sql_nearest.sh PARQDB WAREHOUSE QUERIES.parquet ROUNDS
# (an index "words" over examples/glove/glove-10k.parquet; QUERIES has
# columns word, embedding). PARQDB must be built with -tags duckdb,duckdb_arrow.
set -eu
P=$1 WH=$2 Q=$3 N=${4:-5}
export PARQDB_WAREHOUSE="$WH"
secs() { s=$(date +%s.%N); "$@" >/dev/null 2>&1; e=$(date +%s.%N); echo "$e - $s" | bc; }
nq=$("$P" sql "SELECT count(*) AS n FROM read_parquet('$Q')" --format csv 2>/dev/null | tail -1)
echo "queries: $nq"
i=0
while [ "$i" -lt "$N" ]; do
	b=$(secs "$P" search words --queries "$Q" --query-column embedding -k 5 --columns word --format csv --output /dev/null)
	s=$(secs "$P" sql "SELECT count(*) FROM (SELECT unnest(ivf_nearest('words', embedding, 5, columns := ['word'])) FROM read_parquet('$Q'))")
	b0=$(secs "$P" search words --near-key king -k 5)
	s0=$(secs "$P" sql "SELECT count(*) FROM ivf_search_key('words', 'king', 5)")
	echo "round $i batch $b sql $s batch-start $b0 sql-start $s0 qps-ratio(sql/batch) $(echo "scale=3; ($b - $b0) / ($s - $s0)" | bc)"
	i=$((i + 1))
done
