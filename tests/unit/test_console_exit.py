"""The installed `wavegen` command (cli.main.console) leaves a plain transform without teardown, losing nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from gen_bundle import workload_bundle  # noqa: E402

# Runs an entry point as pip's console script does; an atexit hook tells whether the interpreter tore down.
RUN = """
import atexit, sys
sys.path.insert(0, {root!r})
atexit.register(lambda: sys.stderr.write("[teardown]\\n"))
from wavegen.cli.main import {entry}
sys.argv[0] = "wavegen"
sys.exit({entry}())
"""


def wavegen(entry: str, args: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    code = RUN.format(root=str(ROOT), entry=entry)
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, capture_output=True, check=False)


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    path = tmp_path / "bundle.yaml"
    path.write_text(workload_bundle(300))  # ~450 KB out: far more than a pipe holds
    return path


def test_a_transform_leaves_without_teardown_and_writes_everything(bundle: Path, tmp_path: Path) -> None:
    fast = wavegen("console", ["transform", str(bundle)], tmp_path)
    slow = wavegen("main", ["transform", str(bundle)], tmp_path)
    assert fast.returncode == slow.returncode == 0
    assert len(fast.stdout) > 400_000 and fast.stdout == slow.stdout
    assert fast.stderr == b"" and slow.stderr == b"[teardown]\n"


def test_findings_errors_and_files_are_the_same(bundle: Path, tmp_path: Path) -> None:
    missing = tmp_path / "missing.yaml"
    missing.write_text(bundle.read_text().replace("name: app-config-7\n", "name: elsewhere\n", 1))
    for args in (["transform", str(missing)], ["transform", "--missing=error", str(missing)]):
        fast, slow = wavegen("console", args, tmp_path), wavegen("main", args, tmp_path)
        assert fast.returncode == slow.returncode
        assert fast.stdout == slow.stdout
        assert fast.stderr + b"[teardown]\n" == slow.stderr and b"app-config-7" in fast.stderr
    out = tmp_path / "out.yaml"
    assert wavegen("console", ["transform", "-o", str(out), str(bundle)], tmp_path).returncode == 0
    assert out.read_bytes() == wavegen("main", ["transform", str(bundle)], tmp_path).stdout


def test_a_closed_pipe_and_other_commands_leave_as_before(bundle: Path, tmp_path: Path) -> None:
    codes = []
    for entry in ("console", "main"):
        code = RUN.format(root=str(ROOT), entry=entry)
        with subprocess.Popen(
            [sys.executable, "-c", code, "transform", str(bundle)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
        ) as process:
            assert process.stdout is not None and process.stderr is not None
            process.stdout.read(10)
            process.stdout.close()
            errors = process.stderr.read()
            codes.append(process.wait())
        assert b"Traceback" not in errors
    assert codes[0] == codes[1] == 1
    explained = wavegen("console", ["explain", str(bundle)], tmp_path)
    assert explained.returncode == 0 and explained.stderr.endswith(b"[teardown]\n")
