"""Reads a document written as JSON with json's C scanner, where libyaml would read the same value, and builds its nodes."""

from __future__ import annotations

from . import patterns
from .fastparse import resolve_plain
from .resolver import MAP_TAG, SEQ_TAG, STR_TAG, implicit_tag
from .tree import MAX_DEPTH, MappingNode, Node, Position, ScalarNode, SequenceNode

# typing only for type checkers (see core/model.py): importing typing costs a run about 4 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NamedTuple
else:
    from ..core.record import NamedTuple

# (Patterns, not re: importing json's package and re would cost a run about 8 ms, PyYAML 20.)
# Before the root "{": the piece's "---" line, blank lines and comment lines, then spaces.
# (A tab there is refused by libyaml in block context: left to it.)
_LEAD = patterns.compile(r"(?:---[ ]*+\r?\n)?(?:[ ]*+(?:#[^\r\n]*+)?\r?\n)*+[ ]*+")
_SPACE = patterns.compile(r"[ \t\r\n]*+")
# Characters json reads as themselves inside a string where YAML reads a line break or a mark
# (U+0085, U+2028, U+2029, U+FEFF), characters libyaml refuses (as fastparse._NOT_PRINTABLE;
# JSON has no others raw), and escapes of halves of surrogate pairs, which json joins and
# libyaml refuses: a text holding any of them is left to libyaml.
_READ_OTHERWISE = patterns.compile(r"[\x7f-\x9f\u2028\u2029\ufeff\ud800-\udfff\ufffe\uffff]|\\u[dD][89a-fA-F]")
_ESCAPED_HALF = patterns.compile(r"\\u[dD][89a-fA-F]")  # (an ASCII text's only other one is U+007F)
# What JSON allows and libyaml refuses, short of a key too long (see read): a key's colon on a
# later line (a closing quote and a line break before a colon can only be a key's).
_KEY_BROKEN = patterns.compile(r'"[ \t\r]*+\n[ \t\r\n]*+:')
_WIDE_GAP = patterns.compile(r'"[ \t]{64}')
# Keys decoded from at most this many characters (each at most six in the text: \uXXXX) with
# fewer than 64 blanks before their colon stay within libyaml's 1,024 for a simple key.
_MOST_KEY_CHARS = 150
_STRING = patterns.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+"')
_PLAIN = patterns.compile(r'[^ \t\r\n,:\[\]{}"]++')


class _Declined(Exception):
    """The text is no JSON whose value libyaml reads the same way."""


