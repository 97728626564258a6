#!/usr/bin/env bash
# Runs one of the README's two commands as a new user would: on a fresh Debian root file system
# (debootstrap), as root, with only Debian's nodejs and npm installed first, in namespaces of its
# own: a network namespace reaching the mirrors and the npm registry through a veth and NAT, its
# own mount, pid, uts and ipc namespaces, and so its own dockerd (the bootstrap starts it; its
# data-root is the fresh system's /var/lib/docker). Nothing is installed on this machine but
# debootstrap; the fresh system is thrown away at the end unless DMS_FRESH_KEEP=1.
#
# Usage (as root, on Debian or Ubuntu):
#   bash scripts/fresh-debian.sh bookworm|trixie [demo|test|shell]
#     demo: bash scripts/demo.sh (the default); test: npm test; shell: an interactive shell there.
# The checkout's files (tracked and untracked, not ignored: no node_modules, no dist) are copied
# to /root/dms there. Timings of each phase go to stderr.
# Env: DMS_FRESH_DIR (default /var/lib/dms-fresh: the debootstrapped bases are cached there, one
# per suite, and the same with nodejs and npm installed; each run copies that one), DMS_FRESH_MIRROR (default http://deb.debian.org/debian),
# DMS_FRESH_KEEP=1 keeps the run's root file system; DMS_FRESH_ROOT=<a kept one> runs there again.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'fresh-debian: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

SUITE=${1:-}
WHAT=${2:-demo}
# One network per suite and command, so that runs can go side by side.
case "$SUITE" in bookworm) NET=2 ;; trixie) NET=3 ;; *) die "usage: $0 bookworm|trixie [demo|test|shell]" ;; esac
case "$WHAT" in
  demo) CMD='bash scripts/demo.sh' NET=10.213.1$NET ;;
  test) CMD='npm test' NET=10.213.2$NET ;;
  shell) CMD='bash -i' NET=10.213.3$NET ;;
  *) die "usage: $0 $SUITE [demo|test|shell]" ;;
esac
[ "$(id -u)" = 0 ] || die "needs root (namespaces, debootstrap, NAT)"
for tool in debootstrap unshare ip iptables git; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool is missing (Debian: apt-get install debootstrap util-linux iproute2 iptables git)"
done

