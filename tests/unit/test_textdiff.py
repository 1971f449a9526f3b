"""transform --check's diff, found a document at a time: difflib's for whole files, and it applies."""

from __future__ import annotations

import difflib
import re
import sys
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from wavegen.inputs.options import HashingFlags, options_from_flags
from wavegen.render import textdiff
from wavegen.stream.engine import InputDocument, Output, run

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from gen_bundle import styled_bundle, workload_bundle  # noqa: E402

HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@\n")


def _stale(text: str | bytes, name: str = "bundle.yaml") -> Output:
    data = text.encode() if isinstance(text, str) else text
    result = run([InputDocument(name, data)], options_from_flags(HashingFlags()))
    (index,) = result.changed()
    return result.files[index]


def _whole(output: Output) -> list[str]:
    before = "".join(output.original).splitlines(keepends=True)
    after = "".join(output.chunks).splitlines(keepends=True)
    return list(difflib.unified_diff(before, after, f"a/{output.name}", f"b/{output.name}"))


def _apply(original: str, diff: list[str]) -> str:
    """The text a unified diff makes of ``original``; fails where a context or removed line
    differs, or a hunk holds other counts of lines than its header says."""
    lines = original.splitlines(keepends=True)
    assert diff[0].startswith("--- a/") and diff[1].startswith("+++ b/")
    out: list[str] = []
    at = 0
    counts = [0, 0]  # lines of the open hunk left to read: of the input's, of the output's
    for line in diff[2:]:
        hunk = HUNK.fullmatch(line)
        if hunk:
            assert counts == [0, 0], "a hunk shorter than its header says"
            start, count = int(hunk[1]), int(hunk[2] or 1)
            counts = [count, int(hunk[4] or 1)]
            first = start - 1 if count else start
            assert first >= at
            out.extend(lines[at:first])
            at = first
        elif line[0] in " -":
            assert lines[at] == line[1:], (at, line)
            at += 1
            counts[0] -= 1
            if line[0] == " ":
                out.append(line[1:])
                counts[1] -= 1
        else:
            assert line[0] == "+"
            out.append(line[1:])
            counts[1] -= 1
    assert counts == [0, 0], "a hunk shorter than its header says"
    return "".join(out + lines[at:])


@pytest.mark.parametrize("fixture", ["all-kinds", "flow-style", "go-yaml-strings", "crlf", "anchors"])
def test_a_fixture_s_diff_is_difflib_s_of_the_whole_files(fixture: str) -> None:
    output = _stale((ROOT / "fixtures" / fixture / "input.yaml").read_bytes())
    found = list(textdiff.unified_diff(output.original, output.chunks, output.name))
    assert found == _whole(output) and len(found) > 3


@pytest.mark.parametrize("documents", [3, 7, 40])
def test_a_styled_bundle_s_diff_makes_the_output(documents: int) -> None:
    output = _stale(styled_bundle(documents))
    found = list(textdiff.unified_diff(output.original, output.chunks, output.name))
    assert _apply("".join(output.original), found) == "".join(output.chunks)
    assert sum(line.startswith("+") and "wavegen.io/config-hash" in line for line in found) >= documents // 3


def test_hunks_of_neighbouring_documents_are_merged_as_difflib_merges_them() -> None:
    # one-line documents: every change is within 3 lines of the next, across document boundaries
    output = _stale(workload_bundle(3))
    found = list(textdiff.unified_diff(output.original, output.chunks, output.name))
    assert _apply("".join(output.original), found) == "".join(output.chunks)
    starts = [int(m[1]) for m in map(HUNK.fullmatch, found) if m]
    assert found == _whole(output) and starts == sorted(starts)


def test_only_changed_documents_are_compared_one_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    output = _stale(styled_bundle(60))
    longest = max(len(chunk.splitlines()) for chunk in output.original)
    sizes: list[int] = []
    real = difflib.SequenceMatcher

    class Counting(real):  # type: ignore[valid-type,misc]
        def set_seqs(self, a: list[str], b: list[str]) -> None:
            sizes.append(len(a))
            super().set_seqs(a, b)

    monkeypatch.setattr(textdiff.difflib, "SequenceMatcher", Counting)
    found = list(textdiff.unified_diff(output.original, output.chunks, output.name))
    changed = sum(old != new for old, new in zip(output.original, output.chunks, strict=True))
    assert 0 < max(sizes) <= longest + 1  # a document and, for the first, the BOM's empty line
    assert len(sizes) == changed and _apply("".join(output.original), found) == "".join(output.chunks)


