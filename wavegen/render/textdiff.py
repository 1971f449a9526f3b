"""The unified diff of a stale file's input against its output, found a document at a time."""

from __future__ import annotations

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
    """
    if len(original) != len(output) or not original:
        whole_before = "".join(original).splitlines(keepends=True)
        whole_after = "".join(output).splitlines(keepends=True)
        yield from difflib.unified_diff(whole_before, whole_after, f"a/{name}", f"b/{name}", n=context)
        return
    before: list[str] = []
    after: list[str] = []
    opcodes: list[Opcode] = []
    # the byte-order mark starts the first line: it goes with the first document
    pairs = [(original[0] + original[1], output[0] + output[1]) if len(original) > 1 else (original[0], output[0])]
    pairs.extend(zip(original[2:], output[2:], strict=True))
    for old, new in pairs:
        old_lines, new_lines = old.splitlines(keepends=True), new.splitlines(keepends=True)
        i, j = len(before), len(after)
        if old is new or old == new:
            found: list[Opcode] = [("equal", 0, len(old_lines), 0, len(new_lines))]
        else:
            found = difflib.SequenceMatcher(None, old_lines, new_lines).get_opcodes()
        for tag, i1, i2, j1, j2 in found:
            if i1 == i2 and j1 == j2:
                continue
            if tag == "equal" and opcodes and opcodes[-1][0] == "equal":
                opcodes[-1] = ("equal", opcodes[-1][1], i + i2, opcodes[-1][3], j + j2)
            else:
                opcodes.append((tag, i + i1, i + i2, j + j1, j + j2))
        before.extend(old_lines)
        after.extend(new_lines)
    for number, hunk in enumerate(_FoundOpcodes(opcodes).get_grouped_opcodes(context)):
        if number == 0:
            yield f"--- a/{name}\n"
            yield f"+++ b/{name}\n"
        yield f"@@ -{_span(hunk[0][1], hunk[-1][2])} +{_span(hunk[0][3], hunk[-1][4])} @@\n"
        for kind, i1, i2, j1, j2 in hunk:
            if kind == "equal":
                yield from (" " + line for line in before[i1:i2])
                continue
            yield from ("-" + line for line in before[i1:i2])
            yield from ("+" + line for line in after[j1:j2])


def _span(start: int, stop: int) -> str:
    """A hunk's range as unified diffs write it: 1-based first line and count; the count left out
    when it is 1, and the line before the hunk when it is empty."""
    count = stop - start
    if count == 1:
        return str(start + 1)
    return f"{start + (1 if count else 0)},{count}"
