#!/usr/bin/env bash
# The test command (README, .ci/run): sets everything up, checks types, lint, format and the
# generated protobuf code, then runs every test (unit, integration on loopback, e2e with Docker).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=node-env.sh
. scripts/node-env.sh # the node setup.sh uses (the LTS build where the machine's is too old)
DMS_SETUP_LINK=0 DMS_SETUP_TESTS=1 bash scripts/setup.sh
echo "== node $(node --version)"
echo "== typecheck";     npm run -s typecheck
echo "== lint";          npm run -s lint
echo "== format";        npm run -s format:check
echo "== proto";         bash scripts/check-proto.sh
echo "== openapi";       bash scripts/check-openapi.sh
echo "== build and unit tests on Node.js LTS"
# Cheap next to the rest: the code builds and its units pass on the LTS line as well as on this
# machine's node (the supported versions: README). Skipped when this node is that build already.
lts_bin=$(bash scripts/node-lts.sh)
if [ "$(command -v node)" != "$lts_bin/node" ]; then
  # node_modules' optional native addons were compiled for this machine's node, not the LTS one:
  # test/helpers/foreign-addons.ts refuses them before they load (a load crashed Node 24 on Debian 13).
  PATH="$lts_bin:$PATH" bash -c 'node --version && npm run -s build &&
    NODE_OPTIONS="--import=./test/helpers/foreign-addons.ts" npx mocha --reporter dot "test/unit/**/*.spec.ts"'
fi
echo "== tests"
npx mocha --reporter ./test/helpers/file-times-reporter.ts 'test/unit/**/*.spec.ts' 'test/integration/**/*.spec.ts' 'test/e2e/**/*.spec.ts'
