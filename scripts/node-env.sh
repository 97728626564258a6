# Sourced (not run) by setup.sh, demo.sh and test.sh: puts a Node.js that DMS supports first on
# the PATH. Supported: 20.19 or newer on the 20 line (Debian 13 ships 20.19.2) and 22 or newer
# (the LTS lines; scripts/test.sh also runs the build and unit tests on 24). Where this machine's
# node is older or missing a supported line (Debian 12 ships 18.19), the official LTS build from
# npm is used instead (scripts/node-lts.sh: fetched once into a cache folder), as long as npm is
# here to fetch it; DMS_NODE_BIN is then its folder.

dms_node_supported() {
  command -v node >/dev/null 2>&1 &&
    node -e 'const [a, b] = process.versions.node.split(".").map(Number)
process.exit(a >= 22 || (a === 20 && b >= 19) ? 0 : 1)' 2>/dev/null
}

if ! dms_node_supported && command -v npm >/dev/null 2>&1; then
  printf 'setup: Node.js %s is not one DMS supports (20.19+ or 22+): using the official LTS build from npm (scripts/node-lts.sh)\n' \
    "$(node --version 2>/dev/null || echo '(none)')" >&2
  DMS_NODE_BIN=$(bash "$(dirname "${BASH_SOURCE[0]}")/node-lts.sh")
  export DMS_NODE_BIN PATH="$DMS_NODE_BIN:$PATH"
fi
