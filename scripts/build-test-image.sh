#!/usr/bin/env bash
# Builds the local test image (default dms-test:1) from Debian's static busybox, with `docker import`:
# no registry is needed or assumed. The rootfs holds /bin/busybox, a /bin symlink for every applet
# busybox lists, empty /tmp /outputs /inputs, and an /etc/passwd + /etc/group with `nobody` (65534).
#
# Idempotent: does nothing when the image already exists, unless FORCE=1.
# Env: DMS_TEST_IMAGE (name:tag, default dms-test:1), BUSYBOX (default /bin/busybox), FORCE=1,
# DMS_IMAGE_ENGINE: `docker` (default), or a podman command line with its global options (e.g.
# "podman --root /var/lib/dms-podman/storage ..."), which imports the same image with `podman import`.
set -euo pipefail

IMAGE=${DMS_TEST_IMAGE:-dms-test:1}
BUSYBOX=${BUSYBOX:-/bin/busybox}
read -r -a ENGINE <<<"${DMS_IMAGE_ENGINE:-docker}"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

say() { printf 'build-test-image: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

case "${ENGINE[0]}" in
  docker)
    command -v docker >/dev/null 2>&1 \
      || die "the docker CLI is not installed. Run $HERE/docker-bootstrap.sh first."
    docker version --format '{{.Server.Version}}' >/dev/null 2>&1 \
      || die "the Docker engine is not reachable. Run $HERE/docker-bootstrap.sh first (it installs and starts dockerd)."
    ;;
  podman)
    command -v podman >/dev/null 2>&1 \
      || die "podman is not installed. Run $HERE/podman-bootstrap.sh first (Debian: apt-get install podman)."
    ;;
  *) die "DMS_IMAGE_ENGINE must start with docker or podman, not ${ENGINE[0]}" ;;
esac

if [ "${FORCE:-0}" != 1 ] && "${ENGINE[@]}" image inspect "$IMAGE" >/dev/null 2>&1; then
  say "$IMAGE already present (FORCE=1 rebuilds)"
  exit 0
fi

[ -x "$BUSYBOX" ] || die "$BUSYBOX not found. Install it with: apt-get install -y busybox-static (or run $HERE/docker-bootstrap.sh)."
# A dynamically linked busybox would need its libc inside the image: insist on the static build.
if ldd "$BUSYBOX" >/dev/null 2>&1; then
  die "$BUSYBOX is dynamically linked; install busybox-static (apt-get install -y busybox-static)."
fi

ROOTFS=$(mktemp -d "${TMPDIR:-/tmp}/dms-test-rootfs.XXXXXX")
trap 'rm -rf "$ROOTFS"' EXIT

mkdir -p "$ROOTFS"/{bin,etc,tmp,outputs,inputs}
chmod 1777 "$ROOTFS/tmp"
chmod 0777 "$ROOTFS/outputs"
chmod 0755 "$ROOTFS/inputs"
cp "$BUSYBOX" "$ROOTFS/bin/busybox"
chmod 0755 "$ROOTFS/bin/busybox"
n=0
while IFS= read -r applet; do
  [ -n "$applet" ] && [ "$applet" != busybox ] || continue
  ln -s busybox "$ROOTFS/bin/$applet"
  n=$((n + 1))
done < <("$BUSYBOX" --list)

cat >"$ROOTFS/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
EOF
cat >"$ROOTFS/etc/group" <<'EOF'
root:x:0:
nogroup:x:65534:
EOF
chmod 0644 "$ROOTFS/etc/passwd" "$ROOTFS/etc/group"

# --owner/--group: the image's files belong to root even when this script is not run as root.
tar -C "$ROOTFS" --numeric-owner --owner=0 --group=0 -cf - . \
  | "${ENGINE[@]}" import $([ "${ENGINE[0]}" = podman ] && echo --quiet) \
    -c 'CMD ["/bin/sh"]' \
    -c 'ENV PATH=/bin' \
    -c 'WORKDIR /' \
    -m "dms test image: static busybox with $n applets" \
    - "$IMAGE" >/dev/null

say "built $IMAGE in ${ENGINE[0]} ($n applets from $BUSYBOX)"
