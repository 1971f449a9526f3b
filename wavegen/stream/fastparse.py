"""Builds plain values for common block-style documents without libyaml's node tree (a strict subset, else None).

The caller has already syntax-checked the document with libyaml's raw parse, so this
module never decides whether YAML is valid: it only reads documents written in a
narrow, unambiguous subset (block mappings and sequences, one-line plain or quoted
scalars, ``|``/``|-`` literals, ``{}``/``[]``) and returns None for anything else,
which then goes through the reference composer. Scalars resolve through the same
tables as the reference path, so both give identical values.
"""

from __future__ import annotations

import re
from typing import Any

from ..core.model import TypedScalar
from .nodes import BOOL_TAG, NULL_TAG, STR_TAG, _LeanResolveLoader

_TRUE_WORDS = frozenset(("yes", "true", "on", "y"))
_BY_FIRST_CHAR = _LeanResolveLoader._by_first_char
# A plain key: no spaces, no quotes, no flow or anchor indicators, and ": " or end of line after it.
_KEY = re.compile(r"([A-Za-z0-9_./][A-Za-z0-9_./-]*):(?: +|$)")
_DOUBLE = re.compile(r'"([^"\\]*)" *')
_SINGLE = re.compile(r"'((?:[^']|'')*)' *")
# Characters that may begin something other than a plain scalar (or a plain scalar we do not read).
_NOT_PLAIN_START = frozenset("-?:,[]{}#&*!|>'\"%@`<= ")
# Anything that could make the text mean more than this reader understands: tabs, escapes,
# other line breaks, a BOM, directives and markers past the first line (tested with `in`: C speed).
_UNREAD = ("\t", "\r", "\\", "\x85", "\u2028", "\u2029", "\ufeff", "\n%", "\n...", "\n---")


class _Bail(Exception):
    """The document is outside the subset; the reference composer reads it."""


def _resolve_plain(value: str) -> Any:
    for tag, pattern in _BY_FIRST_CHAR.get(value[:1], ()):
        if pattern.match(value):
            if tag == NULL_TAG:
                return None
            if tag == BOOL_TAG:
                return value.lower() in _TRUE_WORDS
            return TypedScalar(tag, value)
    return value


def _resolves_to_str(value: str) -> bool:
    return all(tag == STR_TAG or not pattern.match(value) for tag, pattern in _BY_FIRST_CHAR.get(value[:1], ()))


# Keys repeat across documents (name, metadata, ...); resolving each only once saves a regex per key.
_STR_KEYS: dict[str, bool] = {}


def _key(value: str) -> str:
    known = _STR_KEYS.get(value)
    if known is None:
        known = _resolves_to_str(value)
        if len(_STR_KEYS) < 4096:  # bounded: keys come from untrusted input
            _STR_KEYS[value] = known
    if not known:
        raise _Bail
    return value


