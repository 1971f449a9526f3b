"""Reading split across processes, forced for tests: the fixture that splits every input, and a run's outcome to compare."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from wavegen.core.plan import Options
from wavegen.errors import WavegenError
from wavegen.stream import engine as engine_module
from wavegen.stream import forked
from wavegen.stream.engine import InputDocument, run


class Splits:
    """How often the engine split its work, and into how many parts."""

    def __init__(self) -> None:
        self.parts: list[int] = []


@pytest.fixture
def split_everything(monkeypatch: pytest.MonkeyPatch) -> Splits:
    """Every input is split (however small), and a child that gives no result fails the test."""
    splits = Splits()
    real_in_parts = forked.in_parts

    def counted(parts: Sequence[Callable[[], Any]], shared: Sequence[object] = ()) -> list[Any]:
        splits.parts.append(len(parts))
        return real_in_parts(parts, shared)

    def no_fallback(index: int) -> None:
        raise AssertionError(f"part {index}'s child gave no result")

    monkeypatch.setattr(engine_module, "SPLIT_WORK_CHARS", 0)
    monkeypatch.setattr(forked, "in_parts", counted)
    monkeypatch.setattr(forked, "_fallback", no_fallback)
    return splits


def outcome(data: bytes, options: Options, jobs: int) -> Any:
    try:
        result = run([InputDocument("bundle.yaml", data)], options, jobs=jobs)
    except WavegenError as err:
        return "error", str(err), err.exit_code
    return result.outputs, [repr(f) for f in result.findings], result.fallbacks
