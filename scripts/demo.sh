#!/usr/bin/env bash
# The demo command (README): sets everything up, then runs `dms demo`: a contract-db, two
# providers and a requester as separate processes on 127.0.0.1, one real job in Docker to settlement.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=node-env.sh
. scripts/node-env.sh # the node setup.sh uses (the LTS build where the machine's is too old)
bash scripts/setup.sh
exec node bin/dms.js demo "$@"