def _mapping(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    mapping = dict(pairs)
    if len(mapping) != len(pairs):
        raise _Declined  # a key twice: the reference path words the error
    return mapping


def _constant(name: str) -> Any:
    raise _Declined  # NaN, Infinity: no JSON, and plain strings to YAML


class _Context:
    """What json's scanner reads of a decoder. Numbers resolve as YAML 1.1 resolves the same
    plain scalar (1e3 is a string to it); a key twice, NaN and Infinity are declined."""

    strict = True
    object_hook = None
    object_pairs_hook = staticmethod(_mapping)
    parse_float = parse_int = staticmethod(resolve_plain)
    parse_constant = staticmethod(_constant)

    def __init__(self) -> None:
        self.memo: dict[str, str] = {}  # (the Python scanner's; the C one keeps its own)


try:
    from _json import make_scanner
except ImportError:  # pragma: no cover - a Python without json's C accelerator
    from json.scanner import make_scanner

_CONTEXT: Any = _Context()
_SCAN: Any = make_scanner(_CONTEXT)


class JsonDocument(NamedTuple):
    """A document read: its value, the (0-based) line of its root, for a root whose ``items``
    is an array each item's start and end offsets in the text (else None), and whether the
    text is known to be one libyaml accepts (else the caller asks it: see read)."""

    body: dict[str, Any]
    root_line: int
    items: list[tuple[int, int]] | None
    checked: bool


def _value(text: str, at: int) -> tuple[Any, int]:
    try:
        return _SCAN(text, at)  # type: ignore[no-any-return]
    except (StopIteration, ValueError, SystemError):
        # No value there; or no JSON: json.JSONDecodeError (a ValueError), which CPython 3.11's
        # scanner raises only once json.decoder is imported, else a SystemError.
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


def _shape(value: dict[str, Any]) -> tuple[bool, int]:
    """Whether a value read from JSON nests at most MAX_DEPTH levels (as libyaml's events count
    them), and its longest key."""
    level: list[Any] = [value]
    longest = 0
    for _ in range(MAX_DEPTH):
        deeper: list[Any] = []
        for collection in level:
            if collection.__class__ is dict:
                if collection:
                    longest = max(longest, *map(len, collection))
                children = collection.values()
            else:
                children = collection
            deeper += [child for child in children if child.__class__ is dict or child.__class__ is list]
        if not deeper:
            return True, longest
        level = deeper
    return False, longest


def read(text: str) -> JsonDocument | None:
    """The value of a document whose root is a JSON object, as libyaml reads it; None for any
    other text (also for JSON that nests too deep or that libyaml reads otherwise).

    libyaml accepts every JSON text but those that put a key's colon on a later line, have a
    key too long for it, or a tab after the root: ``checked`` says the text has none of them,
    else the caller has libyaml check it (texts are checked together: see Engine._examined)."""
    start = _LEAD.match(text).end()  # type: ignore[union-attr]
    if not text.startswith("{", start):
        return None
    if ("\x7f" in text or _ESCAPED_HALF.search(text)) if text.isascii() else _READ_OTHERWISE.search(text):
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
    within, longest = _shape(body)
    if not within:
        return None
    checked = not (
        longest > _MOST_KEY_CHARS or "\t" in text[end:] or _KEY_BROKEN.search(text, start) or _WIDE_GAP.search(text, start)
    )
    return JsonDocument(body, text.count("\n", 0, start), spans, checked)


class _Composer:
    """Nodes for JSON text jsonread read, with libyaml's marks (line and column of the first
    character, and past the last: a quote, a bracket) and its tags and styles."""

    __slots__ = ("at", "line", "line_start", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.at = self.line = self.line_start = 0

    def _mark(self, offset: int) -> Position:
        """The mark of an offset at or after the last one asked (its line counted from there)."""
        text = self.text
        breaks = text.count("\n", self.at, offset)
        if breaks:
            self.line += breaks
            self.line_start = text.rfind("\n", self.at, offset) + 1
        self.at = offset
        return Position(self.line, offset - self.line_start)

    def _after_spaces(self, at: int) -> int:
        return _SPACE.match(self.text, at).end()  # type: ignore[union-attr]

    def node(self, at: int) -> tuple[Node, int]:
        """The node of the value at ``at`` (past spaces), and where it ends."""
        text = self.text
        at = self._after_spaces(at)
        start = self._mark(at)
        opener = text[at]
        if opener == "{" or opener == "[":
            closer = "}" if opener == "{" else "]"
            items: list[Any] = []
            at = self._after_spaces(at + 1)
            while text[at] != closer:
                if opener == "{":
                    key, at = self.node(at)
                    value, at = self.node(self._after_spaces(at) + 1)  # (past the colon)
                    items.append((key, value))
                else:
                    item, at = self.node(at)
                    items.append(item)
                at = self._after_spaces(at)
                if text[at] == ",":
                    at = self._after_spaces(at + 1)
            end = self._mark(at + 1)
            if opener == "{":
                return MappingNode(MAP_TAG, items, start, end, flow_style=True), at + 1
            return SequenceNode(SEQ_TAG, items, start, end, flow_style=True), at + 1
        if opener == '"':
            token = _STRING.match(text, at).group()  # type: ignore[union-attr]
            decoded = token[1:-1] if "\\" not in token else _SCAN(token, 0)[0]
            return ScalarNode(STR_TAG, decoded, start, self._mark(at + len(token)), style='"'), at + len(token)
        token = _PLAIN.match(text, at).group()  # type: ignore[union-attr]
        return ScalarNode(implicit_tag(token), token, start, self._mark(at + len(token)), style=""), at + len(token)


def compose(text: str) -> Node:
    """The node tree of a document jsonread read, or of a List item's text from its line's start."""
    return _Composer(text).node(_LEAD.match(text).end())[0]  # type: ignore[union-attr]
