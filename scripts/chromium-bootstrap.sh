#!/usr/bin/env bash
# Makes Debian's chromium available for the dashboard's browser tests (test/e2e/dashboard.spec.ts,
# driven by playwright-core through its executablePath). Idempotent: installs it with apt-get only
# when no chromium is found. Elsewhere, or without root, says what to do and returns 0: only the
# browser tests need it, and they skip with that message when it is missing.
set -euo pipefail

say() { printf 'chromium-bootstrap: %s\n' "$*" >&2; }

for c in "${DMS_CHROMIUM:-}" chromium chromium-browser; do
  if [ -n "$c" ] && command -v "$c" >/dev/null 2>&1; then
    exit 0
  fi
done
if [ ! -r /etc/debian_version ] || ! command -v apt-get >/dev/null 2>&1 || [ "$(id -u)" != 0 ]; then
  say "no chromium found: the dashboard's browser tests will skip. Install chromium (Debian: apt-get install chromium)"
  say "or point DMS_CHROMIUM at a Chromium binary."
  exit 0
fi
say "installing chromium (apt-get)"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends chromium >/dev/null
