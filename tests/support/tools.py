"""Locate the real tools built by ``hack/tools.sh`` and run them.

Tests never look tools up on ``PATH``: they ask :func:`tool` for the binary in
the tools directory (``$WAVEGEN_TOOLS_DIR``, default ``~/.cache/wavegen-tools``),
so the pinned versions are what runs.  A missing tool skips the test on a
developer's machine and fails it when ``CI`` is set.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES = REPO_ROOT / "fixtures"

#: Every tool ``hack/tools.sh`` installs, by the name tests use.
TOOLS = (
    "kustomize",
    "helm3",
    "helm4",
    "kubectl",
    "act",
    "etcd",
    "kube-apiserver",
    "kube-controller-manager",
    "registry",
    "cosign",
    "syft",
    "argocd",
    "redis-server",
)


def tools_dir() -> Path:
    """The install root of ``hack/tools.sh``."""
    configured = os.environ.get("WAVEGEN_TOOLS_DIR")
    if configured:
        return Path(configured).expanduser().resolve()
    return Path.home() / ".cache" / "wavegen-tools"


def find_tool(name: str) -> Path | None:
    """The tool's executable in the tools directory, or None."""
    path = tools_dir() / "bin" / name
    if path.is_file() and os.access(path, os.X_OK):
        return path
    return None


def in_ci() -> bool:
    return bool(os.environ.get("CI"))


def tool(name: str) -> str:
    """Absolute path of tool ``name``; skips the test (fails it in CI) when missing."""
    path = find_tool(name)
    if path is not None:
        return str(path)
    where = tools_dir() / "bin" / name
    hint = f"{where} does not exist; run hack/tools.sh {name}"
    if in_ci():
        pytest.fail(f"required tool missing: {name} ({hint})", pytrace=False)
    pytest.skip(f"tool missing: {name} ({hint})")


def act_command(workflow: str, *extra: str) -> list[str]:
    """How the tests run act: jobs on this host (no Docker) and nothing fetched from the network."""
    return [
        tool("act"),
        "push",
        "-P",
        "ubuntu-latest=-self-hosted",
        "-W",
        workflow,
        "--action-offline-mode",
        "--no-cache-server",
        *extra,
    ]


def act_env(env: Mapping[str, str], home: Path, cache: Path) -> dict[str, str]:
    """``env`` with act's config under ``home`` and its cache in ``cache``, away from the real user's."""
    return {**env, "XDG_CONFIG_HOME": str(home / ".config"), "XDG_CACHE_HOME": str(cache)}


class ToolError(AssertionError):
    """A tool exited non-zero; the message carries its command and output."""


def run(
    args: Sequence[str | os.PathLike[str]],
    *,
    input: str | None = None,
    check: bool = True,
    timeout: float = 120,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run a command with text I/O; on failure raise :class:`ToolError` with its output."""
    argv = [os.fspath(a) for a in args]
    full_env = None
    if env is not None:
        full_env = dict(os.environ)
        full_env.update(env)
    proc = subprocess.run(
        argv,
        check=False,
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env=full_env,
        stdin=None if input is not None else subprocess.DEVNULL,
    )
    if check and proc.returncode != 0:
        raise ToolError(
            f"command failed (exit {proc.returncode}): {' '.join(argv)}\n"
            f"--- stdout ---\n{proc.stdout[-4000:]}\n--- stderr ---\n{proc.stderr[-4000:]}"
        )
    return proc
