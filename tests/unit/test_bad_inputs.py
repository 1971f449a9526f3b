"""Every case of fixtures/bad through the real CLI: one clear line, documented exit code, bounded cost, nothing written."""

from __future__ import annotations

import functools
import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.hostile import (
    BAD,
    ERROR_LINE,
    TIME_LIMIT,
    Case,
    Run,
    committed_cases,
    generated_case,
    generated_specs,
    run_wavegen,
)

COMMITTED = {case.name: case for case in committed_cases()}
GENERATED = sorted(generated_specs())

GOOD_FILE = b"""apiVersion: v1
kind: ConfigMap
metadata:
  name: good-config
data:
  key: value
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: good-web
spec:
  template:
    spec:
      containers:
      - name: c
        image: nginx
        envFrom:
        - configMapRef:
            name: good-config
"""


@functools.lru_cache(maxsize=2)
def load(name: str) -> Case:
    return COMMITTED[name] if name in COMMITTED else generated_case(name)


ALL = sorted(COMMITTED) + GENERATED


def test_corpus_is_large_enough() -> None:
    assert len(ALL) >= 60
    for name in GENERATED:
        assert not (BAD / name).exists(), f"{name} is both committed and generated"


def check_run(case: Case, run: Run, file_name: str) -> None:
    expect = case.expect
    assert "Traceback" not in run.stderr, run.stderr
    assert "internal error" not in run.stderr, run.stderr
    assert run.returncode == expect["exit"], f"exit {run.returncode}, stderr: {run.stderr!r}"
    assert run.seconds < TIME_LIMIT, f"took {run.seconds:.1f}s"
    lines = run.stderr.splitlines()
    if expect["exit"] == 0:
        assert not [line for line in lines if line.startswith("wavegen: error")], run.stderr
        if expect.get("unchanged"):
            assert run.stdout == case.data, "accepted input must come out byte for byte"
        elif "unchanged" in expect:
            assert run.stdout != case.data, "expected wavegen to annotate something"
    else:
        assert len(lines) == 1, f"expected exactly one stderr line, got {lines!r}"
        match = ERROR_LINE.match(lines[0])
        assert match, lines[0]
        assert match["file"] == file_name
        assert match["line"] is not None, "every error names a line"
        assert re.search(expect["message"], match["message"]), (expect["message"], match["message"])
        if "line" in expect:
            assert int(match["line"]) == expect["line"], lines[0]
        if "document" in expect:
            assert match["document"] is not None and int(match["document"]) == expect["document"], lines[0]
        assert run.stdout == b"", "nothing may be written to stdout on error"
    for secret in expect.get("forbid") or ():
        assert secret not in run.stderr and secret.encode() not in run.stdout, f"{secret!r} leaked"


MODES = ("file", "stdin", "in-place")


@dataclass
class Outcome:
    run: Run
    file_name: str
    before: dict[str, bytes]
    after: dict[str, bytes]


def _refused(name: str) -> bool:
    expect = COMMITTED[name].expect if name in COMMITTED else generated_specs()[name]["expect"]
    return bool(expect["exit"] != 0)


