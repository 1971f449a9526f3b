"""Golden fixtures: input -> expected byte for byte, and expected -> expected (idempotence)."""

from __future__ import annotations

from pathlib import Path

import pytest

from wavegen.cli.main import main

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
CASES = sorted(p for p in FIXTURES.iterdir() if (p / "input.yaml").is_file() and (p / "expected.yaml").is_file())


def _transform(case: Path, source: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> bytes:
    args = ["transform", str(source)]
    if (case / "config.yaml").is_file():
        args += ["--config", str(case / "config.yaml")]
    assert main(args) == 0
    return capsysbinary.readouterr().out


def test_there_are_golden_cases() -> None:
    assert len(CASES) >= 10


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_golden_case_and_idempotence(case: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    expected = (case / "expected.yaml").read_bytes()
    assert _transform(case, case / "input.yaml", capsysbinary) == expected
    assert _transform(case, case / "expected.yaml", capsysbinary) == expected


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_check_mode_agrees_with_golden(case: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    config = ["--config", str(case / "config.yaml")] if (case / "config.yaml").is_file() else []
    assert main(["transform", "--check", str(case / "expected.yaml"), *config]) == 0
    stale = (case / "input.yaml").read_bytes() != (case / "expected.yaml").read_bytes()
    assert main(["transform", "--check", str(case / "input.yaml"), *config]) == (1 if stale else 0)
    capsysbinary.readouterr()
