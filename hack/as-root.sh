#!/usr/bin/env bash
# Run a command as root: directly when already root (a CI container, act here), else through sudo
# keeping the environment (GitHub's runners). buildah and mmdebstrap need root (hack/image.sh).
set -euo pipefail
if [ "$(id -u)" = 0 ]; then exec "$@"; fi
exec sudo --preserve-env "PATH=$PATH" "$@"
