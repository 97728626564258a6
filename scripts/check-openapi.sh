#!/usr/bin/env bash
# Fails when specs/openapi.json (or specs/workflow.schema.json) is not what the REST API's route schemas generate
# (scripts/gen-openapi.ts): regenerate with `npm run openapi` and commit it.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
npx tsx --import ./actors/polyfill.ts scripts/gen-openapi.ts "$tmp/openapi.json" >/dev/null
if ! cmp -s "$tmp/openapi.json" specs/openapi.json; then
  echo "specs/openapi.json is stale: run 'npm run openapi' and commit the result" >&2
  diff -u specs/openapi.json "$tmp/openapi.json" | head -40 >&2 || true
  exit 1
fi
if ! cmp -s "$tmp/workflow.schema.json" specs/workflow.schema.json; then
  echo "specs/workflow.schema.json is stale: run 'npm run openapi' and commit the result" >&2
  exit 1
fi
echo "specs/openapi.json and specs/workflow.schema.json are up to date"
