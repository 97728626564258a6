#!/usr/bin/env bash
# Makes Debian's PostgreSQL server programs available for the contract-db's PostgreSQL tests
# (specs/contract-db.md, "Storage backends"). Idempotent: installs `postgresql` with apt-get only
# when no initdb is found. A cluster the package creates and starts is stopped and set to
# `manual`: the tests start their own throwaway clusters (scripts/postgres-cluster.sh). Elsewhere,
# or without root, says what to do and returns 0: only the PostgreSQL tests need it, and they skip
# with that message when it is missing.
set -euo pipefail

say() { printf 'postgres-bootstrap: %s\n' "$*" >&2; }

if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1; then
  exit 0
fi
if [ ! -r /etc/debian_version ] || ! command -v apt-get >/dev/null 2>&1 || [ "$(id -u)" != 0 ]; then
  say "no PostgreSQL server found: the contract-db's PostgreSQL tests will skip. Install it"
  say "(Debian: apt-get install postgresql) or put a directory holding initdb and pg_ctl on the PATH."
  exit 0
fi
say "installing postgresql (apt-get)"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends postgresql >/dev/null
# The package creates a cluster `main` and may start it (where services start): stop it and keep
# it from starting at boot. Only clusters this install made: none existed before it.
if command -v pg_lsclusters >/dev/null 2>&1; then
  pg_lsclusters --no-header | while read -r ver name _; do
    pg_ctlcluster "$ver" "$name" stop 2>/dev/null || true
    echo manual >"/etc/postgresql/$ver/$name/start.conf"
  done
fi
