"""One version everywhere: hack/versions.py agrees with the package, catches any place that drifts, and bumps them all."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.tools import REPO_ROOT
from wavegen import __version__

SCRIPT = REPO_ROOT / "hack" / "versions.py"
sys.path.insert(0, str(SCRIPT.parent))
import versions  # noqa: E402


def copy_of_places(tmp_path: Path) -> Path:
    for name in [versions.SOURCE[0], "CHANGELOG.md", *versions.PLACES]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO_ROOT / name, tmp_path / name)
    return tmp_path


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True)


def test_every_place_names_the_package_version() -> None:
    done = run("check")
    assert done.returncode == 0, done.stderr
    assert run("show").stdout.strip() == __version__


def test_the_wheel_metadata_reads_the_same_place() -> None:
    text = (REPO_ROOT / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in text and 'attr = "wavegen.__version__"' in text


@pytest.mark.parametrize("place", sorted(versions.PLACES))
def test_a_drifted_place_is_named(place: str, tmp_path: Path) -> None:
    root = copy_of_places(tmp_path)
    path = root / place
    path.write_text(path.read_text().replace(__version__, "9.9.9", 1))
    done = run("--root", str(root), "check")
    assert done.returncode == 1
    assert place in done.stderr and "9.9.9" in done.stderr


def test_bump_moves_every_place_and_the_changelog(tmp_path: Path) -> None:
    root = copy_of_places(tmp_path)
    done = run("--root", str(root), "bump", "1.2.3", "--date", "2026-12-01")
    assert done.returncode == 0, done.stderr
    assert versions.package_version(root) == "1.2.3"
    assert versions.disagreements(root) == []
    changelog = (root / "CHANGELOG.md").read_text()
    assert "## [Unreleased]\n\n## [1.2.3] - 2026-12-01\n" in changelog
    # Nothing else changed: bumping back restores the files byte for byte (but the CHANGELOG).
    run("--root", str(root), "bump", __version__)
    for name in [versions.SOURCE[0], *versions.PLACES]:
        assert (root / name).read_text() == (REPO_ROOT / name).read_text(), name
