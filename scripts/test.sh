#!/usr/bin/env bash
# The test command (README, .ci/run): sets everything up, checks types, lint, format and the
# generated protobuf code, then runs every test (unit, integration on loopback, e2e with Docker).
set -euo pipefail
cd "$(dirname "$0")/.."
DMS_SETUP_LINK=0 DMS_SETUP_TESTS=1 bash scripts/setup.sh
echo "== typecheck";     npm run -s typecheck
echo "== lint";          npm run -s lint
echo "== format";        npm run -s format:check
echo "== proto";         bash scripts/check-proto.sh
echo "== openapi";       bash scripts/check-openapi.sh
echo "== tests"
npx mocha --reporter spec 'test/unit/**/*.spec.ts' 'test/integration/**/*.spec.ts' 'test/e2e/**/*.spec.ts'
