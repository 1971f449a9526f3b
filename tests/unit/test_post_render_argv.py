"""The typer-free `wavegen post-render` agrees with typer: whole runs (exit code, stdout bytes, stderr) alike."""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.unit.stdin_command_support import TOKENS, Run, run_command
from wavegen.cli import app as cli_app
from wavegen.cli import post_render as cli_post_render
from wavegen.cli.main import main
from wavegen.inputs.flags import read_command_line

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
#: What helm hands a post-renderer: a bundle the engine edits, one already current, one it refuses.
STDIN = {
    "stale": (FIXTURES / "helm-basic" / "input.yaml").read_bytes(),
    "fresh": (FIXTURES / "helm-basic" / "expected.yaml").read_bytes(),
    "missing": b"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n"
    b"      containers:\n      - name: c\n        envFrom:\n        - configMapRef: {name: absent}\n",
    "invalid": b"a: [\n",
    "empty": b"",
}


def _run(entry: Callable[[list[str]], int], argv: list[str], stdin: bytes, monkeypatch: pytest.MonkeyPatch) -> Run:
    return run_command(entry, "post-render", argv, stdin, monkeypatch)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(argv=st.lists(TOKENS, max_size=5), bundle=st.sampled_from(sorted(STDIN)))
@example(argv=[], bundle="stale")
@example(argv=["--namespace", "team", "--missing", "error"], bundle="missing")
@example(argv=["-n", "team", "--profile", "wave"], bundle="fresh")
@example(argv=[], bundle="invalid")
@example(argv=[], bundle="empty")
@example(argv=["--help"], bundle="stale")
@example(argv=["extra"], bundle="stale")
def test_runs_match_the_typer_app(argv: list[str], bundle: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "config.yaml").write_text("namespace: team\n")
    monkeypatch.delenv("HELM_NAMESPACE", raising=False)
    data = STDIN[bundle]
    assert _run(main, argv, data, monkeypatch) == _run(cli_app.run, argv, data, monkeypatch)


@pytest.mark.parametrize("argv", [[], ["-n", "prod"], ["--namespace=prod", "--missing", "warn"]], ids=repr)
def test_plain_invocations_skip_typer(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Guards the comparison above: these take the typer-free path (else both sides would be typer's)."""
    assert read_command_line((), argv) is not None
    monkeypatch.setattr(cli_app, "run", lambda args: pytest.fail("typer must not see this argv"))
    code, out, _ = _run(main, argv, STDIN["stale"], monkeypatch)
    assert code == 0 and b"wavegen.io/config-hash" in out


def test_the_release_namespace_is_helm_s_under_both(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HELM_NAMESPACE", "from-helm")
    data = STDIN["missing"]
    plain = _run(main, ["--missing", "error"], data, monkeypatch)
    assert plain == _run(cli_app.run, ["--missing", "error"], data, monkeypatch)
    assert plain[0] != 0 and "from-helm/absent" in plain[2]


def test_shapes_left_to_typer() -> None:
    for argv in (["-h"], ["--help"], ["--", "x"], ["extra"], ["-nteam"], ["--bogus"], ["--profile", "WAVE"]):
        assert read_command_line((), argv) is None, argv
    assert cli_post_render.run_plain(["--help"]) is None


@pytest.mark.parametrize(
    ("stdin", "expected"),
    [
        (b"", b"# wavegen: no manifests\n"),
        (b"\n  \n", b"\n  \n# wavegen: no manifests\n"),
        (b"---\n", b"---\n"),  # a marker is no whitespace: helm takes it
        (b"\n\xe2\x80\xa8\n", b"\n\xe2\x80\xa8\n"),  # nor is LS to bytes.strip, though a line break to YAML
    ],
    ids=repr,
)
def test_an_output_of_whitespace_alone_is_a_comment_helm_4_takes(
    stdin: bytes, expected: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, _ = _run(main, [], stdin, monkeypatch)
    assert (code, out) == (0, expected)


@pytest.mark.parametrize("name", ["helm-basic", "all-kinds", "crlf", "flow-style"])
def test_the_output_is_transform_s_of_standard_input(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Written a part at a time, as transform writes it: the same bytes."""
    monkeypatch.delenv("HELM_NAMESPACE", raising=False)
    data = (FIXTURES / name / "input.yaml").read_bytes()
    rendered = _run(main, ["-n", "team"], data, monkeypatch)
    with monkeypatch.context() as patched:
        stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
        patched.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
        patched.setattr(sys, "stdout", stdout)
        patched.setattr(sys, "stderr", io.StringIO())
        assert main(["transform", "-n", "team", "-"]) == rendered[0] == 0
        stdout.flush()
        assert stdout.buffer.getvalue() == rendered[1]  # type: ignore[attr-defined]


def test_a_bundle_whose_first_document_is_edited_is_written(monkeypatch: pytest.MonkeyPatch) -> None:
    data = (
        b"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n      containers:\n"
        b"      - name: c\n        envFrom:\n        - configMapRef: {name: c}\n---\napiVersion: v1\nkind: ConfigMap\n"
        b"metadata: {name: c}\ndata: {k: v}\n"
    )
    code, out, _ = _run(main, [], data, monkeypatch)
    assert code == 0 and out.startswith(b"apiVersion: apps/v1\n") and b"wavegen.io/config-hash" in out
