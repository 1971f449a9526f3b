"""`make demo` on the repository: the diff, the explain output and the plan, with only repository-relative paths."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.tools import REPO_ROOT

pytestmark = pytest.mark.integration


def test_demo_shows_diff_explain_and_plan_with_relative_paths() -> None:
    venv = Path(sys.executable).parent.parent
    done = subprocess.run(
        ["bash", "hack/demo.sh"], capture_output=True, text=True, cwd=REPO_ROOT,
        env={**os.environ, "WAVEGEN_VENV": str(venv)}, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = done.stdout
    added = [line for line in out.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert added and all("wavegen.io/config-hash" in line for line in added)
    assert "Deployment/default/shop (examples/shop.yaml, document 4)" in out
    assert "wavegen plan: examples/shop.yaml (1 file(s)) → build/demo/shop-next.yaml (1 file(s))" in out
    assert re.search(r"Will roll \(1\):\n  Deployment/default/shop\n    ConfigMap shop-config: changed LOG_LEVEL", out)
    # No temporary or absolute path: a newcomer sees the files they can open.
    assert "/tmp" not in out and str(REPO_ROOT) not in out and not re.search(r"(^|\s)/\w", out)
