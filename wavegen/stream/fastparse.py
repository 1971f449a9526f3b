"""Reads common block-style documents without libyaml: a strict subset of YAML, else None.

Every document this reader accepts is one libyaml accepts too, with the same value: it
takes only block mappings and sequences, one-line plain or quoted scalars, ``|``/``|-``
literals and ``{}``/``[]``, checks indentation as it goes, and returns None for anything
else (tabs, escapes, anchors, flow collections, directives, unprintable characters...),
which then goes through libyaml. Scalars resolve through the same tables as the
reference path. The differential tests hold both paths to identical results.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ..core.model import TypedScalar
from ..core.plan import FieldTree, TemplateFields
from .nodes import BOOL_TAG, MAP_TAG, MAX_DEPTH, NULL_TAG, SEQ_TAG, STR_TAG, _LeanResolveLoader

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


# Characters libyaml's reader refuses: controls other than TAB, LF, CR and NEL, surrogates,
# U+FFFE and U+FFFF. (Listed rather than negating the allowed ranges: that class takes
# ~10 ms to compile, a cost every run would pay.)
_NOT_PRINTABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]")
# The ASCII characters the reader takes: those libyaml's reader accepts (_NOT_PRINTABLE
# matches none of them) but tab, CR and backslash, which _UNREAD turns away.
_READ_ASCII = bytes((10, *range(32, 92), *range(93, 127)))
# The parts of _UNREAD longer than a character (the others are not in _READ_ASCII).
_UNREAD_LINES = tuple(part for part in _UNREAD if len(part) > 1)


def _unreadable(text: str) -> bool:
    """Whether text holds anything in _UNREAD or a character libyaml refuses."""
    if text.isascii():
        # One C pass for all single characters, instead of a search for each and the pattern.
        return bool(text.encode("ascii").translate(None, _READ_ASCII)) or any(part in text for part in _UNREAD_LINES)
    return any(part in text for part in _UNREAD) or _NOT_PRINTABLE.search(text) is not None


# libyaml looks for the ':' of a plain key only this far (1024 characters) from the key's start.
_MAX_KEY = 1000


# Blocks open around the current one, at most: with the root and an empty "{}" or "[]"
# inside, a document the reader accepts nests at most MAX_DEPTH - 1 levels, so it needs
# no depth check of its own; deeper ones go to libyaml, which refuses them as before.
_MOST_ENCLOSING = MAX_DEPTH - 3


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


# Keys repeat across documents (name, metadata, ...): each is checked once.
_GOOD_KEYS: set[str] = set()


def _good_key(key: str) -> bool:
    """Whether a plain key reads as the string it spells, within libyaml's simple-key length."""
    if key in _GOOD_KEYS:
        return True
    if len(key) > _MAX_KEY or not _resolves_to_str(key):
        return False
    if len(_GOOD_KEYS) < 4096:  # bounded: keys come from untrusted input
        _GOOD_KEYS.add(key)
    return True


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


# A line's row: indentation, "-" and the spaces after it, a plain key, and the rest (always matches).
_ROW = re.compile(r"( *+)(?:-( ++))?(?:([A-Za-z0-9_./][A-Za-z0-9_./-]*+):(?: ++|\Z))?(.*+)", re.S)
# A row: the indentation's width, the dash's spaces, the key, the rest, the row's shape, and
# the value of a _PLAIN rest. Shapes: _BLANK (nothing, or a comment), _SCALAR (a scalar line
# of its own), _BAD_KEY (a key outside the subset), or, after a dash or a key, _EMPTY
# (nothing more), _PLAIN (a one-line plain scalar, resolved here) or _OTHER.
_Row = tuple[int, str, str, str, int, Any]
_BLANK, _SCALAR, _BAD_KEY, _EMPTY, _PLAIN, _OTHER = range(6)
# Lines repeat across the documents of a bundle ("    spec:", "      - name: app"): each
# distinct line is split once per run. Bounded, and per run only: lines may hold secret values.
_MAX_CACHED_ROWS = 1024
RowCache = dict[str, _Row]


# A line's indentation, dash and key as they repeat ("  name", "    - name"), when they end
# at the line's first ": ": the rest of a line with a known head needs no regex.
_HEADS: dict[str, tuple[int, str, str]] = {}


