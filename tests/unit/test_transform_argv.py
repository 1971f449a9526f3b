"""The typer-free reader of `wavegen transform` argv agrees with typer: same arguments, or it hands argv to typer.

Two differentials: the keyword arguments the reader builds against those typer passes the command for
generated argv, and whole runs (exit code, stdout bytes, stderr, files written) of `main` against the
typer app alone. The hot path's imports are checked in test_layers.
"""

from __future__ import annotations

import errno
import io
import os
import re
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from wavegen.cli import app as cli_app
from wavegen.cli import transform as cli_transform
from wavegen.cli.main import main
from wavegen.errors import WavegenError
from wavegen.inputs.flags import HASHING_FLAGS, invoke, invoke_directly, new_app, read_command_line

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
DECLS = [decl for flag in (*cli_transform.FLAGS, *HASHING_FLAGS) for decl in flag.decls]
VALUES = ["wave", "wavegen", "WAVE", "warn", "error", "ignore", "", "a.yaml", "dir/", "-", "x=y", "A.g=spec.template", "é"]
ODD = ["-h", "--help", "--", "-x", "--bogus", "--pro", "--no-check", "-io", "-nfoo", "-o=x", "-i=1", "--check=1", "---"]
TOKENS = st.one_of(
    st.sampled_from(DECLS),
    st.sampled_from(VALUES),
    st.sampled_from(ODD),
    st.builds(
        lambda decl, value: f"{decl}={value}", st.sampled_from([d for d in DECLS if d.startswith("--")]), st.sampled_from(VALUES)
    ),
    st.text(alphabet="-=abcio./", max_size=6),
)

#: Invocations pipelines use: each must take the typer-free path.
PLAIN = [
    [],
    ["-"],
    ["rendered.yaml"],
    ["a.yaml", "b/", "-"],
    ["--check", "rendered/"],
    ["-i", "rendered/"],
    ["--in-place", "rendered/"],
    ["-o", "out.yaml", "in.yaml"],
    ["--output=out.yaml", "in.yaml"],
    ["-n", "prod", "--profile", "wave", "--missing", "error", "--opt-in", "in.yaml"],
    ["--namespace=prod", "--profile=wavegen", "--missing=ignore", "in.yaml"],
    ["--workload", "Rollout.argoproj.io=spec.template", "--workload=Job=spec.template", "in.yaml"],
    ["--config", "wavegen.yaml", "--hmac-key-file", "key", "in.yaml"],
    ["in.yaml", "-n", "late", "--check"],
]


def typer_arguments(argv: list[str]) -> tuple[int, dict[str, Any] | None]:
    """The exit code and the keyword arguments typer gives the transform command (None if it never ran)."""
    seen: list[dict[str, Any]] = []

    def capture(*args: Any, **kwargs: Any) -> int:
        assert not args
        seen.append(kwargs)
        return 0

    real = cli_transform.transform
    cli_transform.transform = capture  # type: ignore[assignment]
    try:
        stderr, sys.stderr = sys.stderr, io.StringIO()
        try:
            code = invoke(cli_app.build_app("transform"), ["transform", *argv], "wavegen")
        finally:
            sys.stderr = stderr
    finally:
        cli_transform.transform = real
    return code, (seen[0] if seen else None)


@pytest.mark.parametrize("argv", PLAIN, ids=" ".join)
def test_plain_invocations_skip_typer_and_read_as_typer_does(argv: list[str]) -> None:
    read = read_command_line(cli_transform.FLAGS, argv)
    assert read is not None
    assert typer_arguments(argv) == (0, read)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(TOKENS, max_size=8))
@example(["-o", "--check"])  # a value that looks like an option is still the value
@example(["--output="])
@example(["-n", "--help"])
@example(["--workload", "a", "-i", "--workload=b"])
@example(["--profile", "wave", "--profile", "wavegen"])
def test_the_reader_takes_argv_only_as_typer_reads_it(argv: list[str]) -> None:
    read = read_command_line(cli_transform.FLAGS, argv)
    if read is not None:
        assert typer_arguments(argv) == (0, read)


def test_shapes_left_to_typer() -> None:
    for argv in (
        ["-h"],
        ["--help"],
        ["--", "a"],
        ["-io"],
        ["-nprod"],
        ["--pro", "wave"],
        ["--check=1"],
        ["-o"],
        ["--profile", "WAVE"],
    ):
        assert read_command_line(cli_transform.FLAGS, argv) is None, argv


#: One `wavegen` run in this process: exit code, stdout bytes, stderr text and the files left behind.
Run = tuple[int, bytes, str, dict[str, bytes]]
Runner = Callable[[str, Callable[[list[str]], int], list[str]], Run]


