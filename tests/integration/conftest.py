"""Integration tests: the real tools from hack/tools.sh and a real control plane.

Fixtures (see tests/support/fixtures.py): ``control_plane``, ``controller_manager``,
``namespace``; tools by name through ``tests.support.tools.tool``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

try:
    import tests.support  # noqa: F401
except ImportError:  # e.g. --import-mode=importlib without the repo root on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "integration: runs real tools built by hack/tools.sh (kustomize, helm, kubectl, act, a control plane)",
    )