def _listing(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def _execute(name: str, mode: str, root: Path) -> Outcome:
    case = load(name)
    work = root / f"{name}-{mode}"
    work.mkdir()
    if mode == "stdin":
        run = run_wavegen(["transform"], stdin=case.data, cwd=work)
        return Outcome(run, "<stdin>", {}, _listing(work))
    if mode == "file":
        path = work / f"input{case.suffix}"
        path.write_bytes(case.data)
        before = _listing(work)
        run = run_wavegen(["transform", str(path)], cwd=work)
        return Outcome(run, str(path), before, _listing(work))
    bundle = work / "bundle"
    bundle.mkdir()
    (bundle / "a-good.yaml").write_bytes(GOOD_FILE)
    (bundle / f"b-bad{case.suffix}").write_bytes(case.data)
    (bundle / "c-good.yaml").write_bytes(GOOD_FILE.replace(b"good-", b"other-"))
    before = _listing(work)
    run = run_wavegen(["transform", "-i", str(bundle)], cwd=work)
    return Outcome(run, str(bundle / f"b-bad{case.suffix}"), before, _listing(work))


JOBS = [(name, mode) for name in ALL for mode in MODES if mode != "in-place" or _refused(name)]


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Outcome]:
    """Run every case in every mode up front, a few at a time (process start-up dominates)."""
    root = tmp_path_factory.mktemp("bad")
    big = [job for job in JOBS if job[0].startswith("huge")]
    small = [job for job in JOBS if job not in big]
    results: dict[tuple[str, str], Outcome] = {}
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {pool.submit(_execute, name, mode, root): (name, mode) for name, mode in small}
        for future, job in futures.items():
            results[job] = future.result()
    for name, mode in big:  # one at a time: each holds a few hundred MB
        results[(name, mode)] = _execute(name, mode, root)
    return results


@pytest.mark.parametrize(("name", "mode"), JOBS)
def test_bad_input(name: str, mode: str, outcomes: dict[tuple[str, str], Outcome]) -> None:
    case = load(name)
    outcome = outcomes[(name, mode)]
    if mode != "in-place":
        check_run(case, outcome.run, outcome.file_name)
        assert outcome.after == outcome.before, "no file written, created or changed (and no code executed)"
        return
    run = outcome.run
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr, run.stderr
    assert run.returncode == case.expect["exit"], run.stderr
    errors = [line for line in run.stderr.splitlines() if line.startswith("wavegen: error")]
    assert len(errors) == 1, run.stderr
    match = ERROR_LINE.match(errors[0])
    assert match and match["file"] == outcome.file_name, errors[0]
    assert outcome.after == outcome.before, "in-place mode must leave every file untouched when any input is bad"


def test_good_file_alone_is_rewritten(tmp_path: Path) -> None:
    """The in-place test above can fail: without the bad file the good ones do change."""
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "a-good.yaml").write_bytes(GOOD_FILE)
    run = run_wavegen(["transform", "-i", str(bundle)], cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert (bundle / "a-good.yaml").read_bytes() != GOOD_FILE


def test_same_name_configmap_and_secret_hash_both(tmp_path: Path) -> None:
    """A ConfigMap and a Secret may share a name: both count, recomputed here from the documented format."""
    import hashlib

    case = load("configmap-and-secret-same-name")
    run = run_wavegen(["transform"], stdin=case.data, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    canonical = (
        b"wavegen.io/config-hash v1\n"
        b"ConfigMap default/shared\n"
        + b"k "
        + hashlib.sha256(b"v").hexdigest().encode()
        + b"\n"
        + b"Secret default/shared\n"
        + b"k "
        + hashlib.sha256(b"v").hexdigest().encode()
        + b"\n"
    )
    expected = hashlib.sha256(canonical).hexdigest()
    assert f'wavegen.io/config-hash: "{expected}"'.encode() in run.stdout, run.stdout.decode()[-600:]


def test_cases_index_is_consistent() -> None:
    for directory in BAD.iterdir():
        if directory.is_dir():
            assert (directory / "expect.yaml").is_file(), directory
    assert shutil.disk_usage(BAD).free > 0  # the generated cases need scratch space only in tmp


def test_invalid_yaml_the_depth_walk_meets_is_a_clear_error(tmp_path: Path) -> None:
    """A document with many brackets is walked event by event for its depth; invalid YAML met
    there is an input error on one line (it was a raw ParserError: exit 3, "internal error")."""
    data = (
        b"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: long\ndata:\n  k0: |\n"
        + b"    {\n" * 63
        + b'  k1: |\n      "a": 1,\n'
        + b"    {\n" * 61
    )
    run = run_wavegen(["transform"], stdin=data, cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    assert run.stderr == (
        "wavegen: error: <stdin>, document 1, line 73: invalid YAML: did not find expected key (while parsing a block mapping)\n"
    )
    assert run.stdout == b""