@pytest.fixture
def run_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Runner]:
    def run(name: str, entry: Callable[[list[str]], int], argv: list[str]) -> Run:
        work = tmp_path / name
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(FIXTURES / "helm-basic", work / "bundle")
        shutil.copy(FIXTURES / "stale-hash" / "input.yaml", work / "stale.yaml")
        shutil.copy(FIXTURES / "helm-basic" / "expected.yaml", work / "fresh.yaml")
        (work / "config.yaml").write_text("namespace: team\n")
        (work / "bad-config.yaml").write_text("- a list\n")
        monkeypatch.chdir(work)
        stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
        stderr = io.StringIO()
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO((FIXTURES / "helm-basic" / "input.yaml").read_bytes())))
        monkeypatch.setattr(sys, "stdout", stdout)
        monkeypatch.setattr(sys, "stderr", stderr)
        code = entry(["transform", *argv])
        stdout.flush()
        out = stdout.buffer.getvalue()  # type: ignore[attr-defined]
        monkeypatch.undo()
        files = {str(p.relative_to(work)): p.read_bytes() for p in sorted(work.rglob("*")) if p.is_file()}
        # The one thing allowed to differ: where the run happened, and a failed atomic write's random temp name.
        message = re.sub(r"\.\w{8}\.wavegen-tmp", ".TEMP.wavegen-tmp", stderr.getvalue().replace(str(work), "WORK"))
        return code, out, message, files

    yield run


RUN_TOKENS = st.sampled_from(
    ["bundle", "bundle/input.yaml", "stale.yaml", "fresh.yaml", "missing.yaml", "-", "-i", "--check", "-o", "out.yaml",
     "-n", "team", "--profile", "wave", "--missing", "error", "--opt-in", "--config", "config.yaml", "bad-config.yaml",
     "--workload", "Bad", "Widget.example.io=spec.template", "--hmac-key-file", "--output=out.yaml", "--bogus", "-h"]
)  # fmt: skip


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(argv=st.lists(RUN_TOKENS, max_size=6))
@example(argv=["stale.yaml"])
@example(argv=["--check", "stale.yaml", "fresh.yaml"])
@example(argv=["-i", "bundle", "stale.yaml"])
@example(argv=["-i", "-"])
@example(argv=["-i", "--check", "fresh.yaml"])
@example(argv=["-o", "out.yaml", "bundle"])
@example(argv=["missing.yaml"])
@example(argv=["--config", "bad-config.yaml", "fresh.yaml"])
@example(argv=["--workload", "Bad", "fresh.yaml"])
@example(argv=["--profile", "wave", "--missing", "error", "stale.yaml"])
@example(argv=[])
def test_runs_match_the_typer_app(argv: list[str], run_in: Runner) -> None:
    assert run_in("fast", main, argv) == run_in("typer", cli_app.run, argv)


def raising(error: BaseException) -> Callable[[], int]:
    def command() -> int:
        raise error

    return command


@pytest.mark.parametrize(
    "error",
    [
        EOFError(),
        KeyboardInterrupt(),
        BrokenPipeError(errno.EPIPE, "Broken pipe"),
        OSError(errno.EPIPE, "Broken pipe"),
        OSError(errno.EIO, "I/O error"),
        WavegenError("bad input", file="a.yaml", line=3),
        RuntimeError("a bug with a secret value"),
    ],
    ids=repr,
)
def test_failures_end_as_under_typer(
    error: BaseException, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    app = new_app("")
    app.command("fail")(raising(error))
    monkeypatch.setattr(sys, "stdout", sys.stdout)  # an EPIPE wraps the streams: undo it after the test
    monkeypatch.setattr(sys, "stderr", sys.stderr)
    through_typer = invoke(app, [], "wavegen"), capsys.readouterr()  # a one-command app runs it with no argv
    directly = invoke_directly(raising(error)), capsys.readouterr()
    assert directly == through_typer


def test_main_hands_completion_and_non_transform_argv_to_typer(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[list[str]] = []
    monkeypatch.setattr(cli_app, "run", lambda args: asked.append(list(args)) or 0)
    monkeypatch.setattr(cli_transform, "run_plain", lambda argv: pytest.fail("the reader must not see this argv"))
    for argv in (["--version"], ["explain", "a.yaml"], ["--help", "transform"], []):
        assert main(argv) == 0
    monkeypatch.setenv("_WAVEGEN_COMPLETE", "bash_complete")
    assert main(["transform", "a.yaml"]) == 0
    assert asked == [["--version"], ["explain", "a.yaml"], ["--help", "transform"], [], ["transform", "a.yaml"]]
    assert os.environ["_WAVEGEN_COMPLETE"]
