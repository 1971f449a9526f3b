"""Helpers for hostile-input tests: the bad corpus, its generators and a resource-limited CLI runner."""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
BAD = REPO_ROOT / "fixtures" / "bad"

#: Address-space limit for every wavegen run (the 100 MB case needs a few hundred MB).
MEMORY_LIMIT = 1536 * 1024 * 1024
#: Wall-clock limit for one run; the CPU limit is the same, enforced by the kernel.
TIME_LIMIT = 30

ERROR_LINE = re.compile(
    r"^wavegen: error: (?P<file>.+?)(?:, document (?P<document>\d+))?(?:, line (?P<line>\d+))?: (?P<message>.*)$"
)


@dataclass
class Case:
    """One corpus case: input bytes, the name it is given, and what must happen."""

    name: str
    data: bytes
    suffix: str
    expect: dict[str, Any]
    generated: bool = False


@dataclass
class Run:
    returncode: int
    stdout: bytes
    stderr: str
    seconds: float
    files: dict[str, bytes] = field(default_factory=dict)


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    resource.setrlimit(resource.RLIMIT_CPU, (TIME_LIMIT, TIME_LIMIT))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run_wavegen(
    args: Sequence[str],
    *,
    stdin: bytes | None = None,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    limited: bool = True,
    module: str = "wavegen",
) -> Run:
    """``python -m MODULE ARGS`` in a subprocess with memory, CPU and wall-clock limits."""
    full_env = dict(os.environ)
    full_env.pop("GITHUB_ACTIONS", None)
    full_env["PYTHONPATH"] = str(REPO_ROOT)
    if env:
        full_env.update(env)
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", module, *args],
        input=stdin if stdin is not None else b"",
        capture_output=True,
        timeout=TIME_LIMIT * 2,
        cwd=cwd,
        env=full_env,
        preexec_fn=_limits if limited else None,  # the test process starts no threads of its own
        check=False,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr.decode("utf-8", "replace"), time.monotonic() - start)


# ---- generators for the cases in fixtures/bad/cases.yaml ----------------------------------

_HEADS = {
    "ConfigMap": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\ndata:\n",
    "Deployment": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: bomb\nspec:\n",
    "Widget": "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: bomb\nspec:\n",
}


def alias_bomb(spec: Mapping[str, Any]) -> bytes:
    head = _HEADS[str(spec["kind"])]
    lines = ["  l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for level in range(1, 10):
        refs = ", ".join([f"*l{level - 1}"] * 10)
        lines.append(f"  l{level}: &l{level} [{refs}]")
    return (head + "\n".join(lines) + "\n").encode()


def deep_flow(spec: Mapping[str, Any]) -> bytes:
    head = _HEADS.get(str(spec["kind"]), _HEADS["ConfigMap"]).rsplit("\n", 2)[0] + "\n"
    depth = 100_000
    return (head + "x: " + "[" * depth + "]" * depth + "\n").encode()


def deep_block_sequences(spec: Mapping[str, Any]) -> bytes:
    return (_HEADS["ConfigMap"] + "  k:\n  " + "- " * 20_000 + "x\n").encode()


def deep_block_mappings(spec: Mapping[str, Any]) -> bytes:
    lines = [" " * (level + 2) + f"k{level}:" for level in range(2_000)]
    return (_HEADS["ConfigMap"] + "\n".join(lines) + " end\n").encode()


def huge_document(spec: Mapping[str, Any]) -> bytes:
    line = b"    " + b"x" * 75 + b"\n"
    head = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: huge\ndata:\n  blob: |\n"
    tail = (
        b"---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n"
        b"      containers:\n      - name: c\n        envFrom:\n        - configMapRef:\n            name: huge\n"
    )
    return head + line * (100_000_000 // len(line)) + tail


GENERATORS: dict[str, Callable[[Mapping[str, Any]], bytes]] = {
    "alias_bomb": alias_bomb,
    "deep_flow": deep_flow,
    "deep_block_sequences": deep_block_sequences,
    "deep_block_mappings": deep_block_mappings,
    "huge_document": huge_document,
}


def committed_cases() -> list[Case]:
    cases = []
    for directory in sorted(p for p in BAD.iterdir() if p.is_dir()):
        inputs = sorted(directory.glob("input.*"))
        assert len(inputs) == 1, f"{directory}: expected exactly one input.* file"
        expect = yaml.safe_load((directory / "expect.yaml").read_text())
        suffix = ".json" if inputs[0].suffix == ".json" else ".yaml"
        cases.append(Case(directory.name, inputs[0].read_bytes(), suffix, expect))
    return cases


def generated_specs() -> dict[str, dict[str, Any]]:
    index = yaml.safe_load((BAD / "cases.yaml").read_text())
    specs: dict[str, dict[str, Any]] = index["generated"]
    return specs


def generated_case(name: str) -> Case:
    spec = generated_specs()[name]
    return Case(name, GENERATORS[spec["generator"]](spec), ".yaml", spec["expect"], generated=True)
