"""The typer-free `wavegen krm` agrees with typer: whole runs (exit code, stdout bytes, stderr) alike."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.unit.stdin_command_support import TOKENS, Run, run_command
from tests.unit.test_krm import ITEMS, resource_list
from wavegen.cli import app as cli_app
from wavegen.cli import krm as cli_krm
from wavegen.cli.main import main

#: What kustomize hands an exec function: a list the engine edits, one with an error result, one with a
#: functionConfig, input that is no ResourceList, and input that is no YAML.
STDIN = {
    "edited": resource_list(),
    "missing": resource_list(items=ITEMS.replace("              optional: true\n", "")),
    "configured": resource_list(
        function_config="functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  data:\n    namespace: team\n"
    ),
    "bad-config": resource_list(function_config="functionConfig:\n  apiVersion: v1\n  kind: Widget\n"),
    "not-a-list": b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
    "invalid": b"a: [\n",
    "empty": b"",
}


def _run(entry: Callable[[list[str]], int], argv: list[str], stdin: bytes, monkeypatch: pytest.MonkeyPatch) -> Run:
    return run_command(entry, "krm", argv, stdin, monkeypatch)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(argv=st.lists(TOKENS, max_size=5), stdin=st.sampled_from(sorted(STDIN)))
@example(argv=[], stdin="edited")
@example(argv=["--namespace", "team", "--missing", "error"], stdin="missing")
@example(argv=["-n", "team", "--profile", "wave"], stdin="configured")
@example(argv=["--config", "config.yaml"], stdin="edited")
@example(argv=[], stdin="bad-config")
@example(argv=[], stdin="not-a-list")
@example(argv=[], stdin="invalid")
@example(argv=[], stdin="empty")
@example(argv=["--help"], stdin="edited")
@example(argv=["extra"], stdin="edited")
def test_runs_match_the_typer_app(argv: list[str], stdin: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "config.yaml").write_text("namespace: team\n")
    data = STDIN[stdin]
    assert _run(main, argv, data, monkeypatch) == _run(cli_app.run, argv, data, monkeypatch)


@pytest.mark.parametrize("argv", [[], ["-n", "prod"], ["--namespace=prod", "--missing", "warn"]], ids=repr)
def test_plain_invocations_skip_typer(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Guards the comparison above: these take the typer-free path (else both sides would be typer's)."""
    monkeypatch.setattr(cli_app, "run", lambda args: pytest.fail("typer must not see this argv"))
    code, out, _ = _run(main, argv, STDIN["edited"], monkeypatch)
    assert code == 0 and b"wavegen.io/config-hash" in out


def test_shapes_left_to_typer() -> None:
    for argv in (["-h"], ["--help"], ["--", "x"], ["extra"], ["-nteam"], ["--bogus"], ["--profile", "WAVE"]):
        assert cli_krm.run_plain(argv) is None, argv
