"""Golden fixtures: input -> expected byte for byte, and expected -> expected (idempotence); findings pinned."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from wavegen.cli.main import main

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
CASES = sorted(p for p in FIXTURES.iterdir() if (p / "input.yaml").is_file() and (p / "expected.yaml").is_file())
# Each case's findings for its input.yaml: the stderr lines of `wavegen transform`, with the
# input's path written as input.yaml, so line numbers and messages are pinned too.
FINDINGS = "findings.txt"


def _transform(case: Path, source: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> tuple[bytes, list[str]]:
    args = ["transform", str(source)]
    if (case / "config.yaml").is_file():
        args += ["--config", str(case / "config.yaml")]
    assert main(args) == 0
    captured = capsysbinary.readouterr()
    return captured.out, captured.err.decode().replace(str(source), source.name).splitlines()


def _unplaced(lines: list[str]) -> list[str]:
    """Finding lines without positions (expected.yaml has more lines than input.yaml)."""
    position = r"(?:input|expected)\.yaml(?:, (?:rendered )?document \d+, line \d+|:\d+:\d+)"
    return [re.sub(position, "FILE", line) for line in lines]


def test_there_are_golden_cases() -> None:
    assert len(CASES) >= 10


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_golden_case_and_idempotence(case: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    expected = (case / "expected.yaml").read_bytes()
    first, findings = _transform(case, case / "input.yaml", capsysbinary)
    assert first == expected
    again, findings_again = _transform(case, case / "expected.yaml", capsysbinary)
    assert again == expected
    assert findings == (case / FINDINGS).read_text().splitlines()
    assert _unplaced(findings_again) == _unplaced(findings)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_check_mode_agrees_with_golden(case: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    config = ["--config", str(case / "config.yaml")] if (case / "config.yaml").is_file() else []
    assert main(["transform", "--check", str(case / "expected.yaml"), *config]) == 0
    stale = (case / "input.yaml").read_bytes() != (case / "expected.yaml").read_bytes()
    assert main(["transform", "--check", str(case / "input.yaml"), *config]) == (1 if stale else 0)
    capsysbinary.readouterr()
