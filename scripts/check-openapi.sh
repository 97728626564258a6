#!/usr/bin/env bash
# Fails when specs/openapi.json, specs/workflow.schema.json or the generated client types
# (test/helpers/openapi-client/api.d.ts) are not what the REST API's route schemas generate
# (scripts/gen-openapi.ts): regenerate with `npm run openapi` and commit them. Then compiles a
# client's round trip (test/helpers/openapi-client/round-trip.ts: post, status, logs, outputs)
# against the freshly generated types under a bare `tsc --strict`, as a user's project would.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
npx tsx --import ./actors/polyfill.ts scripts/gen-openapi.ts "$tmp/openapi.json" "$tmp/api.d.ts" >/dev/null
stale=0
for pair in "openapi.json:specs/openapi.json" "workflow.schema.json:specs/workflow.schema.json" \
  "api.d.ts:test/helpers/openapi-client/api.d.ts"; do
  if ! cmp -s "$tmp/${pair%%:*}" "${pair#*:}"; then
    echo "${pair#*:} is stale: run 'npm run openapi' and commit the result" >&2
    diff -u "${pair#*:}" "$tmp/${pair%%:*}" | head -40 >&2 || true
    stale=1
  fi
done
[ "$stale" = 0 ] || exit 1
mkdir "$tmp/client"
cp test/helpers/openapi-client/round-trip.ts "$tmp/client/"
cp "$tmp/api.d.ts" "$tmp/client/api.d.ts"
ln -s "$PWD/node_modules" "$tmp/client/node_modules"
cat >"$tmp/client/tsconfig.json" <<'JSON'
{
  "compilerOptions": {
    "strict": true,
    "noEmit": true,
    "target": "ES2022",
    "lib": ["ES2023", "DOM", "DOM.AsyncIterable"],
    "module": "NodeNext",
    "moduleResolution": "NodeNext",
    "types": []
  },
  "files": ["round-trip.ts"]
}
JSON
if ! (cd "$tmp/client" && npx tsc -p tsconfig.json); then
  echo "a client generated from specs/openapi.json does not compile the round trip (test/helpers/openapi-client/round-trip.ts)" >&2
  exit 1
fi
echo "specs/openapi.json, specs/workflow.schema.json and the client types are up to date; a generated client compiles"
