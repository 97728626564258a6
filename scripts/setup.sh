#!/usr/bin/env bash
# Sets up everything DMS needs on this machine, idempotently:
# a supported Node.js (scripts/node-env.sh: the LTS build from npm where the machine's is too
# old), npm dependencies, the build (skipped when dist/ is newer than every input), a running
# Docker engine, the process engine's tools (util-linux; scripts/sandbox-bootstrap.sh), and the
# local test image. On a fresh Debian machine run it as root (it installs docker.io, docker-cli
# where needed and busybox-static with apt-get).
# DMS_SETUP_TESTS=1 (scripts/test.sh) also installs what only the tests use: chromium, the browser
# of the dashboard's tests (test/e2e/dashboard.spec.ts, about 380 MB), and postgresql, whose
# throwaway clusters the contract-db's PostgreSQL tests start, prometheus, whose promtool checks
# every role's metrics (about 96 MB installed), and podman, the second Docker-API engine the
# executor is tested on. The demo needs none of them.
# DMS_REBUILD=1 builds even when dist/ looks up to date.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'setup: %s\n' "$*" >&2; }

# shellcheck source=node-env.sh
. scripts/node-env.sh
if ! dms_node_supported; then
  say "Node.js 20.19+ or 22+ is required; found $(node --version 2>/dev/null || echo none), and no npm to fetch"
  say "the LTS build with. Install Node.js (e.g. your distribution's nodejs and npm, or https://nodejs.org),"
  say "then run this again."
  exit 1
fi

if [ -L node_modules ]; then
  # Shared with another checkout (a git worktree): npm ci here would empty the folder it links
  # to under every checkout using it, and a fresh checkout's lock file always looks newer.
  if [ package-lock.json -nt node_modules/.package-lock.json ] &&
    ! cmp -s package-lock.json "$(readlink -f node_modules)/../package-lock.json"; then
    say "node_modules links to $(readlink -f node_modules), installed from another package-lock.json:"
    say "not reinstalling through the link; run npm ci in that checkout if the dependencies changed."
  fi
elif [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "installing npm dependencies (npm ci)"
  # No install scripts: the only ones build optional C++ addons (ssh2's crypto and cpu-features,
  # for docker-modem's ssh transport, which DMS never uses) and check for prebuilt binaries that
  # the packages load anyway. On Debian 12, node-gyp built those addons against Debian's Node 18
  # headers for the Node 24 build setup runs on: they loaded and corrupted the heap (tests ended
  # "free(): invalid pointer" or "Segmentation fault" after passing). Without them ssh2 uses its
  # JavaScript code, and no compiler is needed.
  npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
fi
bash scripts/build-if-stale.sh

# `dms` on the PATH (scripts/link-dms.sh). An existing `dms` elsewhere is left alone;
# DMS_SETUP_LINK=0 skips this (the tests do not need it).
if [ "${DMS_SETUP_LINK:-1}" = 0 ]; then
  :
elif ! command -v dms >/dev/null 2>&1; then
  bash scripts/link-dms.sh
elif [ "$(readlink -f "$(command -v dms)")" != "$(readlink -f bin/dms.js)" ] &&
  ! grep -qF "\"$PWD/bin/dms.js\"" "$(command -v dms)" 2>/dev/null; then
  say "dms on the PATH is $(command -v dms), not this checkout's: run npm link here to switch"
fi

bash scripts/docker-bootstrap.sh
if [ "${DMS_SETUP_TESTS:-0}" = 1 ]; then
  bash scripts/chromium-bootstrap.sh
  bash scripts/postgres-bootstrap.sh
  bash scripts/promtool-bootstrap.sh
  bash scripts/podman-bootstrap.sh
fi
bash scripts/sandbox-bootstrap.sh
bash scripts/build-test-image.sh
say "ready"
