"""The stream layer's precompiled patterns: the same pattern objects as re's, current, and enough for a run."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wavegen.stream import patterns, precompiled

ROOT = Path(__file__).resolve().parents[2]
SAME_INTERPRETER = sys.implementation.cache_tag == precompiled.CACHE_TAG
needs_table = pytest.mark.skipif(not SAME_INTERPRETER, reason=f"the table is {precompiled.CACHE_TAG}'s")


@pytest.fixture
def fresh() -> Iterator[None]:
    """patterns with nothing built yet, and nothing recorded; restored after."""
    saved = dict(patterns._compiled), patterns._table, patterns.recorded
    patterns._compiled.clear()
    patterns._table = None
    try:
        yield
    finally:
        patterns._compiled.clear()
        patterns._compiled.update(saved[0])
        patterns._table, patterns.recorded = saved[1], saved[2]


@needs_table
def test_the_table_builds_what_re_builds(fresh: None) -> None:
    assert len(precompiled.PATTERNS) > 40
    for pattern, flags in precompiled.PATTERNS:
        built, expected = patterns.compile(pattern, flags), re.compile(pattern, flags)
        # equal patterns have the same text, flags and code (_sre compares them)
        assert built == expected, pattern
        assert (built.groups, dict(built.groupindex)) == (expected.groups, dict(expected.groupindex)), pattern
        assert built is patterns.compile(pattern, flags)  # built once


@needs_table
def test_the_table_is_current() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "hack" / "precompile_patterns.py"), "--check"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr


@needs_table
def test_a_table_entry_is_what_is_used(fresh: None, monkeypatch: pytest.MonkeyPatch) -> None:
    # One pattern's text with another's code (both without groups): what it matches is the code's,
    # so the pattern comes from the table, not from re.
    key, donor = (r"[\[\]{}#\\]", 0), (r"\n(?:---|\.\.\.|%)", 0)
    assert precompiled.PATTERNS[key][2] == precompiled.PATTERNS[donor][2] == 0
    monkeypatch.setattr(patterns, "_table", {key: precompiled.PATTERNS[donor]})
    built = patterns.compile(*key)
    assert built.pattern == key[0] and built.match("\n---") and not built.match("#")
    assert re.compile(key[0]).match("#")


def test_without_the_table_re_builds_them(fresh: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(patterns, "_table", {})  # another interpreter's _sre
    built = patterns.compile(r"( *+)(\w+):", 0)
    assert built == re.compile(r"( *+)(\w+):") and built.match("  key: x").groups() == ("  ", "key")  # type: ignore[union-attr]
    assert patterns.compile(b"\\xc2[\\x80-\\x9f]").search(b"a\xc2\x85") is not None


def test_the_table_is_refused_for_another_interpreter(fresh: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(precompiled, "CACHE_TAG", "cpython-399")
    assert patterns._precompiled() == {}
    patterns._table = None
    monkeypatch.setattr(precompiled, "CACHE_TAG", sys.implementation.cache_tag)
    monkeypatch.setattr(precompiled, "SRE", (0, 4))
    assert patterns._precompiled() == {}


def test_the_helpers_are_re_s() -> None:
    text = "a: 1\nb: 'x'\n"
    assert patterns.match(r"(\w): ", text).group(1) == "a"  # type: ignore[union-attr]
    assert patterns.fullmatch(r"[^\n]*", "abc") is not None and patterns.fullmatch(r"[^\n]*", "a\nb") is None
    assert patterns.fullmatch(r"a.b", "a\nb", patterns.DOTALL) is not None and patterns.DOTALL == re.DOTALL
    assert patterns.sub(r"(\w+)", lambda m: m.group(1).upper(), text) == "A: 1\nB: 'X'\n"
    assert [m.start() for m in patterns.finditer(r"\n", text)] == [4, 11]
    assert patterns.findall(r"\w+", text) == ["a", "1", "b", "x"]


@given(st.text())
def test_escape_is_re_escape(text: str) -> None:
    assert patterns.escape(text) == re.escape(text)


def test_escape_of_every_ascii_character() -> None:
    text = "".join(map(chr, range(128)))
    assert patterns.escape(text) == re.escape(text)


@needs_table
def test_transform_asks_for_no_pattern_the_table_lacks() -> None:
    """Over every fixture and example, `transform` and `transform --check` build all their patterns from the table."""
    files = sorted([*ROOT.glob("fixtures/**/*.yaml"), *ROOT.glob("examples/**/*.yaml")])
    script = (
        "import contextlib, io, sys\n"
        "from wavegen.stream import patterns, precompiled\n"
        "patterns.recorded = set()\n"
        "from wavegen.cli.main import main\n"
        "for path in sys.argv[1:]:\n"
        "    for check in ([], ['--check']):\n"
        "        sink = io.StringIO()\n"
        "        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), contextlib.suppress(SystemExit):\n"
        "            main(['transform', *check, path])\n"
        "print(len(patterns.recorded))\n"
        "print(sorted(map(repr, patterns.recorded - set(precompiled.PATTERNS))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, *map(str, files)], capture_output=True, text=True, cwd=ROOT, check=False, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    asked, missing = done.stdout.splitlines()[-2:]
    assert int(asked) > 20 and len(files) > 100
    assert missing == "[]"


# (and what a run need not load for a little Secret data, nor for pairs of cuts and one error number)
_STARTUP_HEAVY = ("re", "enum", "collections", "functools", "types", "yaml", "binascii", "itertools", "errno")


def _heavy_imports(bundle: Path) -> tuple[str, list[str]]:
    """Exit code and which of _STARTUP_HEAVY a `wavegen transform BUNDLE` loads, in an interpreter
    without site (-S: an editable install's start-up hook imports re into every process), its
    packages on the path (where their .pth hooks do not run)."""
    import sysconfig

    path = [str(ROOT), *dict.fromkeys(sysconfig.get_paths()[key] for key in ("purelib", "platlib"))]
    script = (
        f"import sys; sys.path[:0] = {path!r}\n"
        "from wavegen.cli.main import main\n"
        "sys.stdout = open('/dev/null', 'w')\n"
        f"code = main(['transform', {str(bundle)!r}])\n"
        f"print(code, ' '.join(sorted(m for m in {_STARTUP_HEAVY!r} if m in sys.modules)), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-S", "-c", script], capture_output=True, text=True, cwd=ROOT, check=False)
    code, _, names = done.stderr.strip().splitlines()[-1].partition(" ")
    return code, names.split()


@needs_table
@pytest.mark.parametrize("bundle", ["examples/shop.yaml", "fixtures/missing-key-configmapkeyref/input.yaml"])
def test_a_plain_run_imports_none_of_re_and_the_modules_it_brings(bundle: str) -> None:
    """A bundle read by the subset reader, with or without findings to report: no re, enum, collections,
    functools or types (~4 ms); nor binascii for the example's Secret data (0.25 ms), itertools or errno."""
    assert _heavy_imports(ROOT / bundle) == ("0", [])


def test_long_literals_and_lists_of_them_import_none_of_re(tmp_path: Path) -> None:
    """The patterns that read long literals and step over a List's items are precompiled, for the
    indentations they are used at: a dashboards List, and a literal indented past the table's
    bound (read line by line), load none of _STARTUP_HEAVY."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from gen_bundle import dashboard_list

    listed = tmp_path / "dashboards.yaml"
    listed.write_text(dashboard_list(3))
    deep = tmp_path / "deep.yaml"
    body = "".join(" " * 70 + f"line {n}\n" for n in range(2000))
    deep.write_text(f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\ndata:\n  k: |\n{body}")
    assert _heavy_imports(listed) == ("0", [])
    assert _heavy_imports(deep) == ("0", [])


def test_the_import_probe_sees_them(tmp_path: Path) -> None:
    # an anchored scalar sends the bundle to libyaml: PyYAML imports re and the rest
    bundle = tmp_path / "anchored-scalar.yaml"
    bundle.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: &x v\n  b: *x\n")
    code, names = _heavy_imports(bundle)
    assert code == "0" and {"re", "yaml", "enum"} <= set(names)


def test_a_plain_run_collects_no_garbage_and_leaves_the_collector_on() -> None:
    """The cyclic collector stays off while the transform path is imported and run (it found nothing
    there and cost a small run 0.7 ms), and is on again afterwards for whoever called main()."""
    script = (
        f"import gc, sys; sys.path.insert(0, {str(ROOT)!r})\n"
        "from wavegen.cli.main import main\n"
        "gc.collect()\n"  # (from an empty young generation: whatever importing left in it is not the run's)
        "runs = []\n"
        "gc.callbacks.append(lambda phase, info: runs.append(info['generation']) if phase == 'start' else None)\n"
        "sys.stdout = open('/dev/null', 'w')\n"
        f"code = main(['transform', {str(ROOT / 'examples' / 'shop.yaml')!r}])\n"
        "print(code, gc.isenabled(), len(runs), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-S", "-c", script], capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.stderr.split() == ["0", "True", "0"], done.stderr


def test_the_installed_command_exits_a_plain_run_without_a_collection() -> None:
    """`wavegen` (console) leaves the collector off to the end of a plain transform: turned on again
    before its exit, it would sweep every object the run made (a gen-0 pass over thousands) for nothing."""
    script = (
        f"import gc, os, sys; sys.path.insert(0, {str(ROOT)!r})\n"
        "from wavegen.cli.main import console\n"
        "gc.collect()\n"
        "gc.callbacks.append(lambda phase, info: os.write(2, b'collection\\n') if phase == 'start' else None)\n"
        f"sys.argv = ['wavegen', 'transform', {str(ROOT / 'examples' / 'shop.yaml')!r}]\n"
        "console()\n"
    )
    done = subprocess.run([sys.executable, "-S", "-c", script], capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0 and "kind: Deployment" in done.stdout and "collection" not in done.stderr, done.stderr
