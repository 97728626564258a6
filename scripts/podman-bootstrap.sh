#!/usr/bin/env bash
# Makes Debian's podman available for the podman engine tests (test/e2e/executor/podman-*.spec.ts:
# the engine-compliance suite and one job through podman's Docker-compatible API; specs/executor.md,
# "Docker-API engines"). Idempotent: installs `podman` with apt-get only when it is missing, without
# recommends (as root the tests need no rootless helpers; runc comes with docker.io). Installing it
# starts nothing and leaves Docker's networking alone: the tests run their own `podman system
# service` over their own store. Elsewhere, or without root, says what to do and returns 0: the
# podman tests skip with that message (they fail under CI=true).
set -euo pipefail

say() { printf 'podman-bootstrap: %s\n' "$*" >&2; }

if command -v podman >/dev/null 2>&1; then
  exit 0
fi
if [ ! -r /etc/debian_version ] || ! command -v apt-get >/dev/null 2>&1 || [ "$(id -u)" != 0 ]; then
  say "no podman found: the podman engine tests will skip. Install podman (Debian: apt-get install podman)."
  exit 0
fi
say "installing podman (apt-get)"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends podman >/dev/null
