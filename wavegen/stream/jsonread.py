"""Reads a document written as JSON with Python's json module, where libyaml would read the same value."""

from __future__ import annotations

import json
import re

from .fastparse import resolve_plain
from .tree import MAX_DEPTH

# typing only for type checkers (see core/model.py): importing typing costs a run about 4 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NamedTuple
else:
    from ..core.record import NamedTuple

# Before the root "{": the piece's "---" line, blank lines and comment lines, then spaces.
# (A tab there is refused by libyaml in block context: left to it.)
_LEAD = re.compile(r"(?:---[ ]*+\r?\n)?(?:[ ]*+(?:#[^\r\n]*+)?\r?\n)*+[ ]*+")
_SPACE = re.compile(r"[ \t\r\n]*+")
# Characters json reads as themselves inside a string where YAML reads a line break, or a
# mark (a byte order mark), and escapes of halves of surrogate pairs, which json joins and
# libyaml refuses: a text holding any of them is left to libyaml.
_READ_OTHERWISE = re.compile(r"[\x85\u2028\u2029\ufeff]|\\u[dD][89a-fA-F]")
_ESCAPED_HALF = re.compile(r"\\u[dD][89a-fA-F]")  # (an ASCII text holds none of the characters)


class _Declined(Exception):
    """The text is no JSON whose value libyaml reads the same way."""


def _mapping(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    mapping = dict(pairs)
    if len(mapping) != len(pairs):
        raise _Declined  # a key twice: the reference path words the error
    return mapping


def _constant(name: str) -> Any:
    raise _Declined  # NaN, Infinity: no JSON, and plain strings to YAML


# Numbers resolve as YAML 1.1 resolves the same plain scalar (1e3 is a string to it).
_DECODER = json.JSONDecoder(
    object_pairs_hook=_mapping, parse_int=resolve_plain, parse_float=resolve_plain, parse_constant=_constant
)


class JsonDocument(NamedTuple):
    """A document read: its value, the (0-based) line of its root, and for a root whose
    ``items`` is an array, each item's start and end offsets in the text (else None)."""

    body: dict[str, Any]
    root_line: int
    items: list[tuple[int, int]] | None


def _value(text: str, at: int) -> tuple[Any, int]:
    try:
        return _DECODER.raw_decode(text, at)
    except ValueError:  # (json.JSONDecodeError)
        raise _Declined from None


def _after(text: str, at: int, expected: str) -> int:
    """The offset past ``expected`` and the spaces after it, found at ``at`` past spaces."""
    at = _SPACE.match(text, at).end()  # type: ignore[union-attr]
    if not text.startswith(expected, at):
        raise _Declined
    return _SPACE.match(text, at + 1).end()  # type: ignore[union-attr]


def _array(text: str, at: int) -> tuple[list[Any], list[tuple[int, int]], int]:
    """An array at ``at`` ("["), its items' offsets, and where it ends."""
    values: list[Any] = []
    spans: list[tuple[int, int]] = []
    at = _after(text, at, "[")
    if text.startswith("]", at):
        return values, spans, at + 1
    while True:
        value, end = _value(text, at)
        values.append(value)
        spans.append((at, end))
        at = _SPACE.match(text, end).end()  # type: ignore[union-attr]
        if text.startswith("]", at):
            return values, spans, at + 1
        at = _after(text, at, ",")


def _root(text: str, at: int) -> tuple[dict[str, Any], list[tuple[int, int]] | None, int]:
    """The root object at ``at`` ("{"), read key by key so that an ``items`` array's items are
    read one by one, with their offsets; and where it ends."""
    pairs: list[tuple[str, Any]] = []
    spans: list[tuple[int, int]] | None = None
    at = _after(text, at, "{")
    if text.startswith("}", at):
        return {}, None, at + 1
    while True:
        if not text.startswith('"', at):
            raise _Declined
        key, at = _value(text, at)
        at = _after(text, at, ":")
        if key == "items" and text.startswith("[", at):
            value, spans, at = _array(text, at)
        else:
            value, at = _value(text, at)
        pairs.append((key, value))
        at = _SPACE.match(text, at).end()  # type: ignore[union-attr]
        if text.startswith("}", at):
            return _mapping(pairs), spans, at + 1
        at = _after(text, at, ",")


def _within_depth(value: dict[str, Any]) -> bool:
    """Whether a value read from JSON nests at most MAX_DEPTH levels (as libyaml's events count them)."""
    level: list[Any] = [value]
    for _ in range(MAX_DEPTH):
        deeper: list[Any] = []
        for collection in level:
            children = collection.values() if collection.__class__ is dict else collection
            deeper += [child for child in children if child.__class__ is dict or child.__class__ is list]
        if not deeper:
            return True
        level = deeper
    return False


def read(text: str) -> JsonDocument | None:
    """The value of a document whose root is a JSON object, as libyaml reads it if it accepts
    the text (which the caller checks: texts are checked together, see Engine._examined);
    None for any other text (also for JSON that nests too deep or that libyaml reads otherwise)."""
    start = _LEAD.match(text).end()  # type: ignore[union-attr]
    if not text.startswith("{", start) or (_ESCAPED_HALF if text.isascii() else _READ_OTHERWISE).search(text):
        return None
    try:
        if '"items"' in text:
            body, spans, end = _root(text, start)
        else:
            (body, end), spans = _value(text, start), None
    except (_Declined, RecursionError):
        return None
    if _SPACE.match(text, end).end() != len(text):  # type: ignore[union-attr]
        return None  # a comment, a second value, an end marker: libyaml reads it
    if text.count("{") + text.count("[") > MAX_DEPTH and not _within_depth(body):
        return None
    return JsonDocument(body, text.count("\n", 0, start), spans)
