#!/usr/bin/env bash
# The first run: wavegen on the example bundle shipped in the repo. Shows the diff it makes (only the
# hash lines), what depends on what, and `wavegen plan` for a change to the example: what will roll, and why.
# Every path it prints is relative to the repository; its files go to build/demo/ (ignored by git).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${WAVEGEN_VENV:-$HOME/.cache/wavegen-venv}
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install -q -e . >/dev/null 2>&1 || { echo "demo: pip install failed" >&2; exit 1; }
wavegen=$VENV/bin/wavegen
out=build/demo
mkdir -p "$out"

"$wavegen" transform examples/shop.yaml -o "$out/shop.yaml"
echo "=== 1. wavegen transform examples/shop.yaml -o $out/shop.yaml: the diff is only the hash lines"
diff -u --label examples/shop.yaml --label "$out/shop.yaml" examples/shop.yaml "$out/shop.yaml" || true

echo
echo "=== 2. wavegen explain examples/shop.yaml: which workload reads which ConfigMap/Secret key"
"$wavegen" explain examples/shop.yaml

# A change a user might make: the log level the shop reads, and a key nobody reads.
sed -e "s/LOG_LEVEL: 'info'/LOG_LEVEL: 'debug'/" -e 's/unused-by-anyone: "42"/unused-by-anyone: "43"/' \
  examples/shop.yaml >"$out/shop-next.yaml"
echo
echo "=== 3. wavegen plan examples/shop.yaml $out/shop-next.yaml: what will roll, and why"
echo "    (the change: LOG_LEVEL info -> debug, unused-by-anyone 42 -> 43)"
"$wavegen" plan examples/shop.yaml "$out/shop-next.yaml"