def _row(line: str, plains: dict[str, Any]) -> _Row:
    # One function, not several: it runs once for every distinct line of a bundle.
    cut = line.find(": ")
    head = _HEADS.get(line[:cut]) if cut > 0 else None
    if head is not None:
        column, dash, key = head
        rest = line[cut + 2 :].lstrip(" ")
    else:
        spaces, dash, key, rest = _ROW.fullmatch(line).groups("")  # type: ignore[union-attr]  # it matches every line
        column = len(spaces)
        at_cut = key and cut == column + (len(dash) + 1 if dash else 0) + len(key)
        if at_cut and len(_HEADS) < 4096 and _good_key(key):
            _HEADS[line[:cut]] = (column, dash, key)  # the regex's own split of every line with this head
    value = None
    if not dash and not key:
        shape = _BLANK if not rest or rest[0] == "#" else _SCALAR
    elif key and not _good_key(key):
        shape = _BAD_KEY
    elif not rest:
        shape = _EMPTY
    elif rest[0] not in _NOT_PLAIN_START and ": " not in rest and " #" not in rest and rest[-1] not in ": ":
        shape = _PLAIN
        value = plains.get(rest, _UNSEEN)
        if value is _UNSEEN:
            value = _resolve_plain(rest)
            if len(plains) < _MAX_CACHED_VALUES:  # bounded: values come from untrusted input
                plains[rest] = value
    else:
        shape = _OTHER
    return column, dash, key, rest, shape, value


def _rows(lines: list[str], cache: RowCache, plains: dict[str, Any]) -> list[_Row]:
    rows: list[Any] = [cache.get(line) for line in lines]
    if None in rows:
        for index, cached in enumerate(rows):
            if cached is None:
                line = lines[index]
                row = rows[index] = _row(line, plains)
                if len(cache) < _MAX_CACHED_ROWS:
                    cache[line] = row
    return rows


# Plain values repeat across documents ("1", "app", "true"); resolving each only once
# saves regex work. The cache belongs to one run (see parse): values may be secret, and
# must not outlive the bundle they came from.
_MAX_CACHED_VALUES = 2048


_UNSEEN = object()
# The fields kept of a block collection nobody reads: none (and none of anything inside it).
_UNKEPT: FieldTree = {}


# Where the reader found a pod template (see TemplateFields): its path, first row and column.
TemplateStart = tuple[tuple[str, ...], int, int]
Read = tuple[dict[Any, Any], int, TemplateStart | None]


def _read(lines: list[str], rows: list[_Row], i: int, fields: FieldTree | None) -> Read:
    """The root block mapping of a document, read row by row with an explicit stack.

    With ``fields``, block collections outside the tree are read (and checked) but not
    kept: their key maps to None, so one document's unread parts never accumulate.
    """
    count = len(lines)
    while i < count and rows[i][4] == _BLANK:
        i += 1
    if i >= count or rows[i][0]:
        raise _Bail  # an empty document, or one whose root is indented
    root_line = i
    template: TemplateStart | None = None  # the first pod template of ``fields``, if it is a block mapping
    root: dict[Any, Any] = {}
    # The open block collection (its column, itself, whether it is a sequence, the fields
    # kept of it: None for all) and those enclosing it.
    top = 0
    block: Any = root
    in_sequence = False
    kept = fields
    enclosing: list[tuple[int, Any, bool, FieldTree | None]] = []
    pending: dict[Any, Any] | None = None  # the mapping whose last key ("key:") awaits a nested value
    pending_key: Any = None
    pending_column = 0
    while i < count:
        column, dash, key, rest, shape, value = rows[i]
        if shape <= _BAD_KEY:
            if shape == _BLANK:
                i += 1
                continue
            raise _Bail  # a scalar line of its own (multi-line scalars are outside the subset), or a key
        if pending is not None:
            if column > pending_column or (column == pending_column and dash):
                # The value of "key:" is the block starting here (a sequence may sit at its key's column).
                nested: Any = [] if dash else {}
                enclosing.append((top, block, in_sequence, kept))
                if len(enclosing) > _MOST_ENCLOSING:
                    raise _Bail
                if kept is None:
                    pending[pending_key] = nested
                elif pending_key in kept:
                    kept = kept[pending_key]
                    pending[pending_key] = nested
                    if kept.__class__ is TemplateFields and not dash and template is None:
                        template = kept.path, i, column
                else:
                    kept = _UNKEPT  # read and checked, then dropped with its document
                top = column
                block = nested
                in_sequence = bool(dash)
            pending = None
        if column != top or (in_sequence and not dash):
            while top > column or (top == column and in_sequence and not dash):
                if not enclosing:
                    raise _Bail
                top, block, in_sequence, kept = enclosing.pop()
            if top != column:
                raise _Bail
        if in_sequence:
            if not key:
                if shape == _PLAIN:
                    block.append(value)
                    i += 1
                    continue
                if shape == _EMPTY or rest[0] == "-":
                    raise _Bail
                item, i = _inline(lines, rest, i, column)
                block.append(item)
                continue
            # "- key: ..." opens a mapping at the item's column.
            mapping: dict[Any, Any] = {}
            block.append(mapping)
            enclosing.append((top, block, True, kept))
            if len(enclosing) > _MOST_ENCLOSING:
                raise _Bail
            top = column = column + 1 + len(dash)
            block = mapping
            in_sequence = False
        elif dash:
            raise _Bail
        if key in block:
            raise _Bail  # the reference path reports the duplicate, with its line
        if shape == _EMPTY:
            block[key] = None  # stays null unless a deeper block follows
            pending = block
            pending_key = key
            pending_column = column
            i += 1
        elif shape == _PLAIN:
            block[key] = value
            i += 1
        else:
            block[key], i = _inline(lines, rest, i, column)
    return root, root_line, template


