"""Seeds canary values into every Secret of every fixture and runs every command: no canary may come out."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.hostile import REPO_ROOT, Run, run_wavegen

FIXTURES = REPO_ROOT / "fixtures"

EXTRA_BUNDLE = """\
apiVersion: v1
kind: Secret
metadata:
  name: db
data:
  password: cGxhY2Vob2xkZXI=
stringData:
  pin: "0000"
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  mode: fast
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    spec:
      containers:
      - name: api
        image: example/api
        envFrom:
        - secretRef:
            name: db
        - configMapRef:
            name: settings
        env:
        - name: PIN
          valueFrom:
            secretKeyRef:
              name: db
              key: pin
"""


@dataclass
class Canaries:
    """Unique values planted in Secrets, and every encoding in which one could leak."""

    values: list[str] = field(default_factory=list)

    def new(self) -> str:
        value = f"canary{len(self.values):03d}x{secrets.token_hex(5)}"
        self.values.append(value)
        return value

    def forms(self) -> Iterator[str]:
        for value in self.values:
            raw = value.encode()
            yield value
            yield base64.b64encode(raw).decode().rstrip("=")
            yield hashlib.sha256(raw).hexdigest()  # a per-value digest is a brute-force oracle

    def found_in(self, text: str | bytes) -> list[str]:
        haystack = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
        return [form for form in self.forms() if form in haystack]

    def count_in(self, text: bytes) -> int:
        haystack = text.decode("utf-8", "replace")
        return sum(haystack.count(value) for value in self.values)


def _seed(doc: Any, canaries: Canaries) -> Any:
    if isinstance(doc, dict) and doc.get("kind") == "Secret":
        data: dict[str, Any] = doc["data"] if isinstance(doc.get("data"), dict) else {}
        string_data: dict[str, Any] = doc["stringData"] if isinstance(doc.get("stringData"), dict) else {}
        doc["data"] = {k: base64.b64encode(canaries.new().encode()).decode() for k in [*data, "planted"]}
        doc["stringData"] = {k: canaries.new() for k in [*string_data, "planted-text"]}
    if isinstance(doc, dict) and isinstance(doc.get("items"), list):
        doc["items"] = [_seed(item, canaries) for item in doc["items"]]
    return doc


def seeded_bundle(sources: Iterable[Path], canaries: Canaries) -> str:
    docs: list[Any] = []
    for path in sources:
        docs.extend(d for d in yaml.safe_load_all(path.read_text()) if d is not None)
    docs.extend(yaml.safe_load_all(EXTRA_BUNDLE))
    seen: set[tuple[Any, ...]] = set()
    unique = []
    for doc in docs:  # fixtures reuse names: keep the first of each object
        meta = doc.get("metadata") or {}
        identity = (doc.get("kind"), meta.get("namespace"), meta.get("name"))
        if identity in seen:
            continue
        seen.add(identity)
        unique.append(_seed(doc, canaries))
    return yaml.safe_dump_all(unique, sort_keys=False)


# Fixtures whose data PyYAML (YAML 1.1), which seeds the bundle here, reads apart from kubectl
# (go-yaml): re-dumped, `12:30` would become 750, a number no ConfigMap may hold.
READ_APART = frozenset({"go-yaml-strings"})


def fixture_inputs() -> list[Path]:
    return sorted(p for p in FIXTURES.glob("*/input.yaml") if p.parent.name not in READ_APART | {"bad"})


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Canaries]:
    root = tmp_path_factory.mktemp("leaks")
    canaries = Canaries()
    (root / "bundle").mkdir()
    (root / "bundle" / "all.yaml").write_text(seeded_bundle(fixture_inputs(), canaries))
    # A second revision with every secret value replaced, for plan/diff commands.
    (root / "head").mkdir()
    (root / "head" / "all.yaml").write_text(seeded_bundle(fixture_inputs(), canaries))
    # An error path: invalid base64 right next to canaries.
    bad_value = canaries.new()
    (root / "bad.yaml").write_text(
        f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: broken\ndata:\n"
        f"  good: {base64.b64encode(canaries.new().encode()).decode()}\n  bad: '{bad_value}!'\n"
        f"stringData:\n  text: {canaries.new()}\n"
    )
    return root, canaries


def assert_clean(canaries: Canaries, *outputs: str | bytes, what: str) -> None:
    for output in outputs:
        leaked = canaries.found_in(output)
        assert not leaked, f"{what} leaked {leaked[:3]}"


def assert_passthrough(canaries: Canaries, run: Run, source: bytes) -> None:
    """Commands whose output *is* the bundle may carry each value exactly as often as the input does."""
    assert canaries.count_in(run.stdout) == canaries.count_in(source)


def test_canaries_are_seeded(world: tuple[Path, Canaries]) -> None:
    root, canaries = world
    text = (root / "bundle" / "all.yaml").read_text()
    assert len(canaries.values) > 10
    assert canaries.found_in(text), "the test must be able to fail"


def test_transform_and_check(world: tuple[Path, Canaries], tmp_path: Path) -> None:
    root, canaries = world
    source = (root / "bundle" / "all.yaml").read_bytes()
    run = run_wavegen(["transform", str(root / "bundle")], cwd=tmp_path)
    assert run.returncode in (0, 1), run.stderr
    assert_clean(canaries, run.stderr, what="transform stderr")
    assert_passthrough(canaries, run, source)
    check = run_wavegen(["transform", "--check", str(root / "bundle")], cwd=tmp_path)
    assert check.returncode == 1, "seeded bundle has stale hashes: the diff is shown"
    assert check.stdout, "a diff is printed"
    assert_clean(canaries, check.stdout, check.stderr, what="transform --check diff")
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "all.yaml").write_bytes(source)
    inplace = run_wavegen(["transform", "-i", str(copy)], cwd=tmp_path)
    assert_clean(canaries, inplace.stdout, inplace.stderr, what="transform -i")
    assert canaries.count_in((copy / "all.yaml").read_bytes()) == canaries.count_in(source)


@pytest.mark.parametrize("fmt", ["text", "json", "mermaid"])
def test_explain(world: tuple[Path, Canaries], fmt: str, tmp_path: Path) -> None:
    root, canaries = world
    run = run_wavegen(["explain", "--format", fmt, str(root / "bundle")], cwd=tmp_path)
    assert run.stdout, run.stderr
    assert_clean(canaries, run.stdout, run.stderr, what=f"explain --format {fmt}")


@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
@pytest.mark.parametrize("show_values", [False, True])
def test_plan(world: tuple[Path, Canaries], fmt: str, show_values: bool, tmp_path: Path) -> None:
    root, canaries = world
    args = ["plan", "--format", fmt, str(root / "bundle"), str(root / "head")]
    run = run_wavegen([*args, "--show-values"] if show_values else args, cwd=tmp_path)
    assert run.returncode in (0, 1, 4), run.stderr
    assert run.stdout, run.stderr
    assert_clean(canaries, run.stdout, run.stderr, what=" ".join(args))


def _resource_list(path: Path) -> bytes:
    items = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
    return json.dumps({"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items}).encode()


def test_krm_results(world: tuple[Path, Canaries], tmp_path: Path) -> None:
    root, canaries = world
    for path in (root / "bundle" / "all.yaml", root / "bad.yaml"):
        run = run_wavegen(["krm"], stdin=_resource_list(path), cwd=tmp_path)
        assert_clean(canaries, run.stderr, what="krm stderr")
        out = yaml.safe_load(run.stdout) if run.stdout.strip() else {}
        assert_clean(canaries, json.dumps((out or {}).get("results", [])), what="krm results")


def test_post_render(world: tuple[Path, Canaries], tmp_path: Path) -> None:
    root, canaries = world
    source = (root / "bundle" / "all.yaml").read_bytes()
    run = run_wavegen(["post-render"], stdin=source, cwd=tmp_path)
    assert_clean(canaries, run.stderr, what="post-render stderr")
    if run.returncode == 0:
        assert_passthrough(canaries, run, source)
    bad = run_wavegen(["post-render"], stdin=(root / "bad.yaml").read_bytes(), cwd=tmp_path)
    assert bad.returncode != 0
    assert_clean(canaries, bad.stdout, bad.stderr, what="post-render error path")


@pytest.mark.parametrize("mode", ["check", "write"])
def test_action_summary_and_outputs(world: tuple[Path, Canaries], mode: str, tmp_path: Path) -> None:
    root, canaries = world
    work = tmp_path / "repo"
    work.mkdir()
    (work / "all.yaml").write_bytes((root / "bundle" / "all.yaml").read_bytes())
    (work / "bad.yaml").write_bytes((root / "bad.yaml").read_bytes())
    for paths in ("all.yaml", "all.yaml bad.yaml"):
        summary, outputs = tmp_path / f"summary-{len(paths)}", tmp_path / f"outputs-{len(paths)}"
        env = {
            "WAVEGEN_INPUT_PATHS": paths,
            "WAVEGEN_INPUT_MODE": mode,
            "WAVEGEN_INPUT_SUMMARY": "true",
            "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_OUTPUT": str(outputs),
            "GITHUB_ACTIONS": "true",
        }
        run = run_wavegen([], cwd=work, env=env, module="wavegen.integrations.action")
        assert run.returncode in (0, 1), run.stderr
        written = [p.read_bytes() for p in (summary, outputs) if p.exists()]
        assert_clean(canaries, run.stdout, run.stderr, *written, what=f"action ({mode}, {paths})")


@pytest.mark.parametrize("command", [["transform"], ["explain"], ["explain", "--format", "json"], ["transform", "--check"]])
def test_error_paths(world: tuple[Path, Canaries], command: list[str], tmp_path: Path) -> None:
    root, canaries = world
    run = run_wavegen([*command, str(root / "bad.yaml")], cwd=tmp_path)
    assert run.returncode == 1
    assert "not valid base64" in run.stderr + run.stdout.decode()
    assert_clean(canaries, run.stdout, run.stderr, what=" ".join(command) + " error path")


# Watch mode: tests/e2e/test_watch.py runs the real controller and asserts, after every
# Secret change, that no value (raw or base64) is in its logs, its Events or the workload.
