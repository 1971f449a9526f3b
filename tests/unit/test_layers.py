"""The architecture holds: import-linter's contracts (pyproject.toml) and a lean offline path, checked in a subprocess."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
PLAN_CASE = FIXTURES / "plan" / "configmap-change"
NEVER_OFFLINE = ("kubernetes", "prometheus_client", "wavegen.controller")


def test_import_contracts_are_kept() -> None:
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert lint, "lint-imports not installed (pip install -e '.[test]')"
    done = subprocess.run([lint, "--config", str(ROOT / "pyproject.toml")], capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def imported_by(argv: list[str], tmp_path: Path) -> set[str]:
    """The modules loaded after running ``wavegen <argv>`` in a fresh interpreter (output to a file, not a pipe)."""
    code = (
        "import json, sys\nfrom wavegen.cli.main import main\n"
        f"sys.stdout = open({str(tmp_path / 'out')!r}, 'w')\n"
        f"rc = main({argv!r})\nsys.stdout.close()\nsys.stdout = sys.__stdout__\n"
        "print(json.dumps([rc, sorted(sys.modules)]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    rc, modules = json.loads(done.stdout.splitlines()[-1])
    assert rc == 0, done.stderr
    return set(modules)


def heavy(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


@pytest.mark.parametrize(
    "argv",
    [
        ["transform", str(FIXTURES / "helm-basic" / "input.yaml")],
        ["explain", str(FIXTURES / "helm-basic" / "input.yaml")],
        ["plan", "--format", "text", str(PLAN_CASE / "base.yaml"), str(PLAN_CASE / "head.yaml")],
    ],
    ids=["transform", "explain", "plan-text"],
)
def test_offline_commands_never_import_the_controller(argv: list[str], tmp_path: Path) -> None:
    assert heavy(imported_by(argv, tmp_path), NEVER_OFFLINE) == []


def test_transform_imports_no_templates_rich_text_or_pydantic(tmp_path: Path) -> None:
    modules = imported_by(["transform", str(FIXTURES / "helm-basic" / "input.yaml")], tmp_path)
    unused = ("jinja2", "rich", "pydantic", "ruamel", "urllib3", "http", "wavegen.cli.plan", "wavegen.cli.watch")
    assert heavy(modules, unused) == []
    assert "typer" in modules  # the command line really is typer


def test_the_import_check_sees_a_heavy_import(tmp_path: Path) -> None:
    assert "jinja2" in imported_by(["manifests"], tmp_path)  # manifests renders templates: the probe can fail