def parse(
    text: str,
    plain_values: dict[str, Any] | None = None,
    fields: FieldTree | None = None,
    row_cache: RowCache | None = None,
) -> Read | None:
    """The value of a block-mapping document, its root's 0-based line and where its first pod
    template of ``fields`` starts (see template_node), or None outside the subset.

    ``plain_values``: resolved plain scalars shared by the documents of one run (a
    fresh one per call when not given); the caller drops it with the bundle.
    ``fields``: keep only the block collections of this tree (see ``_read``); None keeps all.
    ``row_cache``: split lines shared by the documents of one run, like ``plain_values``.
    """
    if not text.endswith("\n") or text.startswith("%"):
        return None
    if _unreadable(text):
        return None
    lines = text.split("\n")
    lines.pop()  # the empty string after the final line break
    start = 1 if lines and (lines[0] == "---" or lines[0].startswith("--- #")) else 0
    try:
        plains = {} if plain_values is None else plain_values
        rows = _rows(lines, {} if row_cache is None else row_cache, plains)
        return _read(lines, rows, start, fields)
    except _Bail:
        return None


# Pod-template nodes for the splicer, from rows instead of libyaml (see template_node).
_Wanted = dict[str, "_Wanted"]
# Down to the annotations: what template_edits reads in full; other values get shallow nodes.
TEMPLATE_PARTS: _Wanted = {"metadata": {"annotations": {}}}


class _Position:
    """The part of a libyaml mark the splicer reads: where a node starts or ends."""

    __slots__ = ("column", "line")

    def __init__(self, line: int, column: int) -> None:
        self.line = line
        self.column = column


def _mark(line: int, column: int) -> Any:  # a Mark to the splicer; a full yaml Mark costs 3x as much
    return _Position(line, column)


