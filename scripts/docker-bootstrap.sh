#!/usr/bin/env bash
# Makes a Docker engine available on this machine, then returns.
# On Debian/Ubuntu as root: installs what is missing (docker.io, docker-cli where the distribution
# splits the command out as Debian 13 does, busybox-static for the test image: docker-packages.sh),
# starts dockerd in the background if it is not answering, and waits for the socket.
# Elsewhere: says what to do and exits non-zero.
# Idempotent: running it again with an engine already up does nothing but check.
set -euo pipefail

SOCK=${DOCKER_SOCK:-/var/run/docker.sock}
WAIT_S=${DMS_DOCKER_WAIT_S:-60}
LOG=${DMS_DOCKERD_LOG:-/var/log/dms-dockerd.log}

say() { printf 'docker-bootstrap: %s\n' "$*" >&2; }

engine_up() { docker version --format '{{.Server.Version}}' >/dev/null 2>&1; }

if command -v docker >/dev/null 2>&1 && engine_up; then
  say "engine already running ($(docker version --format '{{.Server.Version}}'))"
  exit 0
fi

is_debian() { [ -r /etc/debian_version ] && command -v apt-get >/dev/null 2>&1; }

if ! is_debian; then
  say "this is not a Debian-like system. Install Docker Engine yourself (https://docs.docker.com/engine/install/),"
  say "start it, make sure 'docker version' shows a Server section, then run this again."
  exit 1
fi
if [ "$(id -u)" != 0 ]; then
  say "needs root to install and start Docker (try: sudo $0)."
  exit 1
fi

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export DEBIAN_FRONTEND=noninteractive
mapfile -t need < <(bash "$HERE/docker-packages.sh")
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq >/dev/null
  # Asked again after the update: on a fresh system the lists are empty and docker-cli unknown.
  mapfile -t need < <(bash "$HERE/docker-packages.sh")
  say "installing: ${need[*]} (apt-get)"
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
if ! command -v docker >/dev/null 2>&1; then
  say "no docker command after installing ${need[*]:-nothing}: the engine may be up, but this script and"
  say "the tests drive it with the docker CLI. Install the package holding /usr/bin/docker (Debian 13:"
  say "apt-get install docker-cli) and run this again."
  exit 1
fi

if ! engine_up; then
  if [ -S "$SOCK" ] && ! pgrep -x dockerd >/dev/null; then rm -f "$SOCK"; fi
  if ! pgrep -x dockerd >/dev/null; then
    say "starting dockerd (log: $LOG)"
    # setsid: dockerd outlives this script and is not killed with its process group.
    setsid nohup dockerd >"$LOG" 2>&1 </dev/null &
  fi
  for _ in $(seq 1 $((WAIT_S * 10))); do
    engine_up && break
    sleep 0.1 # polling an external daemon's socket: there is no event to wait on
  done
fi

if ! engine_up; then
  if pgrep -x dockerd >/dev/null; then
    say "dockerd is running but 'docker version' got no answer from $SOCK within ${WAIT_S}s:"
    docker version 2>&1 | tail -n 3 >&2 || true
  else
    say "dockerd is not running (it exited, or never started)."
  fi
  say "last lines of $LOG:"
  tail -n 20 "$LOG" >&2 || true
  exit 1
fi
say "engine running ($(docker version --format '{{.Server.Version}}'))"
