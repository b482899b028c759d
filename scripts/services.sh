#!/usr/bin/env bash
# services.sh start|stop [DIR] starts (stops) a local S3 server (versitygw)
# and PostgreSQL on 127.0.0.1 with their data in DIR (default ./services),
# for trying S3 warehouses and PostgreSQL catalogs by hand: `make services`,
# `make services-stop` (docs/storage.md, docs/catalog.md). They are the
# servers the tests start privately (internal/testenv); `make deps`
# installs them. start writes the settings to DIR/env and prints them:
#
#   . services/env       # or copy the export lines
#   parqdb index create words --source examples/glove/glove-10k.parquet …
#
# puts the warehouse in the bucket "parqdb" of the S3 server and the catalog
# in PostgreSQL. The servers keep running, and their data stays in DIR,
# until stop, which stops them and removes DIR. start refuses a DIR whose
# servers run; a DIR left by a machine restart is started afresh.
set -euo pipefail
cmd=${1:-}
dir=${2:-services}
case "$cmd" in start | stop) ;; *)
  echo "usage: $0 start|stop [DIR]" >&2
  exit 2
  ;;
esac
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
TOOLS=${PARQDB_TOOLS:-$HOME/.cache/parqdb-tools}

running() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# clean removes what start writes in DIR, and DIR when it is then empty:
# never anything else, whatever DIR is.
clean() {
  rm -rf "$dir/s3" "$dir/pg" "$dir/s3.log" "$dir/s3.pid" "$dir/s3.create" "$dir/env"
  rmdir "$dir" 2>/dev/null || true
}

stop() {
  if running "$dir/s3.pid"; then
    kill "$(cat "$dir/s3.pid")"
  fi
  if [ -f "$dir/pg/data/postmaster.pid" ]; then
    pid=$(head -1 "$dir/pg/data/postmaster.pid")
    # SIGINT is PostgreSQL's fast shutdown.
    kill -INT "$pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  clean
  echo "services: stopped; removed their data from $dir"
}

if [ "$cmd" = stop ]; then
  stop
  exit 0
fi

if running "$dir/s3.pid" || [ -f "$dir/pg/data/postmaster.pid" ]; then
  echo "services: $dir already has servers (. $dir/env); stop them with: $0 stop $dir" >&2
  exit 1
fi
if [ -n "$(ls -A "$dir")" ] && [ ! -f "$dir/env" ]; then
  echo "services: $dir is not empty and holds no services: choose an empty or new folder" >&2
  exit 1
fi
clean
mkdir -p "$dir"
# A start that fails stops what it started.
trap 'echo "services: start failed; stopping what it started" >&2; stop >/dev/null 2>&1' ERR

# freeport prints a port that nothing listens on, below the kernel's
# ephemeral range (from 20000, or 10000 when that range starts below 21000):
# a port the kernel may hand to any client socket meanwhile (a test's, a
# browser's) can be taken between this check and the server's bind.
freeport() {
  local lo=20000 hi
  hi=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
  [ "$hi" -ge 21000 ] 2>/dev/null || { lo=10000; hi=${hi:-20000}; }
  [ "$hi" -gt $((lo + 1000)) ] 2>/dev/null || hi=$((lo + 10000))
  while :; do
    p=$((lo + RANDOM % (hi - lo)))
    (: </dev/tcp/127.0.0.1/$p) 2>/dev/null || { echo $p; return; }
  done
}
hex() { head -c "$1" /dev/urandom | od -An -tx1 | tr -d ' \n'; }

# S3: versitygw over a folder, with the bucket "parqdb".
gw=$(command -v versitygw || echo "$TOOLS/bin/versitygw")
[ -x "$gw" ] || { echo "services: versitygw not found: run make deps" >&2; false; }
s3port=$(freeport)
key=parqdb$(hex 8)
secret=$(hex 20)
mkdir -p "$dir/s3"
env -i PATH="$PATH" HOME="$HOME" ROOT_ACCESS_KEY="$key" ROOT_SECRET_KEY="$secret" \
  nohup "$gw" --port "127.0.0.1:$s3port" --region us-east-1 --quiet posix "$dir/s3" >"$dir/s3.log" 2>&1 &
echo $! >"$dir/s3.pid"
for _ in $(seq 200); do
  curl -s -o /dev/null "http://127.0.0.1:$s3port/" && break
  running "$dir/s3.pid" || { cat "$dir/s3.log" >&2; false; }
  sleep 0.1
done
curl -sS --fail-with-body -X PUT --aws-sigv4 aws:amz:us-east-1:s3 --user "$key:$secret" \
  -H "x-amz-content-sha256: $(printf '' | sha256sum | cut -d' ' -f1)" "http://127.0.0.1:$s3port/parqdb" >"$dir/s3.create" 2>&1 ||
  { echo "services: could not create the bucket parqdb:" >&2; cat "$dir/s3.create" "$dir/s3.log" >&2; false; }

# PostgreSQL: a cluster of its own, as user postgres when run as root
# (initdb and postgres refuse root).
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$pgbin/initdb" ] || { echo "services: PostgreSQL not found: run make deps" >&2; false; }
as=()
if [ "$(id -u)" = 0 ]; then as=(runuser -u postgres --); fi
password=$(hex 16)
mkdir -p "$dir/pg"
printf '%s\n' "$password" >"$dir/pg/pwfile"
if [ ${#as[@]} != 0 ]; then
  chown -R postgres: "$dir/pg"
  "${as[@]}" test -r "$dir/pg/pwfile" || {
    echo "services: PostgreSQL runs as user postgres (you are root), which cannot reach $dir: choose a folder whose parents it may enter (mode o+x)" >&2
    false
  }
fi
"${as[@]}" env -i PATH="$PATH" LC_ALL=C "$pgbin/initdb" -D "$dir/pg/data" -U postgres --pwfile "$dir/pg/pwfile" \
  --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --locale=C --no-sync >"$dir/pg/initdb.log" 2>&1 ||
  { cat "$dir/pg/initdb.log" >&2; false; }
rm -f "$dir/pg/pwfile" "$dir/s3.create"
# (a port free a moment ago can be taken before the server binds it: a
# failed start tries another, three times)
for try in 1 2 3; do
  pgport=$(freeport)
  if "${as[@]}" env -i PATH="$PATH" LC_ALL=C "$pgbin/pg_ctl" -D "$dir/pg/data" -l "$dir/pg/postgres.log" -w -s \
    -o "-p $pgport -k $dir/pg -c listen_addresses=127.0.0.1" start; then
    break
  fi
  [ "$try" != 3 ] || { cat "$dir/pg/postgres.log" >&2; false; }
done

cat >"$dir/env" <<EOF
# S3 (versitygw, data in $dir/s3): the standard AWS variables
export AWS_ACCESS_KEY_ID=$key AWS_SECRET_ACCESS_KEY=$secret AWS_REGION=us-east-1 AWS_ENDPOINT_URL_S3=http://127.0.0.1:$s3port
# PostgreSQL (data in $dir/pg): the password from PGPASSWORD, not in the catalog URL
export PGPASSWORD=$password
# a warehouse in the bucket parqdb and its catalog in PostgreSQL
export PARQDB_WAREHOUSE=s3://parqdb/warehouse PARQDB_CATALOG=postgres://postgres@127.0.0.1:$pgport/postgres
EOF
echo "services: S3 on 127.0.0.1:$s3port (bucket parqdb), PostgreSQL on 127.0.0.1:$pgport; stop both with: make services-stop"
echo "services: the settings, also in $dir/env (. $dir/env):"
grep '^export' "$dir/env"
