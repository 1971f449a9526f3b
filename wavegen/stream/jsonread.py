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


# A token of JSON text jsonread read, past the blanks before it: an opening bracket (1), a
# closing one (2), a comma or colon (3), a string (4), or a number, true, false or null (5).
_TOKEN = patterns.compile(r'[ \t\r\n]*+(?:([\[{])|([\]}])|([,:])|("[^"\\]*+(?:\\.[^"\\]*+)*+")|([^ \t\r\n,:\[\]{}"]++))')


class _Plain:
    """A decoder's settings for json's scanner to step over a value (its Python value unused)."""

    strict = True
    object_hook = object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = float

    def __init__(self) -> None:
        self.memo: dict[str, str] = {}


_STEP_CONTEXT: Any = _Plain()
_STEP_OVER: Any = make_scanner(_STEP_CONTEXT)

# What compose builds of a collection: the values of the keys (or indexes) it names, each as
# its own Wanted says; the others as shallow nodes (their marks and kind, no children). None:
# all of it.
Wanted = dict[str | int, "Wanted | None"]
_SHALLOW: Wanted = {}


def template_wanted(path: tuple[str, ...]) -> Wanted:
    """What the splicer reads of an object: its pod template's keys (at ``path``) and metadata."""
    wanted: Wanted = {"metadata": None}
    for key in reversed(path):
        wanted = {key: wanted}
    return wanted


def field_wanted(parts: list[tuple[int | None, str]]) -> Wanted:
    """What tree.line_of reads of an object to find a field (tree.field_parts gives the parts)."""
    wanted: Wanted = {}
    for index, key in reversed(parts):
        wanted = {key if index is None else index: wanted}
    return wanted


def compose(text: str, wanted: Wanted | None = None) -> Node:
    """The node tree of a document jsonread read, or of a List item's text from its line's
    start, with libyaml's marks (line and column of the first character, and past the last: a
    quote, a bracket), tags and styles; of a collection ``wanted`` leaves out, a shallow node."""
    at = _LEAD.match(text).end()  # type: ignore[union-attr]
    line = text.count("\n", 0, at)
    line_start = text.rfind("\n", 0, at) + 1
    # The collections open around the next token: their start, whether a mapping, the nodes
    # in them so far (a mapping's keys and values in turn), and what is wanted of them.
    open_collections: list[tuple[Position, bool, list[Any], Wanted | None]] = []
    count, rfind, match = text.count, text.rfind, _TOKEN.match
    next_wanted = wanted  # of the next value
    position = at
    while True:
        token = match(text, position)
        kind = token.lastindex  # type: ignore[union-attr]
        begin, position = token.span(kind)  # type: ignore[arg-type,union-attr]
        if kind == 3:
            continue
        breaks = count("\n", at, begin)
        if breaks:
            line += breaks
            line_start = rfind("\n", at, begin) + 1
        at = begin
        column = begin - line_start
        node: Node
        if kind == 1:
            mapping = text[begin] == "{"
            if next_wanted is not _SHALLOW:
                open_collections.append((Position(line, column), mapping, [], next_wanted))
                next_wanted = None if mapping or next_wanted is None else next_wanted.get(0, _SHALLOW)
                continue
            start = Position(line, column)
            position = _STEP_OVER(text, begin)[1]  # (past its closing bracket, on the line of that)
            breaks = count("\n", at, position)
            if breaks:
                line += breaks
                line_start = rfind("\n", at, position) + 1
            at = position
            after = Position(line, position - line_start)
            node = MappingNode(MAP_TAG, [], start, after, True) if mapping else SequenceNode(SEQ_TAG, [], start, after, True)
        elif kind == 2:
            start, mapping, inside, _ = open_collections.pop()
            if mapping:
                pairs = list(zip(inside[::2], inside[1::2], strict=True))
                node = MappingNode(MAP_TAG, pairs, start, Position(line, column + 1), True)
            else:
                node = SequenceNode(SEQ_TAG, inside, start, Position(line, column + 1), True)
        else:
            word = token.group(kind)  # type: ignore[arg-type,union-attr]
            mark, after = Position(line, column), Position(line, column + position - begin)
            if kind == 4:
                decoded = word[1:-1] if "\\" not in word else _SCAN(word, 0)[0]
                node = ScalarNode(STR_TAG, decoded, mark, after, style='"')
            else:
                node = ScalarNode(implicit_tag(word), word, mark, after, style="")
        if not open_collections:
            return node
        _, mapping, inside, around = open_collections[-1]
        inside.append(node)
        if around is None:
            next_wanted = None
        elif not mapping:
            next_wanted = around.get(len(inside), _SHALLOW)
        elif len(inside) % 2:  # (a key: its value is next)
            next_wanted = around.get(node.value, _SHALLOW)
        else:
            next_wanted = None  # (a key is next: a string, built whole)
