"""The composite GitHub Action (action.yml) run by real ``act`` on workflows in a temporary git repository."""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.tools import REPO_ROOT, act_command, act_env, run

pytestmark = pytest.mark.integration

SECRET_VALUE = "s3cr3t-never-printed"

CONFIG = """\
# rendered by hand for the action test
apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
  namespace: shop
data:
  LOG_LEVEL: info
  COLOR: blue
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: batch-config
  namespace: shop
data:
  SCHEDULE: nightly
---
apiVersion: v1
kind: Secret
metadata:
  name: web-secret
  namespace: shop
stringData:
  PASSWORD: {secret}
"""

WORKLOADS = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: registry.example/web:1  # pinned
          env:
            - name: LOG_LEVEL
              valueFrom:
                configMapKeyRef: {name: web-config, key: LOG_LEVEL}
            - name: PASSWORD
              valueFrom:
                secretKeyRef: {name: web-secret, key: PASSWORD}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: batch
  namespace: shop
spec:
  selector:
    matchLabels: {app: batch}
  template:
    metadata:
      labels: {app: batch}
    spec:
      containers:
        - name: batch
          image: registry.example/batch:1
          envFrom:
            - configMapRef: {name: batch-config}
"""

WORKFLOW = """\
name: wavegen-{mode}
on: push
jobs:
  wavegen:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: Use the wavegen under test
        run: echo "$WAVEGEN_TEST_BIN" >> "$GITHUB_PATH"
      - id: wg
        uses: ./
        with:
          paths: |
            rendered/config.yaml
            rendered/*-workloads.yaml
          mode: {mode}
          namespace: shop
          install: {install}
          base: {base}
      - name: Export results
        if: always()
        env:
          OUTPUTS: ${{{{ toJSON(steps.wg.outputs) }}}}
        run: |
          mkdir -p "$WAVEGEN_TEST_OUT"
          printf '%s' "$OUTPUTS" > "$WAVEGEN_TEST_OUT/outputs.json"
          cp -r rendered "$WAVEGEN_TEST_OUT/rendered"
"""


@dataclass
class ActRun:
    returncode: int
    log: list[dict[str, Any]]
    text: str
    out: Path

    def outputs(self) -> dict[str, str]:
        data: dict[str, str] = json.loads((self.out / "outputs.json").read_text())
        return data

    def summaries(self) -> list[str]:
        return [e["content"] for e in self.log if e.get("command") == "summary"]

    def messages(self) -> list[str]:
        return [str(e.get("msg", "")) for e in self.log]


def _git(repo: Path, *args: str, env: dict[str, str]) -> None:
    git = shutil.which("git")
    if git is None:
        pytest.fail("git is required")
    run([git, *args], cwd=repo, env=env)


def _wavegen_bin() -> str:
    bin_dir = Path(sys.executable).parent
    if not (bin_dir / "wavegen").exists():
        pytest.fail(f"wavegen is not installed next to {sys.executable}")
    return str(bin_dir)


def _make_repo(tmp_path: Path, mode: str, *, fresh: bool, install: str = "never") -> tuple[Path, dict[str, str]]:
    """A repo whose committed manifests were hashed, then a ConfigMap key changed (unless ``fresh``)."""
    repo = tmp_path / "repo"
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / "rendered").mkdir()
    shutil.copy(REPO_ROOT / "action.yml", repo / "action.yml")
    base = "HEAD~1" if mode == "write" else '""'
    (repo / ".github" / "workflows" / "wavegen.yml").write_text(WORKFLOW.format(mode=mode, base=base, install=install))
    if install != "never":  # the action installs wavegen from its own directory
        shutil.copy(REPO_ROOT / "pyproject.toml", repo / "pyproject.toml")
        readme = REPO_ROOT / "README.md"
        (repo / "README.md").write_text(readme.read_text() if readme.exists() else "wavegen\n")
        shutil.copytree(REPO_ROOT / "wavegen", repo / "wavegen", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (repo / "rendered" / "config.yaml").write_text(CONFIG.format(secret=SECRET_VALUE))
    (repo / "rendered" / "app-workloads.yaml").write_text(WORKLOADS)
    run([str(Path(_wavegen_bin()) / "wavegen"), "transform", "-i", "-n", "shop", "rendered"], cwd=repo)
    home = tmp_path / "home"
    (home / ".config" / "act").mkdir(parents=True)
    (home / ".actrc").write_text("-P ubuntu-latest=-self-hosted\n")
    (home / ".config" / "act" / "actrc").write_text("-P ubuntu-latest=-self-hosted\n")
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "HOME": str(home),
    }
    _git(repo, "init", "-q", "-b", "main", env=env)
    _git(repo, "add", ".", env=env)
    _git(repo, "commit", "-q", "-m", "hashed manifests", env=env)
    if not fresh:
        config = repo / "rendered" / "config.yaml"
        config.write_text(config.read_text().replace("LOG_LEVEL: info", "LOG_LEVEL: debug"))
        _git(repo, "commit", "-q", "-am", "debug logging", env=env)
    return repo, env


def _act(repo: Path, env: dict[str, str], tmp_path: Path) -> ActRun:
    out = tmp_path / "out"
    proc = run(
        act_command(
            ".github/workflows/wavegen.yml",
            "--json",
            "--env",
            f"WAVEGEN_TEST_BIN={_wavegen_bin()}",
            "--env",
            f"WAVEGEN_TEST_OUT={out}",
        ),
        cwd=repo,
        env=act_env(env, Path(env["HOME"]), tmp_path / "cache"),
        timeout=300,
        check=False,
    )
    log = []
    for line in (proc.stdout + proc.stderr).splitlines():
        if line.startswith("{"):
            try:
                log.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return ActRun(proc.returncode, log, proc.stdout + proc.stderr, out)


def test_write_mode_updates_hashes_outputs_and_summary(tmp_path: Path) -> None:
    repo, env = _make_repo(tmp_path, "write", fresh=False)
    committed = (repo / "rendered" / "app-workloads.yaml").read_text()
    result = _act(repo, env, tmp_path)
    assert result.returncode == 0, result.text[-6000:]

    outputs = result.outputs()
    assert outputs["changed"] == "true"
    assert outputs["workloads"] == "Deployment/shop/web"  # batch does not read the changed key
    assert outputs["files"] == "rendered/app-workloads.yaml"
    records = json.loads(outputs["workloads-json"])
    assert [r["id"] for r in records] == ["Deployment/shop/web"]
    assert {s["name"]: s["keys"] for s in records[0]["sources"]} == {"web-config": ["LOG_LEVEL"], "web-secret": ["PASSWORD"]}
    assert records[0]["oldHash"] and records[0]["newHash"] and records[0]["oldHash"] != records[0]["newHash"]

    # the workspace files were rewritten: only the web Deployment's hash line differs
    written = (result.out / "rendered" / "app-workloads.yaml").read_text()
    diff = [(a, b) for a, b in zip(committed.splitlines(), written.splitlines(), strict=True) if a != b]
    assert len(diff) == 1 and "wavegen.io/config-hash" in diff[0][1], diff
    assert records[0]["newHash"] in diff[0][1]
    assert (result.out / "rendered" / "config.yaml").read_text() == (repo / "rendered" / "config.yaml").read_text()
    check = run(
        [str(Path(_wavegen_bin()) / "wavegen"), "transform", "--check", "-n", "shop", str(result.out / "rendered")], check=False
    )
    assert check.returncode == 0, check.stdout + check.stderr

    summaries = [s for s in result.summaries() if "wavegen" in s]
    assert summaries, result.text[-4000:]
    summary = summaries[0]
    # with base: HEAD~1 the summary starts with the restart plan naming the changed key
    assert summary.startswith("## wavegen restart plan"), summary
    plan_part, _, own_part = summary.partition("## wavegen: config hashes updated")
    will_roll = plan_part.split("### Will roll", 1)[1].split("###", 1)[0]
    assert "shop/web" in will_roll and "changed `LOG_LEVEL`" in will_roll and "batch" not in will_roll, plan_part
    # then this step's own table: the workloads whose hash it rewrote, with the names and keys they read
    assert "| Workload |" in own_part
    row = next(line for line in own_part.splitlines() if "web" in line and line.startswith("|"))
    assert "ConfigMap shop/web-config: LOG_LEVEL" in row and "Secret shop/web-secret: PASSWORD" in row
    assert "batch" not in own_part
    assert "```mermaid\ngraph LR" in own_part
    assert SECRET_VALUE not in result.text


def test_check_mode_fails_on_stale_hash_with_error_annotation(tmp_path: Path) -> None:
    repo, env = _make_repo(tmp_path, "check", fresh=False)
    before = (repo / "rendered" / "app-workloads.yaml").read_text()
    result = _act(repo, env, tmp_path)
    assert result.returncode != 0, result.text[-6000:]
    errors = [m for m in result.messages() if "::error file=rendered/app-workloads.yaml,line=" in m]
    assert errors and "Deployment/shop/web" in errors[0], result.text[-6000:]
    assert not any("Deployment/shop/batch" in m and "::error" in m for m in result.messages())
    outputs = result.outputs()
    assert outputs["changed"] == "true"
    assert outputs["workloads"] == "Deployment/shop/web"
    # check mode never writes
    assert (result.out / "rendered" / "app-workloads.yaml").read_text() == before
    assert any("config hash check" in s for s in result.summaries())
    assert SECRET_VALUE not in result.text


def test_check_mode_passes_on_fresh_hashes(tmp_path: Path) -> None:
    repo, env = _make_repo(tmp_path, "check", fresh=True)
    result = _act(repo, env, tmp_path)
    assert result.returncode == 0, result.text[-6000:]
    outputs = result.outputs()
    assert outputs["changed"] == "false"
    assert outputs["workloads"] == ""
    assert json.loads(outputs["workloads-json"]) == []
    assert any("No workload will roll" in s for s in result.summaries())


def test_action_installs_wavegen_from_its_own_directory(tmp_path: Path) -> None:
    """install: always builds a venv under $RUNNER_TEMP from the action's directory (needs PyPI for dependencies)."""
    repo, env = _make_repo(tmp_path, "check", fresh=False, install="always")
    result = _act(repo, env, tmp_path)
    assert any("installed wavegen" in m for m in result.messages()), result.text[-6000:]
    assert result.returncode != 0  # stale hash, as in check mode with the preinstalled wavegen
    assert result.outputs()["workloads"] == "Deployment/shop/web"


def test_missing_key_is_a_warning_annotation_at_its_env_entry(tmp_path: Path) -> None:
    """A key the Deployment needs leaves its ConfigMap: a ::warning at the exact env item, and the plan says so."""
    repo, env = _make_repo(tmp_path, "write", fresh=False)
    config = repo / "rendered" / "config.yaml"
    config.write_text(config.read_text().replace("  LOG_LEVEL: debug\n", ""))
    _git(repo, "commit", "-q", "-am", "drop LOG_LEVEL", env=env)
    workloads = (repo / "rendered" / "app-workloads.yaml").read_text().splitlines()
    line = next(i for i, text in enumerate(workloads, 1) if text.strip() == "- name: LOG_LEVEL")
    result = _act(repo, env, tmp_path)
    assert result.returncode == 0, result.text[-6000:]
    warnings = [m for m in result.messages() if "needs key 'LOG_LEVEL'" in m]
    assert warnings, result.text[-6000:]
    assert f"::warning file=rendered/app-workloads.yaml,line={line}::Deployment/shop/web needs key 'LOG_LEVEL'" in warnings[0]
    summary = next(s for s in result.summaries() if "wavegen restart plan" in s)
    assert "lacks required key(s) `LOG_LEVEL`" in summary
    assert SECRET_VALUE not in result.text
