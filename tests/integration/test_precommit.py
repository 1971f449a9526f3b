"""The shipped .pre-commit-hooks.yaml run by the real pre-commit tool on a temporary git repository."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.tools import REPO_ROOT, run

pytestmark = pytest.mark.integration

SECRET_VALUE = "pre-commit-secret-value"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_GLOBAL": "/dev/null",
}

CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: api-config
data:
  MODE: blue
---
apiVersion: v1
kind: Secret
metadata:
  name: api-secret
stringData:
  TOKEN: {secret}
"""

DEPLOYMENT = """\
# Source: api/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  selector:
    matchLabels: {app: api}
  template:
    metadata:
      labels: {app: api}
    spec:
      containers:
        - name: api
          image: registry.example/api:2
          envFrom:
            - configMapRef: {name: api-config}
            - secretRef: {name: api-secret}
"""

CONFIG = """\
repos:
  - repo: {repo}
    rev: {rev}
    hooks:
      - id: wavegen-check
        files: ^rendered/
      - id: wavegen
        files: ^rendered/
        stages: [manual]
"""


def pre_commit() -> str:
    exe = Path(sys.executable).parent / "pre-commit"
    if not exe.exists():
        pytest.fail(f"pre-commit is not installed next to {sys.executable} (pip install pre-commit)")
    return str(exe)


def git(cwd: Path, *args: str) -> str:
    return run(["git", *args], cwd=cwd, env=GIT_ENV).stdout


@pytest.fixture(scope="module")
def hooks_repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str, Path]]:
    """A committed copy of this repository's hook definition and package, and a shared PRE_COMMIT_HOME."""
    base = tmp_path_factory.mktemp("precommit")
    repo = base / "wavegen"
    repo.mkdir()
    for name in (".pre-commit-hooks.yaml", "pyproject.toml", "README.md", "LICENSE"):
        if (REPO_ROOT / name).exists():
            shutil.copy(REPO_ROOT / name, repo / name)
    if not (repo / "README.md").exists():  # pyproject names it; the lead writes it
        (repo / "README.md").write_text("wavegen\n")
    shutil.copytree(REPO_ROOT / "wavegen", repo / "wavegen", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "hooks")
    yield repo, git(repo, "rev-parse", "HEAD").strip(), base / "pre-commit-home"


def user_repo(tmp_path: Path, hooks: tuple[Path, str, Path]) -> tuple[Path, dict[str, str]]:
    repo_path, rev, home = hooks
    repo = tmp_path / "gitops"
    (repo / "rendered" / "api").mkdir(parents=True)
    (repo / "rendered" / "api" / "configmap.yaml").write_text(CONFIGMAP.format(secret=SECRET_VALUE))
    (repo / "rendered" / "api" / "deployment.yaml").write_text(DEPLOYMENT)
    (repo / ".pre-commit-config.yaml").write_text(CONFIG.format(repo=repo_path, rev=rev))
    run([str(Path(sys.executable).parent / "wavegen"), "transform", "-i", "rendered/api"], cwd=repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "hashed")
    env = {**GIT_ENV, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    return repo, env


def test_shipped_hooks_check_and_fix_whole_bundle(tmp_path: Path, hooks_repo: tuple[Path, str, Path]) -> None:
    repo, env = user_repo(tmp_path, hooks_repo)
    deployment = repo / "rendered" / "api" / "deployment.yaml"
    committed = deployment.read_text()

    # a fresh bundle passes
    ok = run([pre_commit(), "run", "wavegen-check", "--all-files"], cwd=repo, env=env, check=False, timeout=600)
    assert ok.returncode == 0, ok.stdout + ok.stderr

    # only the ConfigMap's file changes and is staged: the Deployment in another file is stale
    configmap = repo / "rendered" / "api" / "configmap.yaml"
    configmap.write_text(configmap.read_text().replace("MODE: blue", "MODE: green"))
    git(repo, "add", "rendered/api/configmap.yaml")
    stale = run([pre_commit(), "run", "wavegen-check"], cwd=repo, env=env, check=False, timeout=600)
    out = stale.stdout + stale.stderr
    assert stale.returncode != 0, out
    assert "stale config hashes in rendered/api/deployment.yaml" in out, out
    assert "Deployment/default/api" in out
    assert deployment.read_text() == committed  # the check never writes
    assert SECRET_VALUE not in out

    # the fixer rewrites only the hash line of the Deployment, then the check passes
    fixed = run([pre_commit(), "run", "wavegen", "--hook-stage", "manual"], cwd=repo, env=env, check=False, timeout=600)
    assert fixed.returncode != 0, fixed.stdout + fixed.stderr  # files were modified
    changed = [(a, b) for a, b in zip(committed.splitlines(), deployment.read_text().splitlines(), strict=True) if a != b]
    assert len(changed) == 1 and "wavegen.io/config-hash" in changed[0][1], changed
    git(repo, "add", ".")
    again = run([pre_commit(), "run", "wavegen-check"], cwd=repo, env=env, check=False, timeout=600)
    assert again.returncode == 0, again.stdout + again.stderr
    cli = run([str(Path(sys.executable).parent / "wavegen"), "transform", "--check", "rendered/api"], cwd=repo, check=False)
    assert cli.returncode == 0, cli.stdout + cli.stderr


def test_files_outside_rendered_are_not_hooked(tmp_path: Path, hooks_repo: tuple[Path, str, Path]) -> None:
    repo, env = user_repo(tmp_path, hooks_repo)
    chart = repo / "charts" / "api" / "templates"
    chart.mkdir(parents=True)
    (chart / "cm.yaml").write_text("kind: ConfigMap\ndata:\n  {{ .Values.key }}: x\n")  # not YAML until rendered
    git(repo, "add", ".")
    proc = run([pre_commit(), "run", "wavegen-check"], cwd=repo, env=env, check=False, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "no files to check" in (proc.stdout + proc.stderr).lower()
