#!/usr/bin/env bash
# The demo command (README): sets everything up, then runs `dms demo`: a contract-db, two
# providers and a requester as separate processes on 127.0.0.1, one real job in Docker to settlement.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec node bin/dms.js demo "$@"
