#!/usr/bin/env bash
# Build the repository's Dockerfile without a registry or a Docker engine (docs/container.md):
#   1. install buildah and mmdebstrap from Debian packages if missing (needs root or sudo);
#   2. make a Debian base with python3, pip and useradd using mmdebstrap, shaped like
#      python:*-slim for the Dockerfile, cached in $WAVEGEN_IMAGE_CACHE keyed by its recipe;
#   3. import it into buildah's local storage as localhost/wavegen-python-base:<key>;
#   4. buildah build --isolation chroot --build-arg PYTHON_IMAGE=<that base> -t $WAVEGEN_IMAGE .
#
#   hack/image.sh            all of the above; prints the image name last
#   hack/image.sh --deps     step 1 only (hack/test.sh runs this)
#   hack/image.sh --check    exit 0 when buildah and mmdebstrap are installed, else 1 naming them
#
# Environment: WAVEGEN_IMAGE (default localhost/wavegen:dev), WAVEGEN_IMAGE_CACHE (default
# ~/.cache/wavegen-image), WAVEGEN_DEBIAN_SUITE (default bookworm), WAVEGEN_DEBIAN_MIRROR
# (default http://deb.debian.org/debian), WAVEGEN_PLATFORM (default this machine's, e.g.
# linux/arm64: the bases and the build run under qemu-user-static through binfmt_misc, which
# this script installs and mounts).
set -euo pipefail
cd "$(dirname "$0")/.."

IMAGE=${WAVEGEN_IMAGE:-localhost/wavegen:dev}
HOST_ARCH=$(dpkg --print-architecture 2>/dev/null || echo amd64)
PLATFORM=${WAVEGEN_PLATFORM:-linux/$HOST_ARCH}
ARCH=${PLATFORM#linux/}
CACHE=${WAVEGEN_IMAGE_CACHE:-$HOME/.cache/wavegen-image}
SUITE=${WAVEGEN_DEBIAN_SUITE:-bookworm}
MIRROR=${WAVEGEN_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY_MIRROR=${MIRROR%/debian}/debian-security
# buildah's own dependencies (containers-common, storage config) come with its package; chroot
# isolation needs no OCI runtime, so none is installed.
HOST_PACKAGES=(buildah mmdebstrap)
# What the Dockerfile expects of python:*-slim: python3 and pip on PATH, useradd, CA certificates.
BASE_PACKAGES=python3,python3-pip,passwd,ca-certificates
# the runtime base is the same without pip: the final stage copies a virtualenv in.
RUNTIME_PACKAGES=python3,passwd,ca-certificates

log() { echo "image: $*" >&2; }

missing_packages() {
  local pkg missing=()
  for pkg in "${HOST_PACKAGES[@]}"; do
    command -v "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  # mmdebstrap checks the Debian archive's signatures (not preinstalled on Ubuntu)
  [ -s /usr/share/keyrings/debian-archive-keyring.gpg ] || missing+=(debian-archive-keyring)
  echo "${missing[*]}"
}

install_deps() {
  local missing sudo=()
  missing=$(missing_packages)
  [ -z "$missing" ] && return 0
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      sudo=(sudo -n)
    else
      log "missing: $missing; install them as root: apt-get install --no-install-recommends $missing"
      return 1
    fi
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    log "missing: $missing; this script installs them with apt-get (Debian/Ubuntu); install them by hand"
    return 1
  fi
  log "installing $missing (apt-get)"
  # another process may hold the dpkg lock (unattended upgrades, a parallel run): wait for it
  "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 update -qq
  # shellcheck disable=SC2086  # word splitting of the package list is intended
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
    --no-install-recommends $missing >/dev/null
}

# A foreign architecture runs its binaries through qemu-user-static, registered in binfmt_misc.
ensure_emulation() {
  [ "$ARCH" = "$HOST_ARCH" ] && return 0
  local qemu
  case $ARCH in
    arm64) qemu=qemu-aarch64 ;;
    *) qemu=qemu-$ARCH ;;
  esac
  if [ ! -e /proc/sys/fs/binfmt_misc/register ]; then
    mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc || { log "cannot mount binfmt_misc (needs root)"; exit 1; }
  fi
  # mmdebstrap asks arch-test whether the foreign architecture's binaries can run here.
  if [ ! -e "/proc/sys/fs/binfmt_misc/$qemu" ] || ! command -v arch-test >/dev/null 2>&1; then
    log "installing qemu-user-static binfmt-support arch-test (apt-get) for $PLATFORM"
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends \
      qemu-user-static binfmt-support arch-test >/dev/null
    update-binfmts --enable "$qemu" >/dev/null 2>&1 || true
  fi
  [ -e "/proc/sys/fs/binfmt_misc/$qemu" ] || { log "$qemu is not registered in binfmt_misc"; exit 1; }
}

case "${1:-}" in
  --deps) install_deps; exit ;;
  --check)
    missing=$(missing_packages)
    if [ -n "$missing" ]; then
      echo "missing: $missing (run hack/image.sh --deps, or apt-get install --no-install-recommends $missing)"
      exit 1
    fi
    exit 0 ;;
  "") ;;
  *) echo "usage: hack/image.sh [--deps|--check]" >&2; exit 2 ;;
esac

install_deps
ensure_emulation
mkdir -p "$CACHE"
# one build at a time per cache (parallel test sessions share it)
exec 9>"$CACHE/.lock"
flock 9

