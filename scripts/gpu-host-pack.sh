#!/usr/bin/env bash
# Packs DMS for a GPU host that has no package registry (issue 31): the packed `dms` tarball
# (npm pack: bin/, dist/, specs/), its production dependencies, and an official Node.js build
# (scripts/node-lts.sh), as ONE tar.xz of about 40 MB. On the host:
#   mkdir dms && tar -xJf dms-gpu-host.tar.xz -C dms && dms/node/bin/node dms/bin/dms.js --version
#   bash dms/scripts/gpu-host-check.sh   (the GPU check: specs/executor.md, "GPUs")
# Usage: bash scripts/gpu-host-pack.sh [OUT] (default /tmp/dms-gpu-host.tar.xz). Needs npm and the
# npm registry (here, not on the host). Prints the file and its size.
set -euo pipefail

OUT=${1:-/tmp/dms-gpu-host.tar.xz}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
say() { printf 'gpu-host-pack: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

command -v npm >/dev/null 2>&1 || die "npm is needed (Debian: apt-get install npm)"
command -v xz >/dev/null 2>&1 || die "xz is needed (Debian: apt-get install xz-utils)"
NODE_BIN=$(bash "$ROOT/scripts/node-lts.sh")

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
say "packing dms (npm pack: a fresh build)"
(cd "$ROOT" && npm pack --loglevel=error --pack-destination "$stage" >/dev/null) || die "npm pack failed (above)"
mkdir "$stage/dms"
tar -xzf "$stage"/dms-*.tgz -C "$stage/dms" --strip-components=1
cp "$ROOT/package-lock.json" "$stage/dms/"
say "installing its production dependencies (npm ci --omit=dev, no install scripts)"
(cd "$stage/dms" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null) ||
  die "npm ci failed (above): is the npm registry reachable?"
rm "$stage/dms/package-lock.json"
# The check to run there (scripts/gpu-host-check.sh), beside the bin/ and dist/ it runs.
mkdir -p "$stage/dms/scripts"
cp "$ROOT/scripts/gpu-host-check.sh" "$stage/dms/scripts/"
mkdir -p "$stage/dms/node/bin"
cp "$NODE_BIN/node" "$stage/dms/node/bin/node"
"$stage/dms/node/bin/node" "$stage/dms/bin/dms.js" --version >/dev/null || die "the packed dms does not start"
say "compressing (xz)"
tar -C "$stage/dms" -cf - . | xz -T0 -6 > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
printf '%s %s bytes\n' "$OUT" "$(stat -c %s "$OUT")"
