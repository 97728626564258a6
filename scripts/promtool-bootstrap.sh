#!/usr/bin/env bash
# Makes Prometheus's `promtool` available for the metrics tests (test/integration/metrics/promtool.spec.ts:
# `promtool check metrics` on each role's /metrics). Idempotent: installs Debian's `prometheus`
# package (about 19 MB to download, 96 MB installed; Debian ships promtool only inside it) with
# apt-get when no promtool is found, and keeps the server it brings from running: the tests need
# the checker only. Elsewhere, or without root, says what to do and returns 0; under CI=true the
# test fails when promtool is missing.
set -euo pipefail

say() { printf 'promtool-bootstrap: %s\n' "$*" >&2; }

if command -v promtool >/dev/null 2>&1; then
  exit 0
fi
if [ ! -r /etc/debian_version ] || ! command -v apt-get >/dev/null 2>&1 || [ "$(id -u)" != 0 ]; then
  say "no promtool found: the metrics format test will skip (and fail under CI=true). Install it"
  say "(Debian: apt-get install prometheus) or put Prometheus's promtool on the PATH."
  exit 0
fi
say "installing prometheus for its promtool (apt-get)"
export DEBIAN_FRONTEND=noninteractive
apt-get -o DPkg::Lock::Timeout=300 update -qq >/dev/null
apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends prometheus >/dev/null
# Where services start, the package starts a Prometheus server: the tests do not want it.
if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
  systemctl disable --now prometheus >/dev/null 2>&1 || true
fi
