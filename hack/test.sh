#!/usr/bin/env bash
# The whole test suite on a fresh machine: Python deps into a cached venv,
# the real tools (hack/tools.sh), then pytest (unit, property, golden,
# integration with kustomize/helm/act and the container image built by buildah,
# e2e with a real API server).
#   hack/test.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${WAVEGEN_VENV:-$HOME/.cache/wavegen-venv}
PYTHON=${PYTHON:-python3}
if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
fi
export PIP_CACHE_DIR=${PIP_CACHE_DIR:-$HOME/.cache/pip}
"$VENV/bin/python" -m pip install -q --upgrade pip >/dev/null
"$VENV/bin/python" -m pip install -q -e '.[test]'
if [ -f hack/tools.sh ]; then bash hack/tools.sh; fi
# The container image builder (buildah, mmdebstrap) from Debian packages; the image itself is built
# once per session by tests/integration/test_container.py through hack/image.sh (cached).
if [ -f hack/image.sh ]; then
  bash hack/image.sh --deps || echo "hack/test.sh: image builder not installed; the container tests skip (fail under CI)" >&2
fi
export PATH="$VENV/bin:${WAVEGEN_TOOLS_DIR:-$HOME/.cache/wavegen-tools}/bin:$PATH"
exec "$VENV/bin/python" -m pytest "$@"
