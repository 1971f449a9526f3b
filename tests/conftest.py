"""Shared pytest helpers: the repository root and the wavegen command."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.support.fixtures import (  # noqa: F401  (fixtures shared by integration and e2e)
    control_plane,
    controller_manager,
    namespace,
    terminal_summary,
)
from tests.support.splitting import split_everything  # noqa: F401  (a fixture of unit and integration tests)

REPO = Path(__file__).resolve().parent.parent


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    terminal_summary(terminalreporter)


@pytest.fixture(scope="session")
def wavegen_cmd() -> list[str]:
    """How to run the installed CLI as a separate process (console script, else python -m)."""
    script = shutil.which("wavegen", path=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    return [script] if script else [sys.executable, "-m", "wavegen"]
