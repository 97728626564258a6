#!/usr/bin/env bash
# Makes sure the process engine's tools are here (specs/executor.md, "The process engine"):
# util-linux's unshare, setpriv and pivot_root, mount/umount, coreutils. On Debian and Ubuntu they
# are part of every install; a minimal image (a container's) may lack util-linux or mount, and
# then this installs them with apt-get. Without root or apt-get, says what is missing and returns
# 0: only the process engine needs them, and it reports the same when asked (`dms resources`).
set -euo pipefail

say() { printf 'sandbox-bootstrap: %s\n' "$*" >&2; }

missing=()
for tool in unshare:util-linux setpriv:util-linux pivot_root:util-linux mount:mount umount:mount \
  dd:coreutils mkfifo:coreutils env:coreutils; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || missing+=("${tool##*:}")
done
if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi
packages=$(printf '%s\n' "${missing[@]}" | sort -u | tr '\n' ' ')
if [ ! -r /etc/debian_version ] || ! command -v apt-get >/dev/null 2>&1 || [ "$(id -u)" != 0 ]; then
  say "missing for the process engine: ${packages}(Debian/Ubuntu: apt-get install ${packages% })"
  exit 0
fi
say "installing ${packages}(apt-get)"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
# shellcheck disable=SC2086 # one word per package
apt-get install -y -qq --no-install-recommends $packages >/dev/null
