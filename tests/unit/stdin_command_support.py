"""What the argv tests of the commands that read standard input (post-render, krm) share: argv tokens and a whole run."""

from __future__ import annotations

import io
import sys
from collections.abc import Callable

import pytest
from hypothesis import strategies as st

from wavegen.inputs.flags import HASHING_FLAGS

DECLS = [decl for flag in HASHING_FLAGS for decl in flag.decls]
#: Words argv is drawn from: every hashing flag, values for them, and shapes left to typer.
TOKENS = st.sampled_from(
    [*DECLS, "team", "wave", "wavegen", "error", "warn", "ignore", "config.yaml", "Widget.example.io=spec.template",
     "--namespace=team", "--profile=wave", "--bogus", "-h", "--help", "--", "extra", "-", "-nteam"]
)  # fmt: skip

Run = tuple[int, bytes, str]


def run_command(
    entry: Callable[[list[str]], int], command: str, argv: list[str], stdin: bytes, monkeypatch: pytest.MonkeyPatch
) -> Run:
    """``entry([command, *argv])`` with ``stdin`` on standard input: its exit code, stdout bytes and stderr."""
    stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    stderr = io.StringIO()
    with monkeypatch.context() as patched:
        patched.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
        patched.setattr(sys, "stdout", stdout)
        patched.setattr(sys, "stderr", stderr)
        code = entry([command, *argv])
        stdout.flush()
    return code, stdout.buffer.getvalue(), stderr.getvalue()  # type: ignore[attr-defined]