class _Reader:
    __slots__ = ("contents", "count", "lines")

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.contents = [line.lstrip(" ") for line in lines]
        self.count = len(lines)

    def next_content(self, i: int) -> int:
        contents = self.contents
        count = self.count
        while i < count:
            content = contents[i]
            if content and content[0] != "#":
                return i
            i += 1
        return i

    def entry(self, i: int) -> tuple[int, int, str]:
        """The next content line at or after i: its index, column and text from that column (column -1 at the end)."""
        contents = self.contents
        count = self.count
        while i < count:
            content = contents[i]
            if content and content[0] != "#":
                return i, len(self.lines[i]) - len(content), content
            i += 1
        return i, -1, ""

    def mapping(self, i: int, indent: int, first: str | None) -> tuple[dict[Any, Any], int]:
        """A block mapping whose keys sit at column ``indent``; ``first`` is line i's text from that column."""
        result: dict[Any, Any] = {}
        content = first
        while True:
            if content is None:
                i, column, content = self.entry(i)
                if column < indent:
                    return result, i
                if column > indent:
                    raise _Bail
            match = _KEY.match(content)
            if match is None:
                raise _Bail
            key = _key(match.group(1))
            if key in result:
                raise _Bail  # the reference path reports the duplicate, with its line
            rest = content[match.end() :]
            if rest:
                result[key], i = self.inline(rest, i, indent)
            else:
                result[key], i = self.nested(i, indent)
            content = None

    def sequence(self, i: int, indent: int) -> tuple[list[Any], int]:
        """A block sequence whose dashes sit at column ``indent``."""
        result: list[Any] = []
        while True:
            i, column, content = self.entry(i)
            if column < indent or (column == indent and not content.startswith("- ")):
                return result, i
            if column > indent:
                raise _Bail
            after = content[2:]
            item = after.lstrip(" ")
            if not item or item[0] == "-":
                raise _Bail
            item_column = indent + 2 + len(after) - len(item)
            if _KEY.match(item):
                value, i = self.mapping(i, item_column, item)
            else:
                value, i = self.inline(item, i, indent)
            result.append(value)

    def nested(self, i: int, indent: int) -> tuple[Any, int]:
        """The value of ``key:`` with nothing after it: a nested block, or null."""
        j = self.next_content(i + 1)
        if j >= self.count:
            return None, i + 1
        line = self.lines[j]
        content = line.lstrip(" ")
        column = len(line) - len(content)
        is_dash = content.startswith("- ")
        if column > indent:
            return self.sequence(j, column) if is_dash else self.mapping(j, column, content)
        if column == indent and is_dash:  # a sequence may sit at its key's column
            return self.sequence(j, column)
        return None, i + 1

    def inline(self, rest: str, i: int, indent: int) -> tuple[Any, int]:
        """A value starting on line i after a key or dash; ``indent`` is the owning block's column."""
        first = rest[0]
        if first == '"':
            match = _DOUBLE.fullmatch(rest)
            if match is None:
                raise _Bail
            return match.group(1), i + 1
        if first == "'":
            match = _SINGLE.fullmatch(rest)
            if match is None:
                raise _Bail
            return match.group(1).replace("''", "'"), i + 1
        if first == "|":
            return self.literal(rest, i, indent)
        stripped = rest.rstrip(" ")
        if stripped == "{}":
            return {}, i + 1
        if stripped == "[]":
            return [], i + 1
        if first in _NOT_PLAIN_START or ": " in rest or " #" in rest or stripped.endswith(":"):
            raise _Bail
        return _resolve_plain(stripped), i + 1

    def literal(self, header: str, i: int, indent: int) -> tuple[str, int]:
        """A ``|`` or ``|-`` block scalar whose content lines follow line i."""
        header = header.rstrip(" ")
        if header not in ("|", "|-"):
            raise _Bail
        lines = self.lines
        j = i + 1
        if j >= self.count or not lines[j]:
            raise _Bail  # leading empty lines change indentation detection; keep to the plain case
        first = lines[j]
        block = len(first) - len(first.lstrip(" "))
        if block <= indent or not first.strip(" "):
            raise _Bail
        body: list[str] = []
        end = j  # one past the last content line
        while j < self.count:
            line = lines[j]
            if not line:
                body.append("")
                j += 1
                continue
            content = line.lstrip(" ")
            column = len(line) - len(content)
            if not content:
                raise _Bail  # whitespace-only lines have their own folding rules
            if column < block:
                if column > indent:
                    raise _Bail
                break
            body.append(line[block:])
            j += 1
            end = j
        del body[end - (i + 1) :]
        text = "\n".join(body)
        return (text + "\n" if header == "|" else text), end


def parse(text: str) -> tuple[dict[Any, Any], int] | None:
    """The value of a block-mapping document and its root's 0-based line, or None outside the subset."""
    if not text.endswith("\n") or text.startswith("%") or any(part in text for part in _UNREAD):
        return None
    lines = text.split("\n")
    lines.pop()  # the empty string after the final line break
    reader = _Reader(lines)
    start = 0
    if lines and (lines[0] == "---" or lines[0].startswith("--- #")):
        start = 1
    start = reader.next_content(start)
    if start >= reader.count or lines[start][0] == " ":
        return None
    try:
        value, end = reader.mapping(start, 0, None)
    except (_Bail, RecursionError):
        return None
    if reader.next_content(end) < reader.count:
        return None
    return value, start
