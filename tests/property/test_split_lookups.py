"""Hypothesis properties: line offsets and a piece's helm template, found a part at a time, equal the whole text's."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from wavegen.stream import patterns, split
from wavegen.stream.split import LineStarts, Piece

lines = st.lists(st.sampled_from(["", "x", "  key: value", "- item", "y" * 300, "z" * 5000]), max_size=60)


@settings(max_examples=60, deadline=None)
@given(lines, st.integers(1, 100), st.booleans(), st.data())
def test_every_line_start_is_where_a_line_begins(
    text_lines: list[str], repeats: int, final_break: bool, data: st.DataObject
) -> None:
    # Repeated: past the lines found from the start (split._LINES_FROM_START) in most examples.
    text = "\n".join(text_lines * repeats) + ("\n" if final_break else "")
    expected = [0, *(at + 1 for at, character in enumerate(text) if character == "\n")]
    starts = LineStarts(text)
    assert len(starts) == len(expected)
    # Asked in any order, each answer alone (the chunks counted for one serve the next).
    for index in data.draw(st.lists(st.integers(0, len(expected) - 1), max_size=40)):
        assert starts[index] == expected[index]
    assert list(starts) == expected
    # Past the last line, either way, asked of a fresh one (its lines not yet counted): IndexError.
    for beyond in (len(expected), len(expected) + data.draw(st.integers(0, 5000)), -len(expected) - 1):
        try:
            LineStarts(text)[beyond]
        except IndexError:
            continue
        raise AssertionError(f"line {beyond} of {len(expected)} found")
    assert LineStarts(text)[-1] == expected[-1]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["", "a", "\n", "\r\n", "\r", "\x85", "\u2028"]), max_size=30))
def test_line_starts_are_where_yaml_lines_begin(parts: list[str]) -> None:
    """Every line break YAML knows (LF, CRLF, a lone CR, NEL, LS) starts a line, a CRLF once:
    the lazy LF count where the breaks are LF and CRLF alone, a list otherwise."""
    text = "".join(parts)
    expected = [0]
    for at, character in enumerate(text):
        if character in "\n\x85\u2028" or (character == "\r" and text[at + 1 : at + 2] != "\n"):
            expected.append(at + 1)
    starts = split.line_starts(text)
    assert list(starts) == expected
    assert isinstance(starts, LineStarts) is (text.count("\r") == text.count("\r\n") and not ({"\x85", "\u2028"} & set(text)))


def _named_by_splitting_it_all(text: str) -> str:
    for line in text.splitlines():
        if not split._NON_CONTENT_LINE.fullmatch(line):
            return ""
        match = patterns.match(split._HELM_SOURCE, line.strip())
        if match:
            return str(match.group(1))
    return ""


header_lines = st.sampled_from(
    [
        "# Source: chart/templates/a.yaml",
        "#  Source:  b c ",
        "# Source:",
        "---",
        "",
        "   ",
        "# note",
        "#" + "n" * 5000,
        "%YAML 1.1",
    ]
)
content_lines = st.sampled_from(["kind: ConfigMap", "a: '# Source: x'", "# Source: late.yaml"])
breaks = st.sampled_from(["\n", "\r\n", "\r", "\x0b", "\x85", "\u2028"])


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.tuples(st.one_of(header_lines, content_lines), breaks), max_size=8),
    st.booleans(),
    st.sampled_from([1, 2, 7, 4096]),
)
def test_the_helm_template_is_read_from_the_first_lines_alone(
    parts: list[tuple[str, str]], cut_last: bool, part_chars: int
) -> None:
    text = "".join(line + line_break for line, line_break in parts)
    if cut_last:
        text = text[:-1]
    saved = split._HEADER_PART_CHARS
    split._HEADER_PART_CHARS = part_chars  # (parts down to one character: cut between a CR and its LF too)
    try:
        assert Piece(text, 0, 1).helm_template() == _named_by_splitting_it_all(text)
    finally:
        split._HEADER_PART_CHARS = saved
