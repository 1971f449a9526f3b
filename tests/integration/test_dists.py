"""The release dists: `python -m build` makes both, twine accepts them, sdist and tree give one wheel, pipx runs it."""

from __future__ import annotations

import email
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.integration.test_wheel import BUILD_LEFTOVERS, ROOT, SHOP
from wavegen import __version__
from wavegen.cli.commands import COMMANDS

pytestmark = pytest.mark.integration


def run(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``argv`` in ``cwd`` with exactly ``env`` (default: this process's environment)."""
    done = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, env=os.environ if env is None else env, timeout=900)
    assert done.returncode == 0, f"{argv}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    return done


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("dists")
    source = root / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*BUILD_LEFTOVERS))
    # `python -m build` makes the sdist, then the wheel from that sdist; the second wheel is built from the tree.
    run([sys.executable, "-m", "build", "--outdir", str(root / "dist"), str(source)], cwd=root)
    run([sys.executable, "-m", "build", "--wheel", "--outdir", str(root / "tree"), str(source)], cwd=root)
    (sdist,) = (root / "dist").glob("wavegen-*.tar.gz")
    (from_sdist,) = (root / "dist").glob("wavegen-*.whl")
    (from_tree,) = (root / "tree").glob("wavegen-*.whl")
    return {"root": root, "sdist": sdist, "wheel": from_sdist, "tree_wheel": from_tree}


def test_twine_check_strict(dists: dict[str, Path]) -> None:
    run([sys.executable, "-m", "twine", "check", "--strict", str(dists["sdist"]), str(dists["wheel"])], cwd=dists["root"])


def test_wheel_from_sdist_equals_wheel_from_tree(dists: dict[str, Path]) -> None:
    def contents(wheel: Path) -> dict[str, bytes]:
        with zipfile.ZipFile(wheel) as archive:
            return {n: archive.read(n) for n in archive.namelist() if not n.endswith("RECORD")}

    from_sdist, from_tree = contents(dists["wheel"]), contents(dists["tree_wheel"])
    assert sorted(from_sdist) == sorted(from_tree)
    assert from_sdist == from_tree


def test_metadata(dists: dict[str, Path]) -> None:
    with zipfile.ZipFile(dists["wheel"]) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        meta = email.message_from_bytes(archive.read(name))
        names = archive.namelist()
    assert meta["Version"] == __version__
    assert meta["License-Expression"] == "Apache-2.0"
    assert meta.get_all("License-File") == ["LICENSE"]
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert meta["Requires-Python"] == ">=3.11"
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL") or [])
    assert {"Homepage", "Source", "Issues", "Changelog"} <= urls.keys()
    classifiers = meta.get_all("Classifier") or []
    assert "Typing :: Typed" in classifiers and "Programming Language :: Python :: 3.11" in classifiers


def test_pipx_install_runs_every_command(dists: dict[str, Path], tmp_path: Path) -> None:
    env = {"PIPX_HOME": str(tmp_path / "pipx"), "PIPX_BIN_DIR": str(tmp_path / "bin"), "PIPX_MAN_DIR": str(tmp_path / "man")}
    run([sys.executable, "-m", "pipx", "install", str(dists["wheel"])], cwd=tmp_path, env={**os.environ, **env})
    wavegen = str(tmp_path / "bin" / "wavegen")
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "WAVEGEN_"))}
    assert run([wavegen, "--version"], cwd=tmp_path, env=clean).stdout.strip() == f"wavegen {__version__}"
    for command in COMMANDS:
        done = subprocess.run([wavegen, command, "--help"], capture_output=True, text=True, cwd=tmp_path, env=clean)
        assert done.returncode == 0 and "Traceback" not in done.stderr, (command, done.stderr)
    out = run([wavegen, "transform", str(SHOP)], cwd=tmp_path, env=clean).stdout
    assert "wavegen.io/config-hash" in out
    run([wavegen, "explain", "--format", "json", str(SHOP)], cwd=tmp_path, env=clean)
    run([wavegen, "plan", str(SHOP), str(SHOP)], cwd=tmp_path, env=clean)
    run([wavegen, "manifests"], cwd=tmp_path, env=clean)
    krm = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n"
    done = subprocess.run([wavegen, "krm"], input=krm, capture_output=True, text=True, cwd=tmp_path, env=clean)
    assert done.returncode == 0 and "ResourceList" in done.stdout, done.stderr
