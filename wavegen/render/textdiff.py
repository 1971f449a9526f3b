"""The unified diff of a stale file's input against its output, found a document at a time."""

from __future__ import annotations

import bisect
import difflib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import Literal

    Opcode = tuple[Literal["replace", "delete", "insert", "equal"], int, int, int, int]


class _FoundOpcodes(difflib.SequenceMatcher[str]):
    """A matcher handed opcodes found elsewhere: difflib groups them into hunks as it groups its own."""

    def __init__(self, opcodes: list[Opcode]) -> None:
        super().__init__(None, [], [])
        self._found = opcodes

    def get_opcodes(self) -> list[Opcode]:
        return self._found


def unified_diff(original: Sequence[str], output: Sequence[str], name: str, context: int = 3) -> Iterator[str]:
    """The lines of ``difflib.unified_diff`` between the two texts (``a/NAME``, ``b/NAME``).

    ``original`` and ``output`` are an edited file's texts as the engine keeps them
    (``Output.original``, ``Output.chunks``): the byte-order mark, then one item per document,
    the output's item for a document the output of the input's. A document that did not change
    is one run of equal lines, and difflib compares only the documents that did: comparing
    the whole files instead took minutes on a bundle of 6,000 documents (difflib's matching is
    quadratic where many lines are alike). Documents end at a line break, so their lines are
    the file's. Texts that do not pair up so are compared whole.

    A changed document's lines before its first change and after its last are one equal run
    too, and difflib matches only the lines between (mimir's dashboards as one List, 56,000
    lines of which two were added: 3.4 s of matching, most lines alike). A document's lines are
    split when its change is found and again when a hunk shows them, not kept: the lines of
    every document took a 6 MB bundle's check 61 MB of memory.
    """
    if len(original) != len(output) or not original:
        whole_before = "".join(original).splitlines(keepends=True)
        whole_after = "".join(output).splitlines(keepends=True)
        yield from difflib.unified_diff(whole_before, whole_after, f"a/{name}", f"b/{name}", n=context)
        return
    before, after = _Lines(), _Lines()
    opcodes: list[Opcode] = []
    # the byte-order mark starts the first line: it goes with the first document
    pairs = [(original[0] + original[1], output[0] + output[1]) if len(original) > 1 else (original[0], output[0])]
    pairs.extend(zip(original[2:], output[2:], strict=True))
    for old, new in pairs:
        i, j = before.count, after.count
        if old is new or old == new:
            count = before.add(old)
            after.add(new, count)
            found: list[Opcode] = [("equal", 0, count, 0, count)]
        else:
            old_lines, new_lines = old.splitlines(keepends=True), new.splitlines(keepends=True)
            before.add(old, len(old_lines))
            after.add(new, len(new_lines))
            found = _changed(old_lines, new_lines)
            del old_lines, new_lines
        for tag, i1, i2, j1, j2 in found:
            if i1 == i2 and j1 == j2:
                continue
            if tag == "equal" and opcodes and opcodes[-1][0] == "equal":
                opcodes[-1] = ("equal", opcodes[-1][1], i + i2, opcodes[-1][3], j + j2)
            else:
                opcodes.append((tag, i + i1, i + i2, j + j1, j + j2))
    for number, hunk in enumerate(_FoundOpcodes(opcodes).get_grouped_opcodes(context)):
        if number == 0:
            yield f"--- a/{name}\n"
            yield f"+++ b/{name}\n"
        yield f"@@ -{_span(hunk[0][1], hunk[-1][2])} +{_span(hunk[0][3], hunk[-1][4])} @@\n"
        for kind, i1, i2, j1, j2 in hunk:
            if kind == "equal":
                yield from (" " + line for line in before.lines(i1, i2))
                continue
            yield from ("-" + line for line in before.lines(i1, i2))
            yield from ("+" + line for line in after.lines(j1, j2))


def _changed(old: list[str], new: list[str]) -> list[Opcode]:
    """difflib's opcodes for a changed document, matched between its first and last change."""
    shorter = min(len(old), len(new))
    head = 0
    while head < shorter and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < shorter - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    opcodes: list[Opcode] = [("equal", 0, head, 0, head)] if head else []
    middle = difflib.SequenceMatcher(None, old[head : len(old) - tail], new[head : len(new) - tail]).get_opcodes()
    opcodes += [(tag, head + i1, head + i2, head + j1, head + j2) for tag, i1, i2, j1, j2 in middle]
    if tail:
        opcodes.append(("equal", len(old) - tail, len(old), len(new) - tail, len(new)))
    return opcodes


class _Lines:
    """A file's documents and where each starts, in lines; their lines split when asked for
    (the last document split is kept: a hunk's lines are often the next hunk's)."""

    __slots__ = ("_split", "count", "starts", "texts")

    def __init__(self) -> None:
        self.count = 0
        self.starts: list[int] = []
        self.texts: list[str] = []
        self._split: tuple[int, list[str]] = (-1, [])

    def add(self, text: str, count: int = -1) -> int:
        """Add the next document (``count``: its number of lines, when known); its number of lines."""
        if count < 0:
            count = len(text.splitlines())
        self.starts.append(self.count)
        self.texts.append(text)
        self.count += count
        return count

    def lines(self, start: int, stop: int) -> Iterator[str]:
        """Lines start to stop of the file, as ``splitlines(keepends=True)`` of it gives them."""
        document = bisect.bisect_right(self.starts, start) - 1
        while start < stop:
            index, split = self._split
            if index != document:
                split = self.texts[document].splitlines(keepends=True)
                self._split = (document, split)
            first = self.starts[document]
            end = min(stop, first + len(split))
            yield from split[start - first : end - first]
            start = end
            document += 1


def _span(start: int, stop: int) -> str:
    """A hunk's range as unified diffs write it: 1-based first line and count; the count left out
    when it is 1, and the line before the hunk when it is empty."""
    count = stop - start
    if count == 1:
        return str(start + 1)
    return f"{start + (1 if count else 0)},{count}"