# ---- the base rootfs -----------------------------------------------------------------------------
# Shaped like python:*-slim for the Dockerfile: pip may install into the system Python (Debian's
# EXTERNALLY-MANAGED marker removed), documentation and translations left out, merged /usr without
# the usrmerge package (which would pull in perl).
SOURCES=(
  "deb $MIRROR $SUITE main"
  "deb $MIRROR $SUITE-updates main"
  "deb $SECURITY_MIRROR $SUITE-security main"
)

# make_base PACKAGES DESCRIPTION -> prints the image name of a Debian base holding PACKAGES
make_base() {
  local packages=$1 description=$2 key tar image ctr t0
  local args=(
    --variant=essential --mode=root --format=tar
    --include="$packages"
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr
    --aptopt='Acquire::Check-Valid-Until "false"'
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright'
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*'
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/lintian/*'
    --customize-hook='rm -f "$1"/usr/lib/python3*/EXTERNALLY-MANAGED'
    --customize-hook='rm -rf "$1"/var/cache/* "$1"/var/log/* "$1"/var/lib/apt/lists/*'
  )
  # the host's own architecture keeps the recipe (and cache key) it always had
  if [ "$ARCH" != "$HOST_ARCH" ]; then args+=(--arch="$ARCH"); fi
  key=$(printf '%s\n' "$SUITE" "${SOURCES[@]}" "${args[@]}" | sha256sum | cut -c1-16)
  tar="$CACHE/base-$key.tar"
  image="localhost/wavegen-python-base:$key"
  # the tarball is needed only when buildah's storage lacks the base (first run, storage wiped)
  if ! buildah inspect --type image "$image" >/dev/null 2>&1; then
    if [ ! -s "$tar" ]; then
      log "mmdebstrap $SUITE ($packages) -> $tar"
      t0=$(date +%s)
      if ! mmdebstrap "${args[@]}" "$SUITE" "$tar.tmp" "${SOURCES[@]}" >"$CACHE/mmdebstrap.log" 2>&1; then
        tail -n 40 "$CACHE/mmdebstrap.log" >&2
        log "mmdebstrap failed (log: $CACHE/mmdebstrap.log)"
        exit 1
      fi
      mv "$tar.tmp" "$tar"
      log "base rootfs in $(( $(date +%s) - t0 ))s"
    fi
    log "importing $tar as $image"
    ctr=$(buildah from scratch)
    buildah add --quiet "$ctr" "$tar" /
    buildah config --arch "$ARCH" --os linux "$ctr"
    buildah config \
      --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      --env LANG=C.UTF-8 \
      --cmd python3 \
      --label org.opencontainers.image.description="Debian $SUITE with $description (hack/image.sh)" \
      "$ctr"
    buildah commit --quiet --rm "$ctr" "$image" >/dev/null
  fi
  echo "$image"
}
BASE_IMAGE=$(make_base "$BASE_PACKAGES" "python3 and pip")
RUNTIME_IMAGE=$(make_base "$RUNTIME_PACKAGES" "python3")
# (old recipes' tarballs stay: one per recipe and architecture, each a base image's only source)

# ---- the image -----------------------------------------------------------------------------------
# pip inside the build must reach the package index the way the host's pip does. Here that needs
# the host's CA bundle (a TLS-intercepting egress proxy's CA is in it): it is bind-mounted over
# the base's bundle for RUN steps only, so no layer keeps it. Index settings in the host's
# environment (PIP_INDEX_URL, PIP_EXTRA_INDEX_URL, PIP_TRUSTED_HOST) go in as a mounted
# /etc/pip.conf; nothing of this is in the Dockerfile.
VOLUMES=()
HOST_CA=/etc/ssl/certs/ca-certificates.crt
if [ -s "$HOST_CA" ]; then
  VOLUMES+=(--volume "$HOST_CA:/etc/ssl/certs/ca-certificates.crt:ro")
fi
if [ -n "${PIP_INDEX_URL:-}${PIP_EXTRA_INDEX_URL:-}${PIP_TRUSTED_HOST:-}" ]; then
  PIP_CONF="$CACHE/pip.conf"
  {
    echo "[global]"
    if [ -n "${PIP_INDEX_URL:-}" ]; then echo "index-url = $PIP_INDEX_URL"; fi
    if [ -n "${PIP_EXTRA_INDEX_URL:-}" ]; then echo "extra-index-url = $PIP_EXTRA_INDEX_URL"; fi
    if [ -n "${PIP_TRUSTED_HOST:-}" ]; then echo "trusted-host = $PIP_TRUSTED_HOST"; fi
  } >"$PIP_CONF"
  # the mount point stays behind in the image as an empty /etc/pip.conf, which pip ignores
  VOLUMES+=(--volume "$PIP_CONF:/etc/pip.conf:ro")
fi

log "buildah build -t $IMAGE (build base $BASE_IMAGE, runtime base $RUNTIME_IMAGE)"
t0=$(date +%s)
buildah build --quiet --isolation chroot --layers --pull=never --platform "$PLATFORM" \
  --build-arg "PYTHON_IMAGE=$BASE_IMAGE" \
  --build-arg "RUNTIME_IMAGE=$RUNTIME_IMAGE" \
  --build-arg "VERSION=$(python3 hack/versions.py show)" \
  "${VOLUMES[@]}" \
  --tag "$IMAGE" --file Dockerfile . >/dev/null
size=$(buildah images --format '{{.Size}}' "$IMAGE")
size=${size%%$'\n'*}  # one line per name of the image; no `| head`: SIGPIPE under pipefail
log "built $IMAGE in $(( $(date +%s) - t0 ))s, size $size"
echo "$IMAGE"
