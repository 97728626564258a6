#!/usr/bin/env bash
# Puts `dms` on the PATH for this checkout (called by setup.sh): npm's global bin gets a link to
# bin/dms.js, so a later build is picked up. Where setup runs on the LTS build because this
# machine's node is too old (node-env.sh sets DMS_NODE_BIN; Debian 12 ships 18), a link would
# start dms on that old node ("#!/usr/bin/env node"): a two-line wrapper that runs bin/dms.js on
# the LTS build is written in its place.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'setup: %s\n' "$*" >&2; }

target="$(npm prefix -g)/bin/dms"
if [ -z "${DMS_NODE_BIN:-}" ]; then
  say "linking the dms command (npm link: $target)"
  npm link --no-audit --no-fund --ignore-scripts --loglevel=error
  exit 0
fi
case "$PWD$DMS_NODE_BIN" in
  *[\"\$\`\\]*)
    say "not writing $target: this checkout's or node's path holds a quote, \$, \` or \\"
    exit 1
    ;;
esac
say "writing the dms command ($target: this checkout's bin/dms.js on $DMS_NODE_BIN/node)"
mkdir -p "$(dirname "$target")"
printf '#!/bin/sh\n# Written by %s/scripts/setup.sh: this machine'"'"'s node is older than DMS supports.\nexec "%s/node" "%s/bin/dms.js" "$@"\n' \
  "$PWD" "$DMS_NODE_BIN" "$PWD" >"$target.tmp"
chmod 755 "$target.tmp"
mv -f "$target.tmp" "$target"