def test_texts_that_do_not_pair_up_are_compared_whole() -> None:
    before, after = ["", "a: 1\nb: 2\n"], ["", "a: 1\n", "b: 3\n"]
    found = list(textdiff.unified_diff(before, after, "x"))
    assert found == list(difflib.unified_diff(["a: 1\n", "b: 2\n"], ["a: 1\n", "b: 3\n"], "a/x", "b/x"))


def test_no_change_no_diff() -> None:
    assert list(textdiff.unified_diff(["", "a: 1\n", "b"], ["", "a: 1\n", "b"], "x")) == []


def test_a_byte_order_mark_starts_the_first_line() -> None:
    found = list(textdiff.unified_diff(["\ufeff", "a: 1\n"], ["\ufeff", "a: 2\n"], "x"))
    assert found[3:] == ["-\ufeffa: 1\n", "+\ufeffa: 2\n"]


@pytest.mark.parametrize("context", [0, 1, 3])
def test_ranges_as_difflib_writes_them_with_any_context(context: int) -> None:
    # an insertion after a line and a removal after another: a side of no lines (",0") with context 0
    before, after = ["", "a: 1\nb: 2\n", "c: 3\nd: 4\n"], ["", "a: 1\nx: 0\nb: 2\n", "c: 3\n"]
    found = list(textdiff.unified_diff(before, after, "x", context))
    whole = difflib.unified_diff(
        "".join(before).splitlines(keepends=True), "".join(after).splitlines(keepends=True), "a/x", "b/x", n=context
    )
    assert found == list(whole)
    assert context or found[2:] == ["@@ -1,0 +2 @@\n", "+x: 0\n", "@@ -4 +4,0 @@\n", "-d: 4\n"]


def test_a_changed_document_is_matched_between_its_first_and_last_change(monkeypatch: pytest.MonkeyPatch) -> None:
    """A List of many alike lines with two lines added in its middle: difflib matches those
    alone, and the diff shows them alone. (Matching the whole took seconds, and difflib's
    heuristic for lines found everywhere made it remove and add back 4,500 of them.)"""
    item = '  - name: x\n    value: "}"\n    other: "],"\n'
    before = "apiVersion: v1\nkind: List\nitems:\n" + item * 3000
    after = before.replace(item * 1500, item * 1500 + "  - name: added\n    value: y\n", 1)
    sizes: list[int] = []
    real = difflib.SequenceMatcher

    class Counting(real):  # type: ignore[valid-type,misc]
        def set_seqs(self, a: list[str], b: list[str]) -> None:
            sizes.append(len(a) + len(b))
            super().set_seqs(a, b)

    monkeypatch.setattr(textdiff.difflib, "SequenceMatcher", Counting)
    found = list(textdiff.unified_diff(["", before], ["", after], "x"))
    assert sizes == [2]
    assert found[2] == "@@ -4501,6 +4501,8 @@\n" and len(found) == 3 + 8
    assert [line for line in found[3:] if line[0] != " "] == ["+  - name: added\n", "+    value: y\n"]
    assert _apply(before, found) == after


_LINE = st.sampled_from(["a: 1\n", "b: 2\n", "- x\n", "}\n", "  c: 3\n"])
_DOCUMENT = st.lists(_LINE, max_size=12).map("".join)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_DOCUMENT, _DOCUMENT, st.booleans()), min_size=1, max_size=6), st.integers(0, 3))
@example([("", "a: 1\n", True), ("a: 1\n", "", True)], 0)
def test_a_diff_of_alike_lines_makes_the_output(documents: list[tuple[str, str, bool]], context: int) -> None:
    """Documents of few, repeated lines, some changed into others: the diff, applied to the
    input, makes the output, its hunks in order (the lines of unchanged documents and of a
    changed one's equal ends read back from their texts)."""
    original = ["", *(old for old, _, _ in documents)]
    output = ["", *(new if changed else old for old, new, changed in documents)]
    found = list(textdiff.unified_diff(original, output, "bundle.yaml", context))
    if original == output:
        assert found == []
        return
    # (text moved between documents, the whole equal, is a diff of each document: it applies too)
    if found:
        assert _apply("".join(original), found) == "".join(output)
        starts = [int(m[1]) for m in map(HUNK.fullmatch, found) if m]
        assert starts == sorted(starts)
