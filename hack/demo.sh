#!/usr/bin/env bash
# Run wavegen on the example bundle shipped in the repo and show what changed.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${WAVEGEN_VENV:-$HOME/.cache/wavegen-venv}
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install -q -e . >/dev/null 2>&1 || { echo "demo: pip install failed" >&2; exit 1; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$VENV/bin/wavegen" transform examples/shop.yaml -o "$out"
echo "--- diff between examples/shop.yaml and wavegen's output (only the hash lines):"
diff examples/shop.yaml "$out" || true
echo "--- which workload depends on which ConfigMap/Secret key:"
"$VENV/bin/wavegen" explain "$out"