DIR=${DMS_FRESH_DIR:-/var/lib/dms-fresh}
MIRROR=${DMS_FRESH_MIRROR:-http://deb.debian.org/debian}
BASE=$DIR/$SUITE.base
ROOT=${DMS_FRESH_ROOT:-$DIR/$SUITE.run.$$}
[ -z "${DMS_FRESH_ROOT:-}" ] || DMS_FRESH_KEEP=1
NS=dms-fresh-$SUITE-$WHAT
HOST_IF=dmsf-${SUITE:0:4}-${WHAT:0:1}
T0=$(date +%s)
phase() { say "[$(($(date +%s) - T0))s] $*"; }

mkdir -p "$DIR"
if [ ! -x "$BASE/usr/bin/apt-get" ]; then
  phase "debootstrap $SUITE (the base is kept in $BASE for the next run)"
  rm -rf "$BASE.tmp"
  debootstrap --include=ca-certificates "$SUITE" "$BASE.tmp" "$MIRROR" >"$DIR/$SUITE.debootstrap.log" 2>&1 ||
    die "debootstrap failed: see $DIR/$SUITE.debootstrap.log"
  mv "$BASE.tmp" "$BASE"
fi

cleanup() {
  set +e
  iptables -t nat -D POSTROUTING -s "$NET.0/24" ! -o "$HOST_IF" -j MASQUERADE 2>/dev/null
  iptables -D FORWARD -i "$HOST_IF" -j ACCEPT 2>/dev/null
  iptables -D FORWARD -o "$HOST_IF" -j ACCEPT 2>/dev/null
  ip link del "$HOST_IF" 2>/dev/null
  ip netns del "$NS" 2>/dev/null
  if [ "${DMS_FRESH_KEEP:-0}" = 1 ]; then say "kept $ROOT"; else rm -rf --one-file-system "$ROOT"; fi
  rm -rf "$NODE_BASE.tmp"
}
trap cleanup EXIT

# The network: a veth pair, the fresh system at .2 behind NAT on this machine.
ip netns del "$NS" 2>/dev/null || true
ip link del "$HOST_IF" 2>/dev/null || true
ip netns add "$NS"
ip link add "$HOST_IF" type veth peer name eth0 netns "$NS"
ip addr add "$NET.1/24" dev "$HOST_IF"
ip link set "$HOST_IF" up
ip -n "$NS" addr add "$NET.2/24" dev eth0
ip -n "$NS" link set eth0 up
ip -n "$NS" link set lo up
ip -n "$NS" route add default via "$NET.1"
sysctl -qw net.ipv4.ip_forward=1
# Inserted first: Docker's FORWARD policy is DROP.
iptables -I FORWARD -i "$HOST_IF" -j ACCEPT
iptables -I FORWARD -o "$HOST_IF" -j ACCEPT
iptables -t nat -A POSTROUTING -s "$NET.0/24" ! -o "$HOST_IF" -j MASQUERADE

# Inside: new mount, pid, uts and ipc namespaces; proc, sys and run of its own, the machine's
# cgroups and devices (dockerd and the disk quota's loop devices need them), then chroot.
INNER=$(
  cat <<'EOS'
set -euo pipefail
R=$1; CMD=$2; NAME=$3
DMS_FRESH_CA=${DMS_FRESH_CA:-}
mount --make-rprivate /
hostname "$NAME"
# The root a mount point, as on a machine: dockerd's unpacking remounts / (EINVAL on a folder).
mount --bind "$R" "$R"
mount -t proc proc "$R/proc"
mount -t sysfs sysfs "$R/sys"
mount --rbind /sys/fs/cgroup "$R/sys/fs/cgroup"
mount --rbind /dev "$R/dev"
mount -t tmpfs -o mode=0755 tmpfs "$R/run"
mkdir -p "$R/run/lock"
exec chroot "$R" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  ${DMS_FRESH_CA:+NODE_EXTRA_CA_CERTS=$DMS_FRESH_CA} bash -c "$CMD"
EOS
)
run_inside() { # root, command
  # nsenter, not `ip netns exec`: that mounts a sysfs of its own over /sys, hiding the cgroup
  # hierarchies dockerd needs ("Devices cgroup isn't mounted").
  nsenter --net="/run/netns/$NS" unshare --mount --pid --uts --ipc --fork --kill-child bash -c "$INNER" inner "$1" "$2" "$NS"
}

NODE_BASE=$DIR/$SUITE.node
if [ ! -x "$NODE_BASE/usr/bin/npm" ]; then
  phase "apt-get install nodejs npm (all that is installed before the README's command; kept in $NODE_BASE)"
  rm -rf "$NODE_BASE.tmp"
  cp -a "$BASE" "$NODE_BASE.tmp"
  cp /etc/resolv.conf "$NODE_BASE.tmp/etc/resolv.conf"
  run_inside "$NODE_BASE.tmp" 'export DEBIAN_FRONTEND=noninteractive
apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null && apt-get clean' ||
    die "apt-get install nodejs npm failed in $NODE_BASE.tmp"
  mv "$NODE_BASE.tmp" "$NODE_BASE"
fi

if [ -n "${DMS_FRESH_ROOT:-}" ]; then
  phase "again in $DMS_FRESH_ROOT (kept by an earlier run: not fresh)"
else
  phase "copying the fresh system (nodejs and npm only) and this checkout to $ROOT"
  cp -a "$NODE_BASE" "$ROOT"
  mkdir -p "$ROOT/root/dms"
  git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - | tar -C "$ROOT/root/dms" -xf -
fi
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
echo "$NS" >"$ROOT/etc/hostname"
# A machine behind a TLS-intercepting proxy (as this one is) trusts the proxy's CA: so does the
# fresh system, or npm fails SELF_SIGNED_CERT_IN_CHAIN. Only this machine's own added CAs are
# carried, and NODE_EXTRA_CA_CERTS when set here (Node reads no system store by default).
CAS=(/usr/local/share/ca-certificates/*.crt)
if [ -e "${CAS[0]}" ]; then
  cp "${CAS[@]}" "$ROOT/usr/local/share/ca-certificates/"
  run_inside "$ROOT" 'update-ca-certificates >/dev/null 2>&1'
fi
export DMS_FRESH_CA=${NODE_EXTRA_CA_CERTS:+/etc/ssl/certs/ca-certificates.crt}

run_inside "$ROOT" 'echo "node $(node --version), npm $(npm --version), $(. /etc/os-release && echo "$PRETTY_NAME")"'

phase "running: cd /root/dms && $CMD"
rc=0
if [ "$WHAT" = shell ]; then
  run_inside "$ROOT" "cd /root/dms && $CMD" || rc=$?
else
  run_inside "$ROOT" "cd /root/dms && $CMD" </dev/null || rc=$?
fi
phase "$CMD exited $rc"
exit "$rc"
