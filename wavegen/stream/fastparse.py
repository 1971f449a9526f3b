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


def _inline(lines: list[str], rest: str, i: int, indent: int) -> tuple[Any, int]:
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
        return _literal(lines, rest, i, indent)
    stripped = rest.rstrip(" ")
    if stripped == "{}":
        return {}, i + 1
    if stripped == "[]":
        return [], i + 1
    if first in _NOT_PLAIN_START or ": " in rest or " #" in rest or stripped[-1] == ":":
        raise _Bail
    return _resolve_plain(stripped), i + 1


def _literal(lines: list[str], header: str, i: int, indent: int) -> tuple[str, int]:
    """A ``|`` or ``|-`` block scalar whose content lines follow line i."""
    header = header.rstrip(" ")
    if header not in ("|", "|-"):
        raise _Bail
    count = len(lines)
    j = i + 1
    if j >= count or not lines[j]:
        raise _Bail  # leading empty lines change indentation detection; keep to the plain case
    first = lines[j]
    block = len(first) - len(first.lstrip(" "))
    if block <= indent or not first.strip(" "):
        raise _Bail
    body: list[str] = []
    end = j  # one past the last content line
    while j < count:
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


# One row per line: indentation, "-" and the spaces after it, a plain key, and the rest.
# Consuming each line break (rather than ^...$ under re.M) keeps the scan fast and gives exactly one row per line.
_ROW = re.compile(r"( *+)(?:-( ++))?(?:([A-Za-z0-9_./][A-Za-z0-9_./-]*+):(?: ++|(?=\n)))?([^\n]*+)\n")
# Plain values repeat across documents ("1", "app", "true"); resolving each only once saves regex work.
_PLAIN: dict[str, Any] = {}


def _plain(value: str) -> Any:
    try:
        return _PLAIN[value]
    except KeyError:
        resolved = _resolve_plain(value)
        if len(_PLAIN) < 8192:  # bounded: values come from untrusted input
            _PLAIN[value] = resolved
        return resolved


def _read(text: str, lines: list[str], i: int) -> tuple[dict[Any, Any], int]:
    """The root block mapping of a document, read row by row with an explicit stack."""
    rows = _ROW.findall(text)
    count = len(lines)
    root: dict[Any, Any] = {}
    root_line = -1
    # One frame per open block collection: its column, the collection, and whether it is a sequence.
    columns = [0]
    blocks: list[Any] = [root]
    sequences = [False]
    pending: dict[Any, Any] | None = None  # the mapping whose last key ("key:") awaits a nested value
    pending_key: Any = None
    pending_column = 0
    while i < count:
        spaces, dash, key, rest = rows[i]
        if not (dash or key) and (not rest or rest[0] == "#"):
            i += 1
            continue
        column = len(spaces)
        if root_line < 0:
            if column:
                raise _Bail
            root_line = i
        if pending is not None:
            if column > pending_column or (column == pending_column and dash):
                # The value of "key:" is the block starting here (a sequence may sit at its key's column).
                nested: Any = [] if dash else {}
                pending[pending_key] = nested
                columns.append(column)
                blocks.append(nested)
                sequences.append(bool(dash))
            pending = None
        top = columns[-1]
        while top > column or (top == column and not dash and sequences[-1]):
            columns.pop()
            blocks.pop()
            sequences.pop()
            top = columns[-1]
        if top != column:
            raise _Bail
        block = blocks[-1]
        if sequences[-1]:
            if not key:
                if not rest or rest[0] == "-":
                    raise _Bail
                value, i = _inline(lines, rest, i, column)
                block.append(value)
                continue
            # "- key: ..." opens a mapping at the item's column.
            column += 1 + len(dash)
            mapping: dict[Any, Any] = {}
            block.append(mapping)
            columns.append(column)
            blocks.append(mapping)
            sequences.append(False)
            block = mapping
        elif dash or not key:
            raise _Bail
        key = _key(key)
        if key in block:
            raise _Bail  # the reference path reports the duplicate, with its line
        if not rest:
            block[key] = None  # stays null unless a deeper block follows
            pending = block
            pending_key = key
            pending_column = column
            i += 1
        elif rest[0] not in _NOT_PLAIN_START and ": " not in rest and " #" not in rest and rest[-1] not in ": ":
            block[key] = _plain(rest)
            i += 1
        else:
            block[key], i = _inline(lines, rest, i, column)
    if root_line < 0:
        raise _Bail
    return root, root_line


def parse(text: str) -> tuple[dict[Any, Any], int] | None:
    """The value of a block-mapping document and its root's 0-based line, or None outside the subset."""
    if not text.endswith("\n") or text.startswith("%") or any(part in text for part in _UNREAD):
        return None
    lines = text.split("\n")
    lines.pop()  # the empty string after the final line break
    start = 1 if lines and (lines[0] == "---" or lines[0].startswith("--- #")) else 0
    try:
        return _read(text, lines, start)
    except _Bail:
        return None
