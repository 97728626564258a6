#!/usr/bin/env bash
# Fails when the committed TypeScript generated from proto/*.proto (protons codecs and the
# wire-type schemas of scripts/proto-wire.ts) is stale.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp proto/*.proto "$tmp/"
npx protons "$tmp"/*.proto >/dev/null
npx tsx scripts/proto-wire.ts "$tmp"/*.proto
for f in "$tmp"/*.ts; do
  if ! cmp -s "$f" "proto/$(basename "$f")"; then
    echo "proto/$(basename "$f") is stale: run 'npm run proto' and commit the result" >&2
    exit 1
  fi
done
echo "generated protobuf code is up to date"
