#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for tests (specs/contract-db.md, "Storage backends").
#
#   scripts/postgres-cluster.sh start DIR   # prints postgres://dms:<password>@127.0.0.1:<port>/dms
#   scripts/postgres-cluster.sh stop DIR    # stops it and removes DIR
#
# DIR must not exist yet: the cluster, its socket, log and password live there. The server listens
# on 127.0.0.1 only, on a free port, with a random password for the `dms` user (no trust over TCP),
# and without fsync (a test's data is thrown away). As root it runs as the `postgres` user
# (PostgreSQL refuses root), so DIR's parents must be searchable by that user. Needs the server
# programs (scripts/postgres-bootstrap.sh).
set -euo pipefail

say() { printf 'postgres-cluster: %s\n' "$*" >&2; }

bindir() {
  if command -v pg_ctl >/dev/null 2>&1; then
    dirname "$(readlink -f "$(command -v pg_ctl)")"
    return
  fi
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  [ -n "$d" ] || { say "no PostgreSQL server programs found: run scripts/postgres-bootstrap.sh"; exit 2; }
  echo "$d"
}

as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { say "usage: $0 start|stop DIR"; exit 2; }
bin=$(bindir)

case "$cmd" in
  start)
    [ ! -e "$dir" ] || { say "$dir exists: give a new folder"; exit 2; }
    mkdir -p "$dir"
    [ "$(id -u)" != 0 ] || chown postgres: "$dir"
    chmod 700 "$dir"
    as_owner test -w "$dir" || { say "the server's user cannot reach $dir: make its parents searchable (chmod o+x)"; rm -rf "$dir"; exit 2; }
    password=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
    printf '%s\n' "$password" | as_owner tee "$dir/password" >/dev/null
    as_owner "$bin/initdb" -D "$dir/data" -U dms --auth-local=peer --auth-host=scram-sha-256 \
      --pwfile="$dir/password" -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 ||
      { cat "$dir/initdb.log" >&2; exit 1; }
    # A free port: the kernel picks one, then the server takes it (a race only with another
    # process binding the same moment; start fails then, and the caller sees why).
    port=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 \
      -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off" start >/dev/null ||
      { cat "$dir/server.log" >&2; exit 1; }
    PGPASSWORD=$password "$bin/createdb" -h 127.0.0.1 -p "$port" -U dms dms
    echo "postgres://dms:$password@127.0.0.1:$port/dms"
    ;;
  stop)
    [ -d "$dir/data" ] || { say "no cluster in $dir"; exit 2; }
    as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    rm -rf "$dir"
    ;;
  *)
    say "usage: $0 start|stop DIR"
    exit 2
    ;;
esac
