#!/usr/bin/env bash
# Run the benchmarks and record their results under benchmarks/results/.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${WAVEGEN_VENV:-$HOME/.cache/wavegen-venv}
"$VENV/bin/python" benchmarks/transform_bench.py --corpus "$@" || true  # the report says which goals are missed
"$VENV/bin/python" benchmarks/transform_bench.py --with-slow "$@"
"$VENV/bin/python" benchmarks/startup_bench.py
"$VENV/bin/python" benchmarks/krm_bench.py
