#!/usr/bin/env bash
# Prints, one a line, the Debian packages docker-bootstrap.sh installs on this machine: nothing
# when the engine, its command and busybox-static are all here.
# Debian 13 moved the `docker` command out of docker.io into docker-cli, which docker.io only
# recommends (and the bootstrap installs without recommends): docker-cli is added wherever the
# archive has it (`apt-cache policy docker-cli` names a candidate); Debian 12 has no such package.
# Reads only `command -v`, `dpkg -s` and `apt-cache policy` (from PATH: the test stubs them).
set -euo pipefail

has_candidate() {
  # `apt-cache policy X` prints nothing for a package the archive does not know, and
  # "Candidate: (none)" for one it knows but cannot install.
  apt-cache policy "$1" 2>/dev/null | awk '/^ *Candidate:/ { found = ($2 != "(none)") } END { exit !found }'
}

need_engine=0
need_cli=0
command -v dockerd >/dev/null 2>&1 || need_engine=1
if ! command -v docker >/dev/null 2>&1; then
  if has_candidate docker-cli; then
    need_cli=1
  else
    need_engine=1 # Debian 12 and older: the command comes with docker.io
  fi
fi
[ "$need_engine" = 0 ] || echo docker.io
[ "$need_cli" = 0 ] || echo docker-cli
dpkg -s busybox-static >/dev/null 2>&1 || echo busybox-static # the test image is built from it