class _NodeBuilder:
    """Builds libyaml-equivalent nodes for parts of a document the subset reader accepted.

    Rows are split as they are first looked at: the splicer reads the lines down to the
    template's metadata, seldom the rest of the document.
    """

    __slots__ = ("cache", "lines", "plains", "rows")

    def __init__(self, lines: list[str], cache: RowCache, plains: dict[str, Any]) -> None:
        self.lines = lines
        self.cache = cache
        self.plains = plains
        self.rows: list[_Row | None] = [None] * len(lines)

    def row(self, i: int) -> _Row:
        row = self.rows[i]
        if row is None:
            line = self.lines[i]
            row = self.rows[i] = self.cache.get(line) or _row(line, self.plains)
        return row

    def next_content(self, i: int) -> int:
        count = len(self.rows)
        while i < count and self.row(i)[4] == _BLANK:
            i += 1
        return i

    def key_rows(self, i: int, column: int) -> Iterator[int]:
        """The rows of the keys of the block mapping at ``column`` whose first key is row i."""
        rows = self.rows
        count = len(rows)
        while i < count:
            indent, dash, key, _, shape, _ = rows[i] or self.row(i)
            if shape != _BLANK:
                if indent < column or (indent == column and not dash and not key):
                    return
                if indent == column and not dash:
                    yield i
            i += 1

    def find(self, i: int, column: int, wanted: str) -> int:
        """The row of key ``wanted`` in the block mapping at ``column`` whose first key is row i (-1 if absent)."""
        return next((row for row in self.key_rows(i, column) if self.row(row)[2] == wanted), -1)

    def nested_start(self, i: int, column: int) -> tuple[int, int, bool] | None:
        """Where the block value of "key:" on row i starts: row, column and whether it is a sequence."""
        j = self.next_content(i + 1)
        if j >= len(self.rows):
            return None
        indent, dash, _, _, _, _ = self.row(j)
        if indent > column or (indent == column and dash):
            return j, indent, bool(dash)
        return None

    def value(self, i: int, column: int, key: str, wanted: _Wanted | None) -> Node:
        """The value node of the key on row i (in a block mapping at ``column``)."""
        rest = self.row(i)[3]
        line = self.lines[i]
        if not rest:
            nested = self.nested_start(i, column)
            if nested is None:
                # libyaml places an empty value right after the ':' indicator.
                colon = _mark(i, column + len(key) + 1)
                return ScalarNode(NULL_TAG, "", colon, colon)
            j, indent, is_sequence = nested
            if is_sequence:
                return SequenceNode(SEQ_TAG, [], _mark(j, indent), _mark(j + 1, 0), flow_style=False)
            return self.mapping(j, indent, wanted)
        start = len(line) - len(rest)
        stripped = rest.rstrip(" ")
        end = _mark(i, start + len(stripped))
        first = rest[0]
        if stripped == "{}":
            return MappingNode(MAP_TAG, [], _mark(i, start), end, flow_style=True)
        if stripped == "[]":
            return SequenceNode(SEQ_TAG, [], _mark(i, start), end, flow_style=True)
        if first == "|":
            return ScalarNode(STR_TAG, "", _mark(i, start), _mark(i + 1, 0), style="|")
        if first == '"':
            return ScalarNode(STR_TAG, stripped[1:-1], _mark(i, start), end, style='"')
        if first == "'":
            return ScalarNode(STR_TAG, stripped[1:-1].replace("''", "'"), _mark(i, start), end, style="'")
        return ScalarNode(_plain_tag(stripped), stripped, _mark(i, start), end, style="")

    def mapping(self, i: int, column: int, wanted: _Wanted | None) -> MappingNode:
        """The block mapping at ``column`` whose first key is on row i.

        With ``wanted`` None only the first pair is built (all that callers read of
        mappings they do not edit); otherwise every pair up to the last wanted key (every
        pair when that key is absent, or when ``wanted`` is empty), in full for wanted keys.
        The splicer reads no further: it inserts into a mapping only when a wanted key is
        absent. Keys are unique in what the reader accepted, so the first one found is the one.
        """
        pairs: list[tuple[Node, Node]] = []
        last = i
        missing = len(wanted) if wanted else -1
        for last in self.key_rows(i, column):
            key = self.row(last)[2]
            key_node = ScalarNode(STR_TAG, key, _mark(last, column), _mark(last, column + len(key)), style="")
            inner = wanted.get(key) if wanted is not None else None
            pairs.append((key_node, self.value(last, column, key, inner)))
            if wanted is None:
                break
            if inner is not None:
                missing -= 1
                if not missing:
                    break
        return MappingNode(MAP_TAG, pairs, pairs[0][0].start_mark, _mark(last + 1, 0), flow_style=False)


def _plain_tag(value: str) -> str:
    for tag, pattern in _BY_FIRST_CHAR.get(value[:1], ()):
        if pattern.match(value):
            return tag
    return STR_TAG


def template_node(
    text: str,
    path: tuple[str, ...],
    row_cache: RowCache | None = None,
    plain_values: dict[str, Any] | None = None,
    start: TemplateStart | None = None,
) -> MappingNode | None:
    """The pod template at ``path`` of a document :func:`parse` accepted, as nodes for the splicer (None: compose instead).

    Builds only what ``template_edits`` reads: the template's pairs (other values
    shallow), its metadata and annotations in full, with libyaml's marks and styles.
    ``start``: where :func:`parse` found the template (used when its path is ``path``).
    """
    lines = text.split("\n")
    lines.pop()
    builder = _NodeBuilder(lines, {} if row_cache is None else row_cache, {} if plain_values is None else plain_values)
    if start is not None and start[0] == path:
        return builder.mapping(start[1], start[2], TEMPLATE_PARTS)
    i = builder.next_content(1 if lines[0] == "---" or lines[0].startswith("--- #") else 0)
    column = 0
    for key in path:
        found = builder.find(i, column, key)
        if found < 0 or builder.row(found)[3]:
            return None
        nested = builder.nested_start(found, column)
        if nested is None or nested[2]:
            return None
        i, column, _ = nested
    return builder.mapping(i, column, TEMPLATE_PARTS)
