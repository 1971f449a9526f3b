"""Reads common block-style documents without libyaml: a strict subset of YAML, else None.

Every document this reader accepts is one libyaml accepts too, with the same value: it
takes block mappings and sequences; plain and quoted scalars (also over several lines;
double-quoted with escapes), ``|`` and ``>`` block scalars with their indicators, flow
collections (also over several lines), comments, and anchors of block collections with their
aliases and merge keys (see anchors.py); it checks indentation as it goes, and returns None
for anything else (tabs but in literal block scalars and comments, anchored scalars, tags,
directives, unprintable characters...), which then goes through libyaml. CRLF line
breaks are read as LF (libyaml's values have LF only); a last line without a line break as
if it had one, but in a block scalar.
Plain scalars resolve through resolver.py's table, held to PyYAML's by its tests; the
differential tests hold both paths to identical results.
"""

from __future__ import annotations

from _codecs import unicode_escape_decode  # (loaded with Python itself)
from _collections_abc import Callable, Iterator

from ..core.model import TypedScalar
from ..core.plan import FieldTree, TemplateFields
from . import patterns
from .resolver import BOOL_TAG, MAP_TAG, NULL_TAG, SEQ_TAG, STR_TAG, implicit_tag
from .tree import MAX_DEPTH, PROPERTY, MappingNode, Node, Position, ScalarNode, SequenceNode, field_parts

# typing only for type checkers (see core/model.py); Any stands in at run time, where it
# appears only in the type aliases below.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from typing import Any

    from .anchors import Anchors
else:
    Any = object

_TRUE_WORDS = frozenset(("yes", "true", "on", "y"))
# A quoted scalar on one line, then spaces or a comment. (Quoted bodies are written as
# "unrolled loops", [^"\\]*+(?:\\.[^"\\]*+)*+, not (?:[^"\\]|\\.)*: the same strings, matched 4x as
# fast; and possessive, as a body has one way to match: a greedy repeat keeps a state for each
# escape to backtrack to, 12.8 MB for 96,000 of them in 880 KB of JSON quoted on one line.)
_DOUBLE = patterns.compile(r'"([^"\\]*+(?:\\.[^"\\]*+)*+)"(?: *| +#.*)')
_SINGLE = patterns.compile(r"'([^']*+(?:''[^']*+)*+)'(?: *| +#.*)")
# The same, closed by anything (for the splicer's nodes; compiled on first use, patterns keeps them).
_DOUBLE_IN_FLOW = r'"([^"\\]*+(?:\\.[^"\\]*+)*+)"'
_SINGLE_IN_FLOW = r"'([^']*+(?:''[^']*+)*+)'"
# libyaml's escapes of double-quoted scalars (those with a fixed meaning; "/" is left to libyaml).
_ESCAPES = {
    "0": "\0", "a": "\a", "b": "\b", "t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r", "e": "\x1b",
    " ": " ", '"': '"', "\\": "\\", "N": "\x85", "_": "\xa0", "L": "\u2028", "P": "\u2029",
}  # fmt: skip
_ESCAPE = r"\\(?:x([0-9A-Fa-f]{2})|u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))"
# A double-quoted scalar's text whose escapes _unescape takes (code points but surrogates, none
# past U+10FFFF), for the check, which needs no value: one C pass where _unescape_codes calls
# Python once an escape (the check of a 340 KB file whose one line holds 66,000: 20 -> 4 ms).
_ESCAPES_TAKEN = (
    r"(?:[^\\]++|\\(?:[" + patterns.escape("".join(_ESCAPES)) + r"]|x[0-9A-Fa-f]{2}|u(?![dD][89a-fA-F])[0-9A-Fa-f]{4}"
    r"|U(?:0000(?![dD][89a-fA-F])[0-9A-Fa-f]{4}|000[1-9A-Fa-f][0-9A-Fa-f]{4}|0010[0-9A-Fa-f]{4})))*+"
)
# A block scalar's header: style, then indentation and chomping indicators in either order.
_BLOCK_HEADER = patterns.compile(r"([|>])(?:([1-9])([-+]?)|([-+])([1-9]?))?(?: *| +#.*)")
# Nesting a one-line flow collection may add, at most (the block levels around it leave room for it).
_FLOW_DEPTH = 16
# Characters that may begin something other than a plain scalar (or a plain scalar we do not read).
_NOT_PLAIN_START = frozenset("-?:,[]{}#&*!|>'\"%@`<= ")
# Anything that could make the text mean more than this reader understands: line breaks but
# LF (CRLF ones are made LF first, see _readable_lines), a BOM, directives and markers past the
# first line (tested with `in`: C speed). Tabs are not here: a line that holds one is refused
# by the row splitters (_row, _check_row) and the multi-line scalars, so only a literal block
# scalar's content and comments take them (libyaml keeps them there as they are).
_UNREAD = ("\r", "\x85", "\u2028", "\u2029", "\ufeff", "\n%", "\n...", "\n---")


# Characters libyaml's reader refuses: controls other than TAB, LF, CR and NEL, surrogates,
# U+FFFE and U+FFFF; the tests hold it to libyaml and _unreadable's byte tables to it.
# (Listed rather than negating the allowed ranges: that class takes ~10 ms to compile.)
_NOT_PRINTABLE = "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]"
# The Latin-1 characters the reader takes: those libyaml's reader accepts (_NOT_PRINTABLE
# matches none of them) but CR and NEL, which _UNREAD turns away.
_READ_LATIN1 = bytes((9, 10, *range(32, 127), *range(0xA0, 0x100)))
# The parts of _UNREAD longer than a character (the others are not in _READ_LATIN1), found in
# one pass: a search for each of them ("\n" first) took three times as long.
_UNREAD_LINES = patterns.compile("|".join(patterns.escape(part) for part in _UNREAD if len(part) > 1))
# The bytes of UTF-8 text that hold none of the characters _unreadable looks for: TAB, LF,
# printable ASCII, and every byte of a longer character but the first byte of those it looks
# for (0xC2: C1 controls and NEL; 0xE2: LS, PS; 0xEF: BOM, U+FFFE, U+FFFF). UTF-8 never
# writes a character's first byte inside another character.
_READ_UTF8 = bytes((9, 10, *range(32, 127), *(b for b in range(128, 256) if b not in b"\xc2\xe2\xef")))
# Those characters as UTF-8, by first byte (looked for only where that byte is): C1 controls
# and NEL; LS and PS; BOM, U+FFFE and U+FFFF.
_UNREAD_UTF8 = {0xC2: rb"\xc2[\x80-\x9f]", 0xE2: rb"\xe2\x80[\xa8\xa9]", 0xEF: rb"\xef(?:\xbb\xbf|\xbf[\xbe\xbf])"}
# A first byte found at most this often is looked at where it is: a search for each character
# it starts reads the whole text (1.4 ms each in envoy gateway's 2.5 MB of CRDs that a right
# single quote, U+2019, makes UTF-8, where 0xE2 is found 37 times); found more often, those
# searches cost less.
_FEW_FIRST_BYTES = 64


# What a caller already knows a piece's document holds none of: the bits of ``screened`` (see
# _unreadable).
SCREENED_LINES = 1  # lines but the first that start with "---", "..." or "%" (split.split_marked)
SCREENED_CHARACTERS = 2  # characters _unreadable looks for (refused_utf8 found none in the input's bytes)


def _unreadable(text: str, screened: int = 0) -> bool:
    """Whether text holds anything in _UNREAD or a character libyaml refuses (_NOT_PRINTABLE);
    ``screened``: what need not be looked for again (SCREENED_LINES, SCREENED_CHARACTERS)."""
    if screened & SCREENED_CHARACTERS:
        refused = False
    else:
        # One C pass for all single characters, instead of a search for each and _NOT_PRINTABLE,
        # whose class spans U+FFFF and looks at each character slowly (12.6 ms in chaos-mesh's
        # 2.9 MB of CRDs, whose "µ" makes them Latin-1).
        try:
            latin = text.encode("latin-1")  # ASCII, the usual document, and Latin-1: a copy
        except UnicodeEncodeError:
            refused = _refused_beyond_latin1(text)
        else:
            refused = bool(latin.translate(None, _READ_LATIN1))
    return refused or (not screened & SCREENED_LINES and _UNREAD_LINES.search(text) is not None)


def _refused_beyond_latin1(text: str) -> bool:
    """Whether text that is not Latin-1 holds one of _UNREAD's characters or one libyaml refuses."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        return True  # a surrogate
    return refused_utf8(data)


def refused_utf8(data: bytes | bytearray) -> bool:
    """Whether UTF-8 bytes hold one of _UNREAD's characters or one libyaml refuses: where an
    input's bytes hold none, none of its pieces does (SCREENED_CHARACTERS), and a piece's text
    past Latin-1 need not be encoded again to be looked at."""
    left = data.translate(None, _READ_UTF8)
    if not left:
        return False
    if left.translate(None, b"\xc2\xe2\xef"):
        return True  # a control character
    for first, characters in _UNREAD_UTF8.items():
        if first not in left:
            continue
        pattern = patterns.compile(characters)  # compiled once, when first needed (patterns keeps it)
        if left.count(first) > _FEW_FIRST_BYTES:
            if pattern.search(data) is not None:
                return True
            continue
        at = data.find(first)
        while at >= 0:
            if pattern.match(data, at) is not None:
                return True
            at = data.find(first, at + 1)
    return False


def accepts_without_content(text: str) -> bool:
    """Whether libyaml accepts a piece of markers, comments and blank lines only (see split.Piece):
    when nothing in it is unreadable (a "..." end marker last in it aside, see document_text), and
    no tab (one that starts a line is an error to libyaml). CRLF line breaks are read as LF, as
    _readable_lines reads them (helm's "# Source:" of an empty template, in a file checked out on
    Windows, sent libyaml the whole bundle and made the run import PyYAML)."""
    document = _readable_document(text)
    return document is not None and "\t" not in document


# The "..." end marker line split_stream leaves last in a piece: "..." alone or with a comment.
# (Compiled on first use: few streams hold end markers.)
_END_MARKER_LINE = r"\.\.\.(?:[ \t]+(?:#[^\n]*)?)?\n"


def document_text(text: str) -> str | None:
    """A piece's document without the "..." end marker line that ends it (some charts' templates
    end so: the document means the same without it); the text itself when its last line is no
    marker (a "..." line anywhere else is unreadable to the reader, see _UNREAD). None when the
    marker line holds what the reader does not take."""
    last = text.rfind("\n", 0, len(text) - 1) + 1  # where the last line starts
    if not last or not text.startswith("...", last):
        return text
    marker = text[last:]
    if patterns.fullmatch(_END_MARKER_LINE, marker) is None or "\t" in marker or _unreadable(marker):
        return None
    return text[:last]


# libyaml looks for the ':' of a plain key only this far (1024 characters) from the key's start.
_MAX_KEY = 1000


# Blocks open around the current one, at most: with the root and an empty "{}" or "[]"
# inside, a document the reader accepts nests at most MAX_DEPTH - 1 levels, so it needs
# no depth check of its own; deeper ones go to libyaml, which refuses them as before.
_MOST_ENCLOSING = MAX_DEPTH - 3


class _Bail(Exception):
    """The document is outside the subset; the reference composer reads it."""


def resolve_plain(value: str) -> Any:
    tag = implicit_tag(value)
    if tag == STR_TAG:
        return value
    if tag == NULL_TAG:
        return None
    if tag == BOOL_TAG:
        return value.lower() in _TRUE_WORDS
    return TypedScalar(tag, value)


# Keys repeat across documents (name, metadata, ...): each is checked once.
_GOOD_KEYS: set[str] = set()


def _good_key(key: str) -> bool:
    """Whether a plain key reads as the string it spells, within libyaml's simple-key length."""
    if key in _GOOD_KEYS:
        return True
    if len(key) > _MAX_KEY or implicit_tag(key) != STR_TAG:
        return False
    if len(_GOOD_KEYS) < 4096:  # bounded: keys come from untrusted input
        _GOOD_KEYS.add(key)
    return True


# Double-quoted text longer than this is unescaped by Python's codec where it can (see _unescape).
_DECODED_AT_ONCE = 256
# An escape Python's unicode_escape codec reads otherwise than libyaml, or not at all: any but
# \a \b \t \n \v \f \r \" \\ \x \u \U and the escaped space (octal digits, \N{...}, \e, \/ ...),
# or a surrogate's code (which libyaml refuses). Found after a backslash that an escaped one
# leaves (as in "\\\\e") too: that text only takes the way below.
_NOT_PYTHONS = r'\\(?:[^abtnvfr"\\ xuU]|u[dD][89a-fA-F]|U0000[dD][89a-fA-F])'
# The same, and the escaped space, which the codec keeps as it is: text with none of these is
# decoded as it is (looking for "\\ " apart took 0.8 ms in 880 KB of JSON with 96,000 escapes).
_NOT_PYTHONS_NOR_SPACE = r'\\(?:[^abtnvfr"\\xuU]|u[dD][89a-fA-F]|U0000[dD][89a-fA-F])'


def _unescape(body: str) -> str:
    """The value of a double-quoted scalar's text (libyaml's escapes)."""
    if "\\" not in body:
        return body
    # JSON's usual escapes by C replaces: escaped backslashes become NUL first (no text the
    # reader takes holds one), so that every backslash left starts an escape and a replace
    # makes no new one (an escaped space: go-yaml's, starting a line of a quoted scalar it
    # folded). The escapes left are taken between the NULs (istio's quoted dashboards: twice
    # as fast; one quoted over lines holds thousands of escapes, and perhaps one \U, which
    # must not send them all the slow way).
    if "\0" in body:
        return _unescape_others(body)
    if len(body) <= _DECODED_AT_ONCE:
        marked = ""
    elif patterns.compile(_NOT_PYTHONS_NOR_SPACE).search(body) is None:
        marked = body
    elif patterns.compile(_NOT_PYTHONS).search(body) is None:
        marked = body.replace("\\\\", "\0").replace("\\ ", " ")  # (an escaped space, or "\\\\ ")
    else:
        marked = ""
    if marked:
        # Only escapes Python's unicode_escape codec reads as libyaml does, but for the escaped
        # space: one C pass, instead of a replace for each kind (a quoted dashboard of 80 KB:
        # 0.6 -> 0.4 ms). Characters past U+00FF go in as \u escapes and come back.
        try:
            decoded: str = unicode_escape_decode(marked.encode("latin-1", "backslashreplace"))[0]
        except UnicodeDecodeError:
            raise _Bail from None  # a \U past U+10FFFF, or too few digits: left to libyaml
        return decoded.replace("\0", "\\") if marked is not body else decoded
    marked = body.replace("\\\\", "\0").replace('\\"', '"').replace("\\n", "\n").replace("\\ ", " ")
    if "\\" not in marked:
        return marked.replace("\0", "\\")
    return "\\".join(_unescape_others(piece) if "\\" in piece else piece for piece in marked.split("\0"))


def _unescape_others(body: str) -> str:
    """_unescape, one escape at a time."""
    if "\\x" not in body and "\\u" not in body and "\\U" not in body:
        return _unescape_single(body)
    return _unescape_codes(body)


def _unescape_single(body: str) -> str:
    """_unescape_others for text whose escapes are all one character long: split at the backslashes in C."""
    parts = body.split("\\")
    out = [parts[0]]
    index, count = 1, len(parts)
    while index < count:
        part = parts[index]
        if part:
            escaped = _ESCAPES.get(part[0])
            if escaped is None:
                raise _Bail  # one libyaml refuses, or "\\/": left to libyaml
            out.append(escaped)
            out.append(part[1:])
            index += 1
        elif index + 1 < count:
            out.append("\\")  # "\\\\": the backslash between two parts; the next part is text
            out.append(parts[index + 1])
            index += 2
        else:
            raise _Bail  # a backslash last, which the quoted patterns never leave
    return "".join(out)


def _unescape_codes(body: str) -> str:
    """_unescape for text that may hold ``\\x``, ``\\u`` or ``\\U`` escapes."""

    def one(match: re.Match[str]) -> str:
        digits = match.group(1) or match.group(2) or match.group(3)
        if digits:
            code = int(digits, 16)
            if 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
                raise _Bail  # libyaml refuses these, with its own message
            return chr(code)
        escaped = _ESCAPES.get(match.group(4))
        if escaped is None:
            raise _Bail
        return escaped

    return patterns.sub(_ESCAPE, one, body)  # compiled once, when first needed (patterns keeps it)


def _plain_start(text: str) -> bool:
    """Whether a plain scalar may start with text's first character (``-x``, ``?x`` and ``:x`` may,
    and ``<`` and ``=`` but for the merge key ``<<`` and the value key ``=``)."""
    first = text[0]
    if first not in _NOT_PLAIN_START:
        return True
    if first in "-?:":
        return len(text) > 1 and text[1] != " "
    return first in "<=" and text != "<<" and text != "="


def _flow_plain_start(text: str) -> bool:
    """Whether a plain scalar inside a flow collection may start with text's first character:
    there ``?`` and ``:`` are indicators whatever follows them."""
    return text[0] not in "?:" and _plain_start(text)


def _plain_line(text: str) -> str:
    """A plain scalar's text on one line, without a trailing comment ("" when it is not one this reader takes)."""
    cut = text.find(" #")
    if cut >= 0:
        text = text[:cut]
    text = text.rstrip(" ")
    if not text or not _plain_start(text) or ": " in text or text[-1] == ":":
        return ""
    return text


def _plain_extent(lines: list[str], rest: str, i: int, indent: int) -> tuple[str, int, int]:
    """A plain scalar whose first line's text (after a key or dash) is ``rest``: its folded text,
    and the line and column where it ends. Lines more indented than ``indent`` continue it."""
    text = _plain_line(rest)
    if not text:
        raise _Bail
    line = lines[i]
    end_line, end_column = i, len(line) - len(rest) + len(text)
    count = len(lines)
    j = i + 1
    if j < count and lines[j] and lines[j][0] != " ":
        return text, end_line, end_column  # the next line is a less indented key: the usual case
    commented = " #" in rest
    parts = [text]
    breaks = 0
    while j < count:
        line = lines[j]
        content = line.lstrip(" ")
        if not content:
            if line:
                raise _Bail  # whitespace-only lines have their own folding rules
            breaks += 1
            j += 1
            continue
        if len(line) - len(content) <= indent or content[0] == "#":
            break  # a less indented line, or a comment, ends the scalar
        # A continuation may start with any character (libyaml only looks at its indentation),
        # "- " and quotes included; only ": " or a ":" last would end the scalar (an error here).
        more = content.rstrip(" ")
        if commented or " #" in content or ": " in more or more[-1] == ":" or "\t" in more:
            raise _Bail  # text after a comment, a comment inside, a mapping value or a tab: left to libyaml
        parts.append("\n" * breaks if breaks else " ")
        parts.append(more)
        breaks = 0
        end_line, end_column = j, len(line) - len(content) + len(more)
        j += 1
    return "".join(parts), end_line, end_column


# A token of a one-line flow collection: an indicator, a quoted scalar, ": ", or a plain scalar
# (with the spaces after it). Plain ones stop at ":" and "#", which this reader leaves to libyaml.
# Compiled on first use (patterns keeps it), like the other patterns for less usual lines below.
_FLOW_TOKEN = (
    r""" *(?:([\[\]{},])|("[^"\\]*+(?:\\.[^"\\]*+)*+")|('[^']*+(?:''[^']*+)*+')|(:(?= ))|([^ ,\[\]{}:#"'][^,\[\]{}:#]*))"""
)
_INDICATOR, _DOUBLE_QUOTED, _SINGLE_QUOTED, _VALUE, _FLOW_PLAIN = range(1, 6)
_STYLE = {_DOUBLE_QUOTED: '"', _SINGLE_QUOTED: "'", _FLOW_PLAIN: ""}
_Token = tuple[int, int, int]  # kind, start, end


def _flow_tokens(text: str) -> tuple[list[_Token], int]:
    """The tokens of the flow collection that opens text, and where it closes."""
    tokens: list[_Token] = []
    position = depth = 0
    match = patterns.compile(_FLOW_TOKEN).match
    while True:
        found = match(text, position)
        if found is None:
            raise _Bail  # it does not close on this line, or holds what this reader leaves to libyaml
        kind = found.lastindex or 0
        start, end = found.span(kind)
        if kind == _FLOW_PLAIN:
            end = start + len(found.group(kind).rstrip(" "))
            position = end
        else:
            position = end
        tokens.append((kind, start, end))
        if kind == _INDICATOR:
            char = text[start]
            if char in "[{":
                depth += 1
            elif char in "]}":
                depth -= 1
                if not depth:
                    return tokens, position
        if not depth:
            raise _Bail  # it must open with a bracket


def _flow_value(text: str, tokens: list[_Token], index: int, depth: int, limit: int) -> tuple[Any, int]:
    """The value of the node whose first token is tokens[index], and the index after it."""
    kind, start, end = tokens[index]
    if kind == _FLOW_PLAIN:
        value = text[start:end]
        if not _flow_plain_start(value):
            raise _Bail
        return resolve_plain(value), index + 1
    if kind == _DOUBLE_QUOTED:
        return _unescape(text[start + 1 : end - 1]), index + 1
    if kind == _SINGLE_QUOTED:
        return text[start + 1 : end - 1].replace("''", "'"), index + 1
    if kind == _INDICATOR and text[start] in "[{":
        return _flow_collection(text, tokens, index, depth + 1, limit)
    raise _Bail


def _flow_collection(text: str, tokens: list[_Token], index: int, depth: int, limit: int) -> tuple[Any, int]:
    """The flow sequence or mapping opening at tokens[index] (level ``depth`` of at most ``limit``)."""
    if depth > limit:
        raise _Bail
    is_mapping = text[tokens[index][1]] == "{"
    closing = "}" if is_mapping else "]"
    collection: Any = {} if is_mapping else []
    index += 1
    kind, start, _ = tokens[index]
    if kind == _INDICATOR and text[start] == closing:
        return collection, index + 1
    while True:
        if is_mapping:
            key_kind, _, key_end = tokens[index]
            key, index = _flow_value(text, tokens, index, depth, limit)
            if key.__class__ is not str or key in collection or (key_kind == _FLOW_PLAIN and not _good_key(key)):
                raise _Bail  # a key that is not a string, or a duplicate
            kind, start, _ = tokens[index]
            if kind != _VALUE or start != key_end:
                raise _Bail  # no ": " right after the key
            collection[key], index = _flow_value(text, tokens, index + 1, depth, limit)
        else:
            value, index = _flow_value(text, tokens, index, depth, limit)
            collection.append(value)
        kind, start, _ = tokens[index]
        if kind != _INDICATOR:
            raise _Bail
        char = text[start]
        if char == closing:
            return collection, index + 1
        if char != ",":
            raise _Bail
        index += 1
        kind, start, _ = tokens[index]
        if kind == _INDICATOR and text[start] in "]}":
            if text[start] != closing:
                raise _Bail
            return collection, index + 1  # a trailing comma (prettier writes one over lines)


def _flow(text: str, limit: int = _FLOW_DEPTH) -> tuple[Any, int]:
    """A flow collection that opens at text's start and closes on the same line, nesting at most
    ``limit`` levels; its value and where it ends."""
    if "]" not in text and "}" not in text:
        raise _Bail  # it cannot close on this line (it goes on over lines, say): as _flow_tokens finds
    tokens, end = _flow_tokens(text)
    value, _ = _flow_collection(text, tokens, 0, 1, limit)
    return value, end


# Characters a flat flow collection (see _flat_flow) holds none of.
_NOT_FLAT = patterns.compile(r"[\[\]{}#\\]")


def _flat_item(part: str) -> Any:
    """A scalar between the commas of a flat flow collection, or _UNSEEN for one left to the tokenizer."""
    first = part[:1]
    if first == '"' or first == "'":
        body = part[1:-1]
        if len(part) < 2 or part[-1] != first or first in body:
            return _UNSEEN
        return body
    if not part or ":" in part or '"' in part or "'" in part or not _flow_plain_start(part):
        return _UNSEEN
    return resolve_plain(part)


def _flat_flow(rest: str) -> Any:
    """The value of a one-line flow collection of scalars without nesting, escapes or comments
    (``{app: x, tier: web}``, ``["--port", "80"]``) read by splitting at its commas; _UNSEEN
    for any other, which the tokenizer reads (and words). Items hold no commas: a comma
    inside quotes would be split, so such quotes make the item _UNSEEN."""
    close = rest.find("}" if rest[0] == "{" else "]")
    if close < 0:
        return _UNSEEN
    inner = rest[1:close]
    if _NOT_FLAT.search(inner) is not None:
        return _UNSEEN
    tail = rest[close + 1 :]
    if tail and tail.strip(" "):
        return _UNSEEN  # a comment or more after it: the tokenizer decides
    if not inner.strip(" "):
        # "{}", "[ ]": empty (helm's charts write "resources: {}" everywhere), as the tokenizer
        # reads them, whose pattern is then never compiled in most runs.
        return {} if rest[0] == "{" else []
    parts = inner.split(",")
    if len(parts) > 1 and not parts[-1].strip(" "):
        del parts[-1]  # "[a, b, ]": a comma may end the collection (prettier's style over lines)
    if rest[0] == "[":
        items = [_flat_item(part.strip(" ")) for part in parts]
        return _UNSEEN if _UNSEEN in items else items
    mapping: dict[str, Any] = {}
    for part in parts:
        key, colon, value = part.partition(": ")
        key = key.lstrip(" ")
        if not colon or not key or key[-1] == " " or ":" in key or '"' in key or "'" in key:
            return _UNSEEN
        if not _flow_plain_start(key) or not _good_key(key):
            return _UNSEEN
        item = _flat_item(value.strip(" "))
        if item is _UNSEEN:
            return _UNSEEN
        mapping[key] = item
    return mapping if len(mapping) == len(parts) else _UNSEEN  # a key twice: the tokenizer refuses it


def _flow_line(rest: str, room: int) -> Any:
    """A one-line flow collection and nothing after it but spaces or a comment; ``room``: the
    levels it may nest beyond its first (an empty one needs none)."""
    flat = _flat_flow(rest)
    if flat is not _UNSEEN:
        return flat
    value, end = _flow(rest, min(_FLOW_DEPTH, room + 1))
    tail = rest[end:]
    if tail and not (tail.strip(" ") == "" or (tail[0] == " " and tail.lstrip(" ")[0] == "#")):
        raise _Bail
    return value


# A quoted scalar's text up to its closing quote or the end of its line.
# (These five are compiled on first use: few documents hold such scalars.)
_DOUBLE_PART = r'[^"\\]*+(?:\\.[^"\\]*+)*+'
_SINGLE_PART = r"[^']*+(?:''[^']*+)*+"
# What may follow a quoted scalar's closing quote: spaces, or spaces and a comment.
_QUOTED_TAIL = r" *| +#.*"
# A later line of a quoted scalar that does not close it, taken whole when it ends in neither
# a space nor an escaped line break (each of which the general loop of _quoted_parts weighs):
# its indentation, then text with no closing quote or tab, the line's part of the value.
_DOUBLE_MIDDLE = r' *+([^"\\\t]*+(?:\\[^\t][^"\\\t]*+)*+)'
_SINGLE_MIDDLE = r" *+([^'\t]*+(?:''[^'\t]*+)*+)"


def _quoted_parts(lines: list[str], rest: str, i: int) -> tuple[str, int]:
    """A quoted scalar that starts on line i (``rest``) and closes on a later line, folded as
    libyaml folds it but with its escapes (or doubled quotes) as written, and the line after it.
    Like libyaml, it takes later lines at any indentation (old CRD generators write descriptions
    so); where they reach the owning block's column, see _reaches_block."""
    double = rest[0] == '"'
    part = patterns.compile(_DOUBLE_PART if double else _SINGLE_PART)
    middle = patterns.compile(_DOUBLE_MIDDLE if double else _SINGLE_MIDDLE).fullmatch
    quote = rest[0]
    text = rest[1:]
    # Escapes never reach past a line's text (a backslash ending one is taken apart below), so
    # the folded text's escapes are its lines' escapes: one unescape, not one a line.
    folded: list[str] = []
    escaped_break = False
    count = len(lines)
    j = i
    while True:
        body = part.match(text).group()  # type: ignore[union-attr]  # it matches every string
        after = text[len(body) :]
        if after[:1] == quote:
            if j == i or not patterns.fullmatch(_QUOTED_TAIL, after[1:]):
                raise _Bail  # one line (the caller's), or something after the closing quote
            folded.append(body)
            break
        if after:
            if not (double and after == "\\"):
                raise _Bail
            escaped_break = True  # a backslash ending the line: the break is dropped, not folded
        else:
            stripped = body.rstrip(" ")
            if double and stripped != body and stripped.endswith("\\"):
                raise _Bail  # trailing spaces an escape may hold: left to libyaml
            body = stripped
        folded.append(body)
        j += 1
        if not escaped_break:
            # The usual later line (a dashboard's JSON quoted whole has hundreds), folded into a
            # space, in one match: what the general steps below make of it.
            while j < count and (line := lines[j])[-1:] not in ("", " ") and (usual := middle(line)) is not None:
                part_text = usual.group(1)
                if double and part_text[:2] == "\\ ":
                    # go-yaml writes a space that starts a folded line as "\ ", which a line's
                    # start holds only as an escape: the space itself, so that the text's escapes
                    # are JSON's alone and _unescape skips its marking (Grafana's chart: 199 lines)
                    folded.append("  ")
                    folded.append(part_text[2:])
                else:
                    folded.append(" ")
                    folded.append(part_text)
                j += 1
        breaks = 0
        while j < count and lines[j] == "":
            breaks += 1
            j += 1
        if j >= count:
            raise _Bail
        line = lines[j]
        content = line.lstrip(" ")
        if not content or "\t" in content:
            raise _Bail  # spaces alone, or a tab (libyaml's folding strips those too)
        if escaped_break:
            folded.append("\n" * breaks)
            escaped_break = False
        else:
            folded.append("\n" * breaks if breaks else " ")
        text = content
    return "".join(folded), j + 1


def _quoted_lines(lines: list[str], rest: str, i: int) -> tuple[str, int]:
    """A quoted scalar that starts on line i (``rest``) and closes on a later line: its value, and the line after it."""
    text, end = _quoted_parts(lines, rest, i)
    return (_unescape(text) if rest[0] == '"' else text.replace("''", "'")), end


def _quoted_end(lines: list[str], rest: str, i: int) -> int:
    """The line after a quoted scalar that starts on line i and closes on a later line, for the
    check: its escapes matched as _ESCAPES_TAKEN matches a line's, its value never made."""
    text, end = _quoted_parts(lines, rest, i)
    if rest[0] == '"' and "\\" in text and not patterns.fullmatch(_ESCAPES_TAKEN, text):
        raise _Bail
    return end


# A quoted scalar on one line (its brackets are text, not structure; see _flow_part). The
# single-quoted one possessive: "'it''s" goes on over the line, not "'it'" closed before "'s".
_QUOTED_ON_LINE = r""""[^"\\]*+(?:\\.[^"\\]*+)*+"|'[^']*+(?:''[^']*+)*+'"""


def _flow_part(text: str, quote: str = "") -> tuple[str, int, str]:
    """A line of a flow collection without its comment (a "#" first, or after a space, outside
    quoted scalars) and the spaces after it, how many brackets it opens less those it closes,
    and the quote of a quoted scalar it leaves open at its end ("" if none). ``quote``: that of
    one an earlier line left open, which this line goes on with. No tab may be outside quoted
    scalars, nor on a line a quoted scalar runs over, and no quote inside a plain scalar (else
    _Bail: libyaml's reading of those is left to it)."""
    head = ""
    if quote:
        body = patterns.match(_DOUBLE_PART if quote == '"' else _SINGLE_PART, text).group()  # type: ignore[union-attr]
        if "\t" in text:
            raise _Bail  # (libyaml's folding strips tabs around the break as well as spaces)
        if len(body) == len(text):
            return _open_at_break(text, quote), 0, quote  # it goes on past this line too
        if text[len(body)] != quote:
            raise _Bail  # a backslash last: an escaped break
        head, text = text[: len(body) + 1], text[len(body) + 1 :]
        if text.lstrip(" ")[:1] == ":":
            raise _Bail  # a key over lines: libyaml refuses an implicit key that is not on one line
    outside = text
    if '"' in text or "'" in text:
        # Quoted scalars masked, same length (compiled once, when first needed: patterns keeps it).
        outside = patterns.sub(_QUOTED_ON_LINE, lambda quoted: "x" * len(quoted.group()), text)
    # The first quote no scalar on the line closes: one that goes on over the break.
    opened = min((at for at in (outside.find('"'), outside.find("'")) if at >= 0), default=len(outside))
    cut = 0 if outside[:1] == "#" else outside.find(" #", 0, opened)
    if cut >= 0:
        text, outside, opened = text[:cut], outside[:cut], cut
    if "\t" in outside[:opened]:
        raise _Bail
    balance = outside.count("[", 0, opened) + outside.count("{", 0, opened)
    balance -= outside.count("]", 0, opened) + outside.count("}", 0, opened)
    if opened == len(outside):
        return head + text.rstrip(" "), balance, ""
    left_open = text[opened]
    before = outside[:opened].rstrip(" ")[-1:]
    first_on_line = not before and not head  # a later line of the collection (see _flow_over_lines)
    if not (first_on_line or before in ("[", "{", ",", ":")) or "\t" in text:
        raise _Bail  # a quote inside a plain scalar, or a tab libyaml's folding would strip
    return head + text[:opened] + _open_at_break(text[opened:], left_open), balance, left_open


def _open_at_break(text: str, quote: str) -> str:
    """The part of a quoted scalar before the line break it goes on over, as libyaml folds it:
    without the spaces before the break (the next line's are stripped by the caller). A
    backslash last (an escaped break, or an escaped space before the break) is left to libyaml."""
    part = text.rstrip(" ")
    if quote == '"' and part.endswith("\\"):
        raise _Bail
    return part


def _flow_over_lines(lines: list[str], rest: str, i: int, room: int) -> tuple[Any, int]:
    """A flow collection that opens on line i (``rest``) and closes on a later line, as people
    write long argument lists by hand (``command: ["/hello",`` then ``"--port=80"]``): its
    value and the line after it. libyaml reads its later lines at any indentation (a closing
    bracket at its key's column is usual: see _reaches_block), as one line with a space for
    each break, when none is blank and each break follows "[", "{" or "," or comes before "]",
    "}" or ",", or is inside a quoted scalar (old charts write a shell command so), which folds
    it into a space: no plain scalar runs over a break (an implicit key may not, a plain value
    may but is left to libyaml with the rest), nor a quoted key. Comments, and lines empty or of
    a comment alone after "[", "{" or "," (tekton's controller writes its arguments so), are left
    out, as libyaml skips them."""
    first, depth, quote = _flow_part(rest)
    parts = [first]
    count = len(lines)
    j = i + 1
    while depth > 0:
        if j >= count:
            raise _Bail
        after_quote = quote
        content, opened, quote = _flow_part(lines[j].lstrip(" "), quote)
        between = parts[-1][-1] in "[{,"  # the break follows a bracket or a comma
        if not content:
            if not between or after_quote:
                raise _Bail  # an empty line inside a scalar (libyaml folds it in)
            j += 1
            continue
        if not between and not after_quote and content[0] not in "]},":
            raise _Bail  # the break is inside a plain scalar, or between a key and its ":"
        depth += opened
        parts.append(content)
        j += 1
    if depth or quote or j == i + 1:
        raise _Bail  # (a quote left open after the closing bracket: text after it, which libyaml refuses)
    return _flow_line(" ".join(parts), room), j


def _inline(lines: list[str], rest: str, i: int, indent: int, room: int = 0) -> tuple[Any, int]:
    """A value starting on line i after a key or dash; ``indent`` is the owning block's column,
    ``room`` the nesting levels a flow collection may still add."""
    first = rest[0]
    if first == '"':
        match = _DOUBLE.fullmatch(rest)
        if match is None:
            return _quoted_lines(lines, rest, i)
        body = match.group(1)
        return (_unescape(body) if "\\" in body else body), i + 1
    if first == "'":
        match = _SINGLE.fullmatch(rest)
        if match is None:
            return _quoted_lines(lines, rest, i)
        return match.group(1).replace("''", "'"), i + 1
    if first in "|>":
        return _block_scalar(lines, rest, i, indent)
    if first in "[{":
        try:
            return _flow_line(rest, room), i + 1
        except _Bail:
            return _flow_over_lines(lines, rest, i, room)
    if first == "!":
        return _str_tagged(lines, rest, i, indent)
    value, end_line, _ = _plain_extent(lines, rest, i, indent)
    return resolve_plain(value), end_line + 1


def _after_str_tag(rest: str) -> str:
    """What follows a ``!!str`` tag and its spaces ("" for any other tag, or nothing after it)."""
    return rest[6:].lstrip(" ") if rest[:6] == "!!str " else ""


def _str_tagged(lines: list[str], rest: str, i: int, indent: int) -> tuple[str, int]:
    """A scalar after the ``!!str`` tag, which charts write to keep a number a string
    (``value: !!str 9288``): a plain scalar's text unresolved, or a quoted scalar on its line.
    Other tags, and a tag on anything else, are left to libyaml."""
    value = _after_str_tag(rest)
    if not value:
        raise _Bail
    if value[0] in "\"'":
        text, end = _inline(lines, value, i, indent)
        if end != i + 1:
            raise _Bail  # over lines: _reaches_block would not see the quote behind the tag
        return text, end
    text, end_line, _ = _plain_extent(lines, value, i, indent)
    return text, end_line + 1


def _reaches_block(lines: list[str], rest: str, i: int, end: int, indent: int) -> bool:
    """Whether the value ``rest`` on line i, ending before line ``end``, is a quoted scalar or a
    flow collection with a later line at or left of ``indent``, its owning block's column: then
    rows alone no longer tell that block's keys and items unless they step over those lines (see Covered)."""
    return (
        end > i + 1
        and rest[0] in "\"'[{"
        and any(line and len(line) - len(line.lstrip(" ")) <= indent for line in lines[i + 1 : end])
    )


def _block_scalar(lines: list[str], header: str, i: int, indent: int) -> tuple[str | Callable[[], str], int]:
    """A ``|`` or ``>`` block scalar whose content lines follow line i."""
    match = _BLOCK_HEADER.fullmatch(header)
    if match is None:
        raise _Bail
    style = match.group(1)
    explicit = match.group(2) or match.group(5)
    chomping = match.group(3) or match.group(4)
    count = len(lines)
    j = i + 1
    following = lines[j] if j < count else ""
    if isinstance(following, _LiteralSpan):
        return following.scalar(style, explicit, chomping, indent, lines)
    content = following.lstrip(" ")
    if explicit:
        block = indent + int(explicit)
    elif j == count or (content and len(following) - len(content) <= indent):
        # Nothing more indented follows (a template that rendered no text): libyaml reads "",
        # whatever the chomping, and the line after the header goes on as its own (a tab after
        # its indentation, which libyaml refuses here, the row splitters refuse).
        return "", j
    elif following[:1] == " " and content:
        block = len(following) - len(content)  # the usual case: content right away
        if content[0] == "\t":
            raise _Bail  # libyaml refuses a tab where it looks for the indentation
    else:
        # libyaml takes the first content line's indentation, or more when a leading blank line is wider
        k, widest = j, 0
        while k < count and not lines[k].strip(" "):
            widest = max(widest, len(lines[k]))
            k += 1
        if k >= count:
            raise _Bail  # no content at all
        block = len(lines[k]) - len(lines[k].lstrip(" "))
        if widest > block or lines[k][block] == "\t":
            raise _Bail
    if block <= indent:
        raise _Bail
    if style == "|" and count - j > _LONG_BLOCK_LINES and block <= _MOST_PRECOMPILED_INDENT:
        # A long literal (a dashboard, a script): its lines found and stripped by C loops.
        pieces, after = _literal_lines(lines, j, block)
        chomping = _literal_chomping(lines, after, indent, block, chomping)
        trailing = 0  # empty lines after the last content line
        while pieces:
            last = pieces.pop()
            kept = last.rstrip("\n")
            if kept:
                trailing += len(last) - len(kept) - 1
                pieces.append(kept)
                break
            trailing += len(last)
        if not pieces:
            raise _Bail  # an empty scalar: left to libyaml
        pieces.append("\n" * (1 + trailing) if chomping == "+" else "" if chomping == "-" else "\n")
        return "".join(pieces), after  # the empty lines it stepped over are blank rows to the reader
    body: list[str] = []
    end = j  # one past the last content line
    while j < count:
        line = lines[j]
        content = line.lstrip(" ")
        if not content:
            if len(line) > block:
                if style == ">":
                    raise _Bail  # a more-indented line of spaces: left to libyaml
                body.append(line[block:])  # spaces past the indentation are content
                j += 1
                end = j
                continue
            body.append("")
            j += 1
            continue
        column = len(line) - len(content)
        if column < block:
            if column > indent:
                raise _Bail
            break
        body.append(line[block:])
        j += 1
        end = j
    if end == i + 1:
        raise _Bail  # an empty scalar: left to libyaml
    if j == count and not _spaces_end_is_outside(lines, block):
        raise _Bail  # it runs to a line of spaces wider than it without a line break: left to libyaml
    trailing = len(body) - (end - (i + 1))  # empty lines after the last content line
    del body[end - (i + 1) :]
    if style == ">" and any("\t" in line for line in body):
        raise _Bail  # a tab may make a line more indented, which changes the folding: left to libyaml
    if end == count and lines.__class__ is _OpenEnd:
        chomping = "-"  # its last line has no line break to keep
    text = "\n".join(body) if style == "|" else _fold(body)
    if chomping == "+":
        return text + "\n" * (1 + trailing), end  # keep: those empty lines are the scalar's too
    return (text if chomping == "-" else text + "\n"), end


# A literal block scalar is read by _literal_lines when more lines than this follow its header
# (a shorter one costs less line by line than joining lines for the patterns).
_LONG_BLOCK_LINES = 64
# Lines joined at most at once by _literal_lines (a dashboard's 100 KB or so).
_MOST_CHUNK_LINES = 4096


# shallower_line is precompiled up to this many spaces (hack/precompile_patterns.py): where a
# deeper one would only save time, it is not used (building it would make a run import re).
_MOST_PRECOMPILED_INDENT = 64


def shallower_line(block: int) -> str:
    """A pattern of a line break before a line that is neither empty nor indented ``block`` spaces
    or more (hack/precompile_patterns.py precompiles those of the usual indentations)."""
    return rf"\n(?! {{{block}}}|\n)"


def indented_end(text: str, at: int, block: int) -> int:
    """Where the whole lines from ``at`` (a line's start) that are empty or indented ``block``
    spaces or more end: the start of the first line that is neither, or of a last line without a
    line break.

    A search for the line break before the first other line: the search's loop looks for a line
    break alone, and the indentation is compared only there (a third faster than matching a
    repeated line pattern, which enters its repeat for every line)."""
    if not (text.startswith("\n", at) or text.startswith(" " * block, at)):
        return at
    found = patterns.compile(shallower_line(block)).search(text, at)
    if found is None:
        return max(at, text.rfind("\n") + 1)  # (a last line without a line break is not whole)
    return found.end()


def _literal_lines(lines: list[str], j: int, block: int) -> tuple[list[str], int]:
    """The lines of a literal block scalar from line j on, their indentation (``block`` spaces)
    removed, each ending with a line break, in pieces; and the first line after them (see
    _literal_extent).

    Lines are joined in chunks, growing to a bound, and matched by one pattern each: C work
    only, a short scalar in a long document never joins the document's rest, and no more
    than a chunk is copied at a time beyond the stripped lines.
    """
    count = len(lines)
    pieces: list[str] = []
    after = j
    size = _LONG_BLOCK_LINES
    while after < count:
        part = lines[after : after + size]
        part.append("")  # a line break after the last line too
        chunk = "\n".join(part)
        end, gaps = _literal_extent(chunk, 0, block)
        pieces.append(_without_indentation(chunk, 0, end, gaps, block))
        taken = chunk.count("\n", 0, end)
        del chunk
        after += taken
        if taken < len(part) - 1:
            break
        size = min(2 * size, _MOST_CHUNK_LINES)
    return pieces, after


def _literal_extent(text: str, at: int, block: int) -> tuple[int, list[tuple[int, int]]]:
    """Where the lines of a literal block scalar at ``block`` spaces of indentation that start at
    ``at`` in text end (the start of the first line it does not take), and its lines of spaces
    narrower than ``block`` (helm's templates leave them), which YAML reads as its empty lines:
    where each starts, and where the line after it does. One pattern match takes the lines
    between two such lines."""
    spaces = patterns.compile(_SPACES).match
    end = indented_end(text, at, block)
    gaps: list[tuple[int, int]] = []
    while True:
        following = spaces(text, end).end()  # type: ignore[union-attr]
        if following == end or following - end >= block or text[following : following + 1] != "\n":
            return end, gaps
        gaps.append((end, following + 1))
        end = indented_end(text, following + 1, block)


def _without_indentation(text: str, start: int, stop: int, gaps: list[tuple[int, int]], block: int) -> str:
    """text[start:stop], lines of a literal block scalar (see _literal_extent), without their
    indentation of ``block`` spaces and with its ``gaps`` empty lines."""
    parts: list[str] = []
    at = start
    for gap, resume in gaps:
        if gap >= stop:
            break
        parts += (text[at:gap], "\n")
        at = resume
    parts.append(text[at:stop])
    joined = parts[0] if len(parts) == 1 else "".join(parts)
    margin = " " * block
    if joined.startswith(margin):
        joined = joined[block:]
    return joined.replace("\n" + margin, "\n")


def _literal_chomping(lines: list[str], after: int, indent: int, block: int, chomping: str | None) -> str | None:
    """The chomping of a long literal block scalar at ``block`` spaces of indentation whose
    lines end before line ``after``, in a block mapping at ``indent``: its own, but "-" where it
    runs to a last line without a line break (no break to keep); _Bail where libyaml's rules are
    left to it."""
    if after < len(lines):
        line = lines[after]
        if len(line) - len(line.lstrip(" ")) > indent:
            raise _Bail  # less indented than the scalar, more than its key: left to libyaml
        return chomping
    if not _spaces_end_is_outside(lines, block):
        raise _Bail  # a line of spaces wider than it follows without a line break: left to libyaml
    return "-" if lines.__class__ is _OpenEnd else chomping


def _fold(body: list[str]) -> str:
    """A folded scalar's lines joined as libyaml joins them: a space between adjacent lines, a
    line break per empty line; but a more-indented line (a CEL expression's, a code sample's)
    keeps the line breaks around it."""
    parts: list[str] = []
    breaks = 0  # empty lines since the last content line
    indented: bool | None = None  # whether the last content line was more indented (None: none yet)
    for line in body:
        if not line:
            breaks += 1
            continue
        more = line[0] == " "
        if indented is None:
            parts.append("\n" * breaks)  # leading empty lines are line breaks of their own
        elif indented or more:
            parts.append("\n" * (breaks + 1))
        else:
            parts.append("\n" * breaks if breaks else " ")
        parts.append(line)
        indented = more
        breaks = 0
    return "".join(parts)


# A quoted key (no escapes), up to 8 spaces (as for plain keys, see _PLAIN_KEY), and what follows its ": ".
_QUOTED_KEY = r"""(?s)(?:"([^"\\]*)"|'([^']*+(?:''[^']*+)*+)') {0,8}:(?: +|\Z)(.*)"""
# First characters of values that are not plain scalars for sure ("-", "?" and ":" may start one).
_NOT_PLAIN_START_OR_QUOTE = frozenset("[]{}#&*!|>'\"%@`,")


# A line's row: indentation, "-" and the spaces after it, a plain key, and the rest (always matches).
# The usual key (letters, digits, "_", ".", "/", "-"): what the row pattern and the pass-through
# check's key pattern look for first.
_USUAL_KEY = r"[A-Za-z0-9_./][A-Za-z0-9_./-]*+"
_ROW = patterns.compile(rf"( *+)(?:-( ++))?(?:({_USUAL_KEY}):(?: ++|\Z))?(.*+)", patterns.DOTALL)
# Any plain key the reader takes, looked for only where the usual one is not found and a ": " or
# a ":" last is (compiled on first use; patterns keeps it). ASCII, as libyaml scans a plain scalar in
# a block: no indicator first ("-" only before a non-space: "-Xms"), then any printable
# character, ":" only before a non-space (cilium's "k8s:app", managedFields' "f:spec"), spaces
# only before a word that is no comment; kyverno's "=(name)" and "$patch" too. Up to 8 spaces may
# stand before the ":" ("key : value"): a key of _MAX_KEY characters stays within libyaml's 1024.
_PLAIN_KEY = r"(?:[A-Za-z0-9_./$()+;<=\\^~]|-(?=[!-~]))(?:[!-9;-~]++|:(?=[!-~])| ++(?=[!-\"$-9;-~]|:[!-~]))*+"
_ANY_KEY_ROW = rf"( *+)(?:-( ++))?(?:({_PLAIN_KEY}) {{0,8}}+:(?: ++|\Z))?(.*+)"
# What such a key may start with (a comment, a flow collection or a quoted key never needs the pattern).
_PLAIN_KEY_FIRST = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./$()+;<=\\^~-")


def _may_hold_plain_key(text: str) -> bool:
    """Whether text (a line's rest where the usual key was not found) may start with a plain key
    the wider pattern finds: it starts as one may, and a ": " or a ":" last is in it."""
    return text[:1] in _PLAIN_KEY_FIRST and (": " in text or text[-1] == ":")


# A row: the indentation's width, the dash's spaces, the key, the rest, the row's shape, and
# the value of a _PLAIN rest. Shapes: _BLANK (nothing, or a comment), _SCALAR (a scalar line
# of its own), _BAD_KEY (a key outside the subset), or, after a dash or a key, _EMPTY
# (nothing more), _PLAIN (a one-line plain scalar, resolved here) or _OTHER.
_Row = tuple[int, str, str, str, int, Any]
_BLANK, _SCALAR, _BAD_KEY, _EMPTY, _PLAIN, _OTHER = range(6)
_END_ROW: _Row = (0, "", "", "", _BLANK, None)
# Lines repeat across the documents of a bundle ("    spec:", "      - name: app"): each
# distinct line is split once per run. Bounded, and per run only: lines may hold secret values.
_MAX_CACHED_ROWS = 1024
# Lines and plain values longer than this are not kept for the next documents: such a line
# seldom comes again, and a row holds its text twice (the key, and the value after it): a
# dashboard's JSON quoted on one line by helm's toJson kept 72 KB a dashboard past its document.
_MAX_CACHED_CHARS = 512
RowCache = dict[str, _Row]


# A line's indentation, dash and key as they repeat ("  name", "    - name"), when they end
# at the line's first ": ": the rest of a line with a known head needs no regex.
_HEADS: dict[str, tuple[int, str, str]] = {}


def _one_line_plain(rest: str) -> bool:
    """Whether a row's non-empty rest is the usual one-line plain scalar (no indicator first, no
    ": " or " #" inside, no ":" or space last).

    A space looked for first: a search for one character runs in a tenth of the time of one for
    two, and long values hold none (a Secret's megabyte of base64: 1.6 ms less)."""
    return (
        rest[0] not in _NOT_PLAIN_START and (" " not in rest or (": " not in rest and " #" not in rest)) and rest[-1] not in ": "
    )


def _plain_value(text: str, plains: dict[str, Any]) -> Any:
    """A plain scalar's value, resolved once per run (``plains``, bounded: values come from untrusted input)."""
    value = plains.get(text, _UNSEEN)
    if value is _UNSEEN:
        value = resolve_plain(text)
        if len(plains) < _MAX_CACHED_VALUES and len(text) <= _MAX_CACHED_CHARS:
            plains[text] = value
    return value


# The merge key ``<<``, or ``!!merge <<``, as a row's key: known by identity, and no key of a
# document the reader reads (it refuses a NUL; a quoted "<<" is a string key).
_MERGE = "\x00<<"
# The merge key tagged as such (as yq writes it), of an alias: the alias and what follows it.
_TAGGED_MERGE = r"!!merge ++<<: ++(\*.*+)"


def _row(line: str, plains: dict[str, Any]) -> _Row:
    # One function, not several: it runs once for every distinct line of a bundle.
    if "\t" in line and line.lstrip(" ")[:1] != "#":
        # Outside a literal block scalar's content (never split into rows) and comments, a tab
        # may be separation, indentation libyaml refuses or text: the reader refuses the line.
        return len(line) - len(line.lstrip(" ")), "", "", line, _BAD_KEY, None
    cut = line.find(": ")
    head = _HEADS.get(line[:cut]) if cut > 0 else None
    if head is not None:
        column, dash, key = head
        rest = line[cut + 2 :].lstrip(" ")
        if rest and _one_line_plain(rest):
            # The usual line: a known head (its key was found good) and a one-line plain scalar.
            return column, dash, key, rest, _PLAIN, _plain_value(rest, plains)
    else:
        spaces, dash, key, rest = _ROW.fullmatch(line).groups("")  # type: ignore[union-attr]  # it matches every line
        if not key and _may_hold_plain_key(rest):
            spaces, dash, key, rest = patterns.fullmatch(_ANY_KEY_ROW, line, patterns.DOTALL).groups("")  # type: ignore[union-attr]
        column = len(spaces)
        at_cut = key and cut == column + (len(dash) + 1 if dash else 0) + len(key)
        if at_cut and len(_HEADS) < 4096 and _good_key(key):
            _HEADS[line[:cut]] = (column, dash, key)  # the regex's own split of every line with this head
    quoted = False
    if not key and rest[:1] in ('"', "'"):
        # Without a ":" no key (and the pattern, compiled on first use, stays uncompiled for a "- ''" item).
        match = patterns.match(_QUOTED_KEY, rest) if ":" in rest else None
        if match is not None:
            written = match.group(1) if match.group(1) is not None else match.group(2)
            key = written.replace("''", "'") if match.group(1) is None else written
            rest = match.group(3)
            quoted = True
            if not key or len(written) > _MAX_KEY:  # libyaml's limit is on the text, "''" counting 2
                return column, dash, key, rest, _BAD_KEY, None
    elif not dash and not key and (rest == "-" or rest.startswith("- #")):
        dash, rest = " ", ""  # "-" alone: the item's value follows on the next lines
    value = None
    if (dash or key) and rest[:1] == "#":
        rest = ""  # a comment after the key or dash
    if not key and rest[:2] == "!!" and (merge := patterns.fullmatch(_TAGGED_MERGE, rest)) is not None:
        return column, dash, _MERGE, merge.group(1), _OTHER, None
    if not dash and not key:
        shape = _BLANK if not rest or rest[0] == "#" else _SCALAR
    elif key and not quoted and not _good_key(key):
        if key == "<<" and rest[:1] == "*":
            return column, dash, _MERGE, rest, _OTHER, None  # the merge key, of an alias (the reader reads no other)
        shape = _BAD_KEY
    elif not rest:
        shape = _EMPTY
    elif (_one_line_plain(rest) and (text := rest)) or (rest[0] not in _NOT_PLAIN_START_OR_QUOTE and (text := _plain_line(rest))):
        # the first test is the usual one-line plain scalar; the second takes a comment after it, or "-x"
        shape = _PLAIN
        value = _plain_value(text, plains)
    else:
        shape = _OTHER
    return column, dash, key, rest, shape, value


def _rows(lines: list[str], cache: RowCache) -> list[_Row | None]:
    """The rows of lines already split in this run, None for the others (``_row_at`` splits them
    when the reader reaches them: lines inside block and multi-line scalars never are), and a
    blank row past the last (so that looking at row i + 1 needs no bounds check)."""
    rows: list[_Row | None] = list(map(cache.get, lines))
    rows.append(_END_ROW)
    return rows


def _row_at(rows: list[_Row | None], lines: list[str], i: int, cache: RowCache, plains: dict[str, Any]) -> _Row:
    """Row i, split now (and kept for the next documents while the cache has room)."""
    line = lines[i]
    row = rows[i] = _row(line, plains)
    if len(cache) < _MAX_CACHED_ROWS and len(line) <= _MAX_CACHED_CHARS:
        cache[line] = row
    return row


# Plain values repeat across documents ("1", "app", "true"); resolving each only once
# saves regex work. The cache belongs to one run (see parse): values may be secret, and
# must not outlive the bundle they came from.
_MAX_CACHED_VALUES = 2048


_UNSEEN = object()
# The fields kept of a block collection nobody reads: none (and none of anything inside it).
_UNKEPT: FieldTree = {}


# Where the reader found a pod template (see TemplateFields): its path, first row and column.
TemplateStart = tuple[tuple[str, ...], int, int]
# The later lines [start, end) of each value over lines that reach its block's column or left
# of it (libyaml takes a quoted scalar's or flow collection's lines there): by indentation they
# would look like keys or items of that block, so template_node and field_line step over them
# as over blank lines; list_item_lines may be used only where there are none.
Covered = tuple[tuple[int, int], ...]
# The value, the root's line, where the pod template starts, whether some of the text was
# only shaped, not checked (flow collections nobody reads): then libyaml must check it, the
# lines rows must step over to tell the document's structure (see Covered), and whether the
# document defines anchors (ANCHORED) or uses them (ALIASED: an alias or a merge key, libyaml's
# path's has_alias): then rows are no map of its values, and its lines and template are libyaml's.
# PARSED_ONLY: libyaml's parser accepts the text, but its composer or libyaml's path refuses it or
# reads another value (an anchor defined twice, an undefined or recursive alias, a merge of no
# mapping, too many nodes expanded): good to check a document passed through, not to read one.
Read = tuple[dict[Any, Any], int, TemplateStart | None, bool, Covered, int]
ANCHORED, ALIASED, PARSED_ONLY = 1, 2, 4


def _copied(value: Any) -> Any:
    """A flow collection's value, new: documents must not share what they hold."""
    if value.__class__ is dict:
        return {key: _copied(item) for key, item in value.items()}
    if value.__class__ is list:
        return [_copied(item) for item in value]
    return value


def _flow_known(rest: str, room: int, known: dict[str, Any]) -> Any:
    """A one-line flow collection's value, the same text parsed once per run (``known``): shared
    with the cache when ``room`` allows caching, so copy it before keeping it."""
    if room < _FLOW_DEPTH:
        return _flow_line(rest, room)
    value = known.get(rest, _UNSEEN)
    if value is _UNSEEN:
        value = _flow_line(rest, room)
        if len(known) < _MAX_CACHED_VALUES:  # bounded: values come from untrusted input
            known[rest] = value
    return value


def _flow_value_of(rest: str, room: int, known: dict[str, Any]) -> Any:
    """A one-line flow collection's value, a new one (see _flow_known)."""
    value = _flow_known(rest, room, known)
    return _copied(value) if room >= _FLOW_DEPTH else value


def _flow_value_at(lines: list[str], rest: str, i: int, room: int, known: dict[str, Any]) -> tuple[Any, int]:
    """The value of the flow collection that opens on line i (``rest``), a new one, and the line
    after it: on its line (see _flow_value_of), else over several (see _flow_over_lines)."""
    try:
        return _flow_value_of(rest, room, known), i + 1
    except _Bail:
        return _flow_over_lines(lines, rest, i, room)


def _flow_read(rest: str, room: int, known: dict[str, Any]) -> bool:
    """Whether the reader reads a flow collection nobody keeps, and so checks it: reading one
    costs less than libyaml's pass over the whole document that shaping it would need."""
    try:
        _flow_known(rest, room, known)  # nothing keeps the value: no copy
    except _Bail:
        return False
    return True


# A quoted scalar where a flow collection's token starts, kept to its one line: what libyaml
# reads as a quoted scalar there too.
_QUOTED_TOKEN = r"""((?:[\[{,]|: ) *)(?:"[^"\\]*+(?:\\.[^"\\]*+)*+"|'[^']*+(?:''[^']*+)*+')"""


def _quoted_as_x(token: re.Match[str]) -> str:
    return token.group(1) + "x"


def _flow_shaped(rest: str, room: int) -> bool:
    """Whether a flow collection nobody reads surely ends on its line (libyaml checks the rest)."""
    if '"' in rest or "'" in rest:
        rest = patterns.sub(_QUOTED_TOKEN, _quoted_as_x, rest)  # its brackets and quotes are text, not structure
        if '"' in rest or "'" in rest:
            return False
    if "#" in rest or rest.rstrip(" ")[-1] not in "]}":
        return False
    if "*" in rest or "&" in rest or "!" in rest:
        return False  # an alias, anchor or tag: what libyaml's parser passes, the reference composer may refuse
    if "{" in rest and "," in rest:
        return False  # a mapping may hold a key twice: an error the reference path reports, libyaml does not
    opens = rest.count("[") + rest.count("{")
    return opens == rest.count("]") + rest.count("}") and opens <= min(_FLOW_DEPTH, room + 1)


def _anchors(lines: list[str]) -> Anchors:
    """A document's anchors, the first time it has one: the module is imported then (see anchors.py)."""
    from .anchors import Anchors

    return Anchors(lines, _Bail)


def _read(
    lines: list[str], rows: list[_Row | None], i: int, fields: FieldTree | None, known: dict[str, Any], cache: RowCache
) -> Read:
    """The root block mapping of a document, read row by row with an explicit stack.

    With ``fields``, block collections outside the tree are read (and checked) but not
    kept: their key maps to None, so one document's unread parts never accumulate. An
    anchored one is kept whole wherever it is: an alias may stand for it inside the tree.
    """
    count = len(lines)
    while i < count and (rows[i] or _row_at(rows, lines, i, cache, known))[4] == _BLANK:
        i += 1
    if i >= count or rows[i][0]:  # type: ignore[index]  # split by the loop above
        raise _Bail  # an empty document, or one whose root is indented
    root_line = i
    template: TemplateStart | None = None  # the first pod template of ``fields``, if it is a block mapping
    shaped = False
    covered: list[tuple[int, int]] = []  # see Covered
    root: dict[Any, Any] = {}
    # The open block collection (its column, itself, whether it is a sequence, the fields
    # kept of it: None for all) and those enclosing it.
    top = 0
    block: Any = root
    in_sequence = False
    kept = fields
    enclosing: list[tuple[int, Any, bool, FieldTree | None]] = []
    pending: Any = None  # the mapping (or sequence) whose last key ("key:") awaits a nested value
    pending_key: Any = None
    pending_column = 0
    pending_anchor: str | None = None  # the anchor of that value ("key: &name")
    anchors: Anchors | None = None
    while i < count:
        column, dash, key, rest, shape, value = rows[i] or _row_at(rows, lines, i, cache, known)
        if shape <= _BAD_KEY:
            if shape == _BLANK:
                i += 1
                continue
            if shape == _SCALAR and pending is not None and column > pending_column:
                # "key:" (or "-") with its value on the next line: a scalar or a flow collection
                if (rest[0] in "|>-?:" and not _plain_start(rest)) or pending_anchor is not None:
                    raise _Bail
                pending[pending_key], end = _inline(lines, rest, i, pending_column, _MOST_ENCLOSING - len(enclosing))
                if _reaches_block(lines, rest, i, end, pending_column):
                    covered.append((i + 1, end))
                i = end
                pending = None
                continue
            raise _Bail  # a scalar line of its own, or a key outside the subset
        if pending is not None:
            # After "-" alone, the next item or less leaves the item null; after "key:", a line no
            # deeper (but for a sequence at the key's column) leaves the value null.
            if column > pending_column or (column == pending_column and dash and pending.__class__ is dict):
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
                elif pending.__class__ is list:
                    pending[pending_key] = nested  # the item of a "-" alone (its key is an index)
                else:
                    kept = _UNKEPT  # read and checked, then dropped with its document
                if pending_anchor is not None:
                    anchors.define(pending_anchor, nested)  # type: ignore[union-attr]  # made with the anchor
                    kept = None  # read whole: an alias may stand for it where the planner reads it
                top = column
                block = nested
                in_sequence = bool(dash)
            elif pending_anchor is not None:
                anchors.define(pending_anchor, None)  # type: ignore[union-attr]  # made with the anchor
            pending = None
            pending_anchor = None
        if column != top or (in_sequence and not dash):
            while top > column or (top == column and in_sequence and not dash):
                if not enclosing:
                    raise _Bail
                top, block, in_sequence, kept = enclosing.pop()
            if top != column:
                raise _Bail
        if in_sequence:
            if not key:
                if shape == _PLAIN and (
                    (following := rows[i + 1] or _row_at(rows, lines, i + 1, cache, known))[4] != _SCALAR
                    or following[0] <= column
                ):
                    block.append(value)
                    i += 1
                    continue
                if shape == _EMPTY:
                    # "-" alone: the item is the block or scalar on the next lines (null without one)
                    block.append(None)
                    pending = block
                    pending_key = len(block) - 1
                    pending_column = column
                    i += 1
                    continue
                if rest[0] in "&*":
                    if anchors is None:
                        anchors = _anchors(lines)
                    if rest[0] == "&":
                        # "- &name": the item is the block on the next lines (null without one)
                        block.append(None)
                        pending = block
                        pending_key = len(block) - 1
                        pending_column = column
                        pending_anchor = anchors.name(rest)
                    else:
                        block.append(anchors.target(rest, block, enclosing))
                    i += 1
                    continue
                if rest[0] == "-" and not _plain_start(rest):
                    raise _Bail
                if rest[0] in "[{":
                    item, end = _flow_value_at(lines, rest, i, _MOST_ENCLOSING - len(enclosing), known)
                else:
                    item, end = _inline(lines, rest, i, column, _MOST_ENCLOSING - len(enclosing))
                if _reaches_block(lines, rest, i, end, column):
                    covered.append((i + 1, end))
                i = end
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
        elif shape == _PLAIN and (
            (following := rows[i + 1] or _row_at(rows, lines, i + 1, cache, known))[4] != _SCALAR or following[0] <= column
        ):
            block[key] = value  # the usual case: the next line is no continuation of the scalar
            i += 1
        elif rest[0] in "[{":
            room = _MOST_ENCLOSING - len(enclosing)
            end = i + 1
            if kept is not None and key not in kept:
                block[key] = None  # dropped with its document, like an unread block
                if not _flow_read(rest, room, known):
                    if _flow_shaped(rest, room):
                        shaped = True  # libyaml checks it
                    else:
                        end = _flow_over_lines(lines, rest, i, room)[1]  # read, so checked
            else:
                block[key], end = _flow_value_at(lines, rest, i, room, known)
            if _reaches_block(lines, rest, i, end, column):
                covered.append((i + 1, end))
            i = end
        elif rest[0] in "&*":
            if anchors is None:
                anchors = _anchors(lines)
            if rest[0] == "&":
                # "key: &name": like "key:", the value a block on the next lines, else null
                block[key] = None
                pending = block
                pending_key = key
                pending_column = column
                pending_anchor = anchors.name(rest)
            elif key is _MERGE:
                anchors.merge(block, anchors.target(rest, block, enclosing))
            else:
                block[key] = anchors.target(rest, block, enclosing)
            i += 1
        else:
            block[key], end = _inline(lines, rest, i, column, _MOST_ENCLOSING - len(enclosing))
            if _reaches_block(lines, rest, i, end, column):
                covered.append((i + 1, end))
            i = end
    if anchors is None:
        return root, root_line, template, shaped, tuple(covered), 0
    if pending_anchor is not None:
        anchors.define(pending_anchor, None)  # (so that one defined twice is still found)
    anchors.apply()
    flag = PARSED_ONLY if anchors.parsed_only else ALIASED if anchors.used else ANCHORED
    return root, root_line, template, shaped, tuple(covered), flag


class _OpenEnd(list[str]):
    """The lines of a document whose last line has no line break (a file's last document, as
    editors may save it): a block scalar that runs to that line ends without one whatever its
    chomping (see _block_scalar); nothing else read changes."""

    __slots__ = ()


class _SpacesEnd(list[str]):
    """The lines of a document whose last line is spaces without a line break (an editor's
    indentation left at the end of a file, a helm template's last line), that line left out, and
    its width: it holds nothing to read. A block scalar that runs to it reads as if it were not
    there when it is no wider than the scalar's indentation (libyaml's scanner stops at the
    stream's end before taking it: see _spaces_end_is_outside); a wider one would be content,
    and the scalar is declined."""

    __slots__ = ("width",)
    width: int


def _spaces_end_is_outside(lines: list[str], block: int) -> bool:
    """Whether a block scalar at ``block`` spaces of indentation that runs to the end of lines
    reads as if the document ended there: not so where lines end with a line of spaces wider
    than that, without a line break (see _SpacesEnd)."""
    return lines.__class__ is not _SpacesEnd or lines.width <= block


def _readable_document(text: str, screened: int = 0) -> str | None:
    """A piece's document (see document_text) with CRLF line breaks read as LF; None when it
    holds what the reader does not take (see _unreadable: a CR alone, say, a line break too to
    libyaml). For _readable_lines and accepts_without_content."""
    first_break = text.find("\n")
    if first_break > 0 and text[first_break - 1] == "\r":
        # A document saved with CRLF line breaks (on Windows): made LF before it is looked at,
        # not after _unreadable found its first CR (a look and a copy less: the mix with CRLF, 3%).
        text = _lf_only(text)
    document = document_text(text)
    if document is None or _unreadable(document, screened):
        if "\r\n" not in text:
            return None
        # Looked for only now: the usual document has no CR, and _unreadable found none
        # (CRLF past an LF first line: line breaks of both kinds).
        document = document_text(_lf_only(text))
        if document is None or _unreadable(document, screened):
            return None
    return document


def _readable_lines(
    text: str, screened: int = 0, shared: bool = False, spans: list[_LiteralSpan] | None = None, holed: bool = False
) -> list[str] | None:
    """The lines of a piece's document (an end marker last in it left out, see document_text),
    for parse and check_passed_through; None when the piece holds what neither takes: a
    directive, anything _unreadable finds, a last line without a line break that is a marker.
    CRLF line breaks are read as LF: libyaml gives the same values and marks (a CR last on a
    line moves no column the splicer uses). ``shared``: see _shared_lines; with ``spans`` too,
    the lines of long literal block scalars are left unsplit, each such scalar added to it (see
    _LiteralSpan). With ``holed`` too, in a document past _DEFERRED_CHARS, and their values
    are left unmade (see parse's ``defer_data``)."""
    if text.startswith("%"):
        return None
    ending: type[list[str]] = list  # or how the document ends without a line break
    if not text.endswith("\n"):
        cut = text.rfind("\n") + 1
        last = text[cut:]
        if last.startswith("..."):
            return None  # left to libyaml: rules of its own at the end of a stream
        if last.strip(" "):
            ending = _OpenEnd
            text += "\n"
        else:
            ending = _SpacesEnd
            spaces = len(text) - cut
            text = text[:cut]
    document = _readable_document(text, screened)
    if document is None:
        return None
    if shared and len(document) > _SHARED_LINES_CHARS:
        lines = _shared_lines(document) if spans is None else _holed_lines(document, spans, holed)
    elif holed and spans is not None and len(document) > _DEFERRED_CHARS:
        lines = _holed_lines(document, spans, True, shared=False)
    else:
        lines = document.split("\n")
    lines.pop()  # the empty string after the final line break
    if ending is _SpacesEnd:
        spaces_end = _SpacesEnd(lines)
        spaces_end.width = spaces
        return spaces_end
    return lines if ending is list else ending(lines)


# A ConfigMap read with parse's ``defer_data`` that is longer than this has its long literals
# read from its text, their values left unmade (smaller ones make theirs in microseconds).
_DEFERRED_CHARS = 8 * 1024

# A document the reader reads that is longer than this has its lines split a part of about
# _SHARED_PART_CHARS at a time, equal lines made one object (see _shared_lines). (Parts of 64 KiB
# left 0.25 MB more of the allocator's memory in use on Envoy Gateway's add-ons than 16 KiB.)
_SHARED_LINES_CHARS = 64 * 1024
_SHARED_PART_CHARS = 16 * 1024


def _shared_lines(document: str) -> list[str]:
    """``document.split("\\n")``, each line equal to an earlier one the earlier one's object.

    A line is a Python object of 49 bytes beside its text: a ConfigMap of dashboards (Envoy
    Gateway's add-ons: 9,400 lines, of which 1,250 distinct) held 750 KB of lines for 300 KB
    of text while it was read, more than libyaml's load of it takes in all. Split a part at a
    time, no more than one part's lines are apart at once; the map of lines seen is dropped
    before the value is built."""
    lines: list[str] = []
    _extend_shared(lines, {}, document, 0, len(document))
    return lines


def _extend_shared(lines: list[str], seen: dict[str, str] | None, document: str, start: int, stop: int) -> None:
    """Adds ``document[start:stop].split("\\n")`` to lines, a part at a time, each line equal to
    one in ``seen`` that one's object (see _shared_lines); without ``seen``, split as they are."""
    if seen is None:
        lines += document[start:stop].split("\n")
        return
    while True:
        end = document.find("\n", start + _SHARED_PART_CHARS, stop)
        if end < 0:
            end = stop
        part = document[start:end].split("\n")
        lines.extend(map(seen.setdefault, part, part))
        if end == stop:
            return
        start = end + 1


# A literal block scalar's header last on its line ("data.json: |-"): where _holed_lines looks
# for long ones, after a key or a dash and spaces (compiled on first use; patterns keeps it). Its first
# character is a literal, which _sre looks for quickly; text full of ":" (JSON) made a pattern
# that starts with ": " ten times slower.
_LITERAL_HEADER = r"\|[-+]?\n"
_SPACES = r" *+"


class _LiteralSpan(str):
    """The first line of a long literal block scalar whose lines _holed_lines left in the
    document's text: "#", a comment line, to anything that reads it as a line, as its other
    lines are; and where its text is.

    A dashboard of 300 KB is 9,400 lines, each a Python object split from the text, most of
    them joined again to strip their indentation (see _literal_lines). Left in the text, the
    scalar is read with one pattern match and one replace. Only _block_scalar, reading it from
    its header, takes that text (``used``): when the header was no such thing (text inside a
    quoted scalar, say), something else read these lines as comments, and :func:`parse` reads
    the document again, its lines split.
    """

    document: str
    start: int  # where its first line starts in the document
    end: int  # where the line after its last starts (the pattern took its empty lines too)
    block: int  # its indentation
    after: int  # the index of the line after it
    # Its lines of spaces narrower than its indentation, empty lines of the scalar: where each
    # starts, and where the line after it does.
    gaps: list[tuple[int, int]]
    used: bool
    # Whether its value is left unmade (its bound made(): see parse's ``defer_data``), and
    # where the value ends.
    defer: bool
    cut: int

    def scalar(
        self, style: str, explicit: str | None, chomping: str | None, indent: int, lines: list[str]
    ) -> tuple[str | Callable[[], str], int]:
        """What _block_scalar gives for the header above: what _literal_lines finds, as its long-literal path takes it."""
        if style != "|" or explicit or self.block <= indent:
            raise _Bail  # read otherwise: parse reads the lines split (see above)
        document, start, end, block = self.document, self.start, self.end, self.block
        chomping = _literal_chomping(lines, self.after, indent, block, chomping)
        # Its empty lines last (spaces no wider than the indentation) end the value as chomping says.
        stop = end
        while True:
            line_start = max(document.rfind("\n", start, stop - 1) + 1, start)
            if stop - 1 - line_start > block:
                break  # (a longer line holds more than the indentation: content)
            stop = line_start  # (the first line has content: the loop ends there at the latest)
        cut = end if chomping == "+" else stop if not chomping else stop - 1
        self.used = True
        if self.defer:
            self.cut = cut
            return self.made, self.after
        return _without_indentation(document, start, cut, self.gaps, block), self.after

    def made(self) -> str:
        """The value scalar() left unmade (see parse's ``defer_data``)."""
        return _without_indentation(self.document, self.start, self.cut, self.gaps, self.block)


def _holed_lines(document: str, spans: list[_LiteralSpan], defer: bool, shared: bool = True) -> list[str]:
    """_shared_lines(document) (without ``shared``, its lines split as they are), but for each
    literal block scalar of more than _LONG_BLOCK_LINES lines that _literal_lines would take
    whole, a _LiteralSpan (its value left unmade with ``defer``) and "#" lines in place of its
    lines, the span added to ``spans``."""
    header = patterns.compile(_LITERAL_HEADER).search
    spaces = patterns.compile(_SPACES).match
    seen: dict[str, str] | None = {} if shared else None
    lines: list[str] = []
    done = 0  # the text before this is in lines
    found = header(document)
    while found is not None:
        start = found.end()
        before = document[max(found.start() - 9, 0) : found.start()]  # ("key:  |-" has more spaces)
        if before[-1:] != " " or not before.rstrip(" ").endswith((":", "-")):
            found = header(document, start)
            continue
        block = spaces(document, start).end() - start  # type: ignore[union-attr]  # (it matches everywhere)
        if not block or block > _MOST_PRECOMPILED_INDENT or document[start + block : start + block + 1] in ("\n", "\t"):
            found = header(document, start)  # no content right away, or indented past the patterns: as the lines say
            continue
        end, gaps = _literal_extent(document, start, block)
        count = document.count("\n", start, end)
        if count > _LONG_BLOCK_LINES:
            _extend_shared(lines, seen, document, done, start)
            lines.pop()  # (the empty string after the header's line break)
            span = _LiteralSpan("#")
            span.document, span.start, span.end, span.block, span.gaps = document, start, end, block, gaps
            span.after = len(lines) + count
            span.used = False
            span.defer = defer
            spans.append(span)
            lines.append(span)
            lines += ["#"] * (count - 1)
            done = end
        found = header(document, end)
    _extend_shared(lines, seen, document, done, len(document))
    return lines


def _lf_only(text: str) -> str:
    """Text with its CRLF line breaks made LF (see _readable_lines)."""
    return text.replace("\r\n", "\n") if "\r" in text else text


def _document_lines(text: str) -> list[str]:
    """The lines _readable_lines gives for a document :func:`parse` accepted, without its checks
    (an _OpenEnd when its last line, not of spaces alone, has no line break)."""
    lines = _document_body(text).split("\n")
    if not lines[-1]:
        lines.pop()  # the empty string after the final line break
    elif lines[-1].strip(" "):
        return _OpenEnd(lines)
    return lines


def _document_body(text: str) -> str:
    """A piece's document as _document_lines splits it: LF line breaks, an end marker left out."""
    text = _lf_only(text)
    return document_text(text) or text


def _body_start(lines: list[str]) -> int:
    """The document's first line after its own "---" marker line, if it starts with one (spaces
    and a comment may follow the marker: hand-written files have "--- " and "---  # x")."""
    if not lines or not lines[0].startswith("---"):
        return 0
    tail = lines[0][3:]
    return 1 if not tail or (tail[0] == " " and tail.lstrip(" ")[:1] in ("", "#")) else 0


def parse(
    text: str,
    plain_values: dict[str, Any] | None = None,
    fields: FieldTree | None = None,
    row_cache: RowCache | None = None,
    screened: int = 0,
    defer_data: bool = False,
) -> Read | None:
    """The value of a block-mapping document, its root's 0-based line, where its first pod
    template of ``fields`` starts (see template_node), whether libyaml must still check the
    text (a flow collection outside ``fields`` was only shaped), the lines rows must step
    over (see Covered), and whether it defines or uses anchors (ANCHORED, ALIASED, PARSED_ONLY:
    see Read); None outside the subset.

    ``plain_values``: resolved plain scalars shared by the documents of one run (a
    fresh one per call when not given); the caller drops it with the bundle.
    ``fields``: keep only the block collections of this tree (see ``_read``); None keeps all.
    ``row_cache``: split lines shared by the documents of one run, like ``plain_values``.
    ``screened``: see _unreadable.
    ``defer_data``: a ConfigMap's long literal values under ``data`` are left unmade, its
    ``data`` a TextData, where every other value of the document is as without it (for a
    caller that keeps only the ConfigMap's stored form: nothing else may hold them); in a
    List, those of its ConfigMap items.
    """
    spans: list[_LiteralSpan] = []
    lines = _readable_lines(text, screened, True, spans, defer_data)
    if lines is None:
        return None
    plains = {} if plain_values is None else plain_values
    cache = {} if row_cache is None else row_cache
    read = _read_lines(lines, fields, plains, cache)
    if spans:
        if read is None or not all(span.used for span in spans):
            # Lines of a literal span were read as lines, or the reader declined: read them split.
            lines = _readable_lines(text, screened, shared=True)
            assert lines is not None  # (the same text)
            read = _read_lines(lines, fields, plains, cache)
        elif defer_data and not _data_deferred(read, len(spans)):
            # (each span read gave one value left unmade: every span's defer follows defer_data)
            return parse(text, plains, fields, cache, screened)  # a long literal elsewhere: made, as it is read
    return read


def _data_deferred(read: Read, deferred: int) -> bool:
    """Whether the ``deferred`` values left unmade are all of the ``data`` of the read body
    (or of the ConfigMaps among a List's items), of strings to strings (the reader's keys
    are: it declines any other), and no anchor may have copied one: then each such ``data``
    is made a TextData."""
    body, anchored = read[0], read[5]
    if anchored:
        return False
    items = body.get("items")
    if items.__class__ is list and str(body.get("kind")).endswith("List"):
        owners = [item for item in items if item.__class__ is dict and item.get("kind") == "ConfigMap"]
    else:
        owners = [body]
    holding = []
    found = 0
    for owner in owners:
        data = owner.get("data")
        if data.__class__ is not dict:
            continue
        unmade = 0
        others = False
        for value in data.values():
            if getattr(value, "__func__", None) is _LiteralSpan.made:
                unmade += 1
            elif value.__class__ is not str:
                others = True
        if unmade:
            if others:
                return False  # (a value the stored form reads another way, or refuses)
            holding.append(owner)
            found += unmade
    if found != deferred:
        return False
    from ..core.textdata import TextData  # (imported only where there is one to make)

    for owner in holding:
        owner["data"] = TextData(owner["data"])
    return True


def _read_lines(lines: list[str], fields: FieldTree | None, plains: dict[str, Any], cache: RowCache) -> Read | None:
    try:
        return _read(lines, _rows(lines, cache), _body_start(lines), fields, plains, cache)
    except _Bail:
        return None


# Checking a document nobody reads (a CRD, a Service): that libyaml accepts it, nothing more.
# Without values to build (and no duplicate keys to find: libyaml's parser allows them),
# a line needs only its indentation and shape, each distinct line classified once per run,
# and the lines inside block scalars are stepped over by their indentation alone.
# A check row: the line's indentation (-1 for a blank line or a comment), the step a key takes
# whose value is on its line (_S_DONE; _S_PLAIN: the next line may continue it), a block scalar
# (_S_BLOCK) or a block on the next lines (_S_OPEN), else _S_MORE, the line's kind, the column
# of its key or value, the kind of that value, and where the value starts.
CheckRow = tuple[int, int, int, int, int, int]
CheckCache = dict[str, CheckRow]
# Kinds: the dashes last (``kind >= _C_DASH``), the line nobody here reads among them, then
# an item whose line opens more sequences ("- - x", "- - key: x", as Argo Workflows write steps).
_C_BLANK, _C_KEY, _C_SCALAR, _C_DASH, _C_DASH_KEY, _C_DASH_ALONE, _C_OTHER, _C_DASHES, _C_DASHES_KEY = range(9)
# (_V_ANCHOR only between _check_value and _check_row, which makes it a row's _V_EMPTY or a dash alone.)
_V_EMPTY, _V_PLAIN, _V_DONE, _V_BLOCK, _V_QUOTED, _V_OTHER, _V_FLOW, _V_ANCHOR = range(8)
_S_MORE, _S_DONE, _S_PLAIN, _S_OPEN, _S_BLOCK = range(5)
_BLANK_CHECK_ROW: CheckRow = (-1, _S_MORE, _C_BLANK, 0, _V_EMPTY, 0)
# A line's indentation and plain key, and the spaces after its ":" (the rest is its value).
_KEY_LINE = patterns.compile(rf"( *+)({_USUAL_KEY}):(?: ++|\Z)")
_ANY_KEY_LINE = rf"( *+)({_PLAIN_KEY}) {{0,8}}+:(?: ++|\Z)"  # where the usual key is not found (see _ANY_KEY_ROW)
# The usual lines of all, as _check_row's rules classify them, in one pattern: a usual key
# with nothing after its ":" (a block follows), a plain scalar or a quoted one without escapes,
# a dash and a plain scalar, or a plain scalar alone (a continuation line), where the plain
# scalar holds no ":" (nor a tab) and starts with none of _NOT_PLAIN_START but "<" and "="
# (plain to the check: see _check_value). A comment may follow it, and spaces trail.
_SAFE_PLAIN = r"[^-?:,\[\]{}#&*!|>'\"%@` \t][^:\t]*+"
# A quoted scalar with no escape in it (nor a quote doubled), and what may follow it; no tab
# (the rules leave a line with a tab outside a comment line to libyaml).
_SIMPLY_QUOTED = r"""(?:"[^"\\\t]*+"|'[^'\t]*+')(?: *+| ++#[^\t]*+)"""
# Compiled by each check (patterns keeps it), not here: a run that passes nothing through (one
# Deployment) need not compile it.
_USUAL_LINE = rf"( *+)(?:({_USUAL_KEY}):(?:( ++){_SAFE_PLAIN}|( ++){_SIMPLY_QUOTED})?|(- ++)?{_SAFE_PLAIN})"
_Usual = Callable[[str], "re.Match[str] | None"]
# The step of a key line by the kind of its value (see CheckRow).
_STEP_OF_VALUE = (_S_OPEN, _S_PLAIN, _S_DONE, _S_BLOCK, _S_MORE, _S_MORE, _S_MORE)
# Flow levels a flow collection may open in a checked document: with at most _MOST_CHECKED
# block levels around it, the document stays within the depth limit.
_CHECK_FLOW_ROOM = 8
_MOST_CHECKED = MAX_DEPTH - _CHECK_FLOW_ROOM - 20
_MAX_CHECK_ROWS = 16384
# A mapping's value of at least this many lines is remembered by the check, its lines and where
# it ended, so that the same lines later in the document are stepped over (see _repeated_value).
_MIN_REPEATED_LINES = 3
# Values checked, by their first line: the depth of blocks around one, its first line's index
# and its number of lines.
_Repeats = dict[str, tuple[int, int, int]]
# The blocks around the open one: each one's column, whether it is a sequence, and where the
# value it holds starts when it is a mapping's value (else -1: see _repeated_value).
_Blocks = list[tuple[int, bool, int]]


def _check_value(rest: str) -> int:
    """The kind of the value that starts a line's ``rest`` (after its key or dash, or alone)."""
    if not rest or rest[0] == "#":
        return _V_EMPTY
    first = rest[0]
    if first == '"':
        match = _DOUBLE.fullmatch(rest)
        if match is None:
            return _V_QUOTED
        body = match.group(1)
        if "\\" in body and not patterns.fullmatch(_ESCAPES_TAKEN, body):
            return _V_OTHER
        return _V_DONE
    if first == "'":
        return _V_DONE if _SINGLE.fullmatch(rest) else _V_QUOTED
    if first in "|>":
        return _V_BLOCK if _BLOCK_HEADER.fullmatch(rest) else _V_OTHER
    if first in "[{":
        try:
            _flow_line(rest, _CHECK_FLOW_ROOM - 1)
        except _Bail:
            return _V_FLOW  # maybe one over lines: _flow_over_lines reads it, or refuses it
        return _V_DONE
    if first == "!":  # "!!str 9288", as _str_tagged reads it (a continuation line is left to libyaml)
        after = _after_str_tag(rest)
        if after[:1] == "*":
            return _V_OTHER  # libyaml refuses a tag on an alias
        tagged = _check_value(after)
        return tagged if tagged in (_V_DONE, _V_PLAIN) else _V_OTHER
    if first in "&*":
        # An anchor that is all of a value is the property of the node on the next lines, as
        # "key:" alone has one there (or none: null); an alias is a whole value on its line, as
        # a quoted scalar is (_check_row leaves one alone on a line to libyaml: after a property,
        # "key: &a" above it, libyaml refuses it). libyaml's parser takes any name, defined or
        # not, or twice: only the composer looks, and nothing composes these documents.
        if patterns.fullmatch(PROPERTY, rest) is None:
            return _V_OTHER
        return _V_ANCHOR if first == "&" else _V_DONE
    if _plain_line(rest):
        return _V_PLAIN
    # "=" and "<<" alone are plain scalars to libyaml's parser, all a document passed through
    # needs (the reader refuses them: PyYAML's constructor has none for YAML 1.1's value key,
    # and "<<" is the merge key); prometheus-operator's AlertmanagerConfig CRD lists "=" among
    # its matchers' operators. A line continuing one is left to the others (_plain_extent).
    return _V_PLAIN if rest.split(" #", 1)[0].rstrip(" ") in ("=", "<<") else _V_OTHER


def _check_row(line: str, usual: _Usual) -> CheckRow:
    """A line's check row (see CheckRow); ``usual``: _USUAL_LINE's fullmatch, or a pattern that matches nothing."""
    match = usual(line)
    if match is not None:  # the rows the rules below give, in one C pass
        indent = match.end(1)
        if match.start(2) < 0:
            if match.start(5) < 0:
                return (indent, _S_MORE, _C_SCALAR, indent, _V_PLAIN, indent)
            return (indent, _S_MORE, _C_DASH, match.end(5), _V_PLAIN, match.end(5))
        if match.end(2) - indent <= _MAX_KEY:
            if match.start(3) >= 0:
                return (indent, _S_PLAIN, _C_KEY, indent, _V_PLAIN, match.end(3))
            if match.start(4) >= 0:
                return (indent, _S_DONE, _C_KEY, indent, _V_DONE, match.end(4))
            return (indent, _S_OPEN, _C_KEY, indent, _V_EMPTY, len(line))
    if "\t" in line and line.lstrip(" ")[:1] != "#":  # as in _row: refused outside a block scalar's content and comments
        return (len(line) - len(line.lstrip(" ")), _S_MORE, _C_OTHER, 0, _V_OTHER, 0)
    match = _KEY_LINE.match(line)
    if match is not None:  # the usual line: a plain key at its indentation, then its value
        indent = match.end(1)
        if match.end(2) - indent > _MAX_KEY:
            return (indent, _S_MORE, _C_OTHER, 0, _V_OTHER, 0)
        at = match.end()
        value = _check_value(line[at:])
        if value == _V_ANCHOR:
            value = _V_EMPTY  # "key: &name" as "key:" alone
        return (indent, _STEP_OF_VALUE[value], _C_KEY, indent, value, at)
    content = line.lstrip(" ")
    indent = len(line) - len(content)
    if not content or content[0] == "#":
        return _BLANK_CHECK_ROW
    kind = _C_KEY
    while content[0] == "-" and (len(content) == 1 or content[1] == " "):
        inner = content[1:].lstrip(" ")
        if not inner or inner[0] == "#":
            if kind != _C_KEY:
                return (indent, _S_MORE, _C_OTHER, 0, _V_OTHER, 0)  # "- -": left to the others
            return (indent, _S_MORE, _C_DASH_ALONE, indent, _V_EMPTY, 0)
        content = inner
        kind = _C_DASHES if kind == _C_DASH else _C_DASH if kind == _C_KEY else kind
    column = len(line) - len(content)
    if content[:8] == "!!merge ":
        # yq's tag on the merge key, of which libyaml's parser takes the key's column
        content = content[8:].lstrip(" ")
        if content[:2] != "<<":
            return (indent, _S_MORE, _C_OTHER, 0, _V_OTHER, 0)
    rest = content
    if content[0] in "\"'":
        match = patterns.match(_QUOTED_KEY, content) if ":" in content else None  # as in _row
        if match is not None:
            key = match.group(1) if match.group(1) is not None else match.group(2)
            if not key or len(key) > _MAX_KEY:
                return (indent, _S_MORE, _C_OTHER, 0, _V_OTHER, 0)
            rest = match.group(3)
    else:
        match = _KEY_LINE.match(content)  # no indentation left: the key starts the content
        if match is None and _may_hold_plain_key(content):
            match = patterns.match(_ANY_KEY_LINE, content)
        if match is not None:
            if match.end(2) > _MAX_KEY:
                return (indent, _S_MORE, _C_OTHER, 0, _V_OTHER, 0)
            rest = content[match.end() :]
    value = _check_value(rest)
    if value == _V_ANCHOR:
        if match is not None:
            value = _V_EMPTY  # "- key: &name" as "- key:" alone
        elif kind == _C_DASH:
            return (indent, _S_MORE, _C_DASH_ALONE, indent, _V_EMPTY, 0)  # "- &name" as "-" alone
        else:
            return (indent, _S_MORE, _C_OTHER, 0, _V_OTHER, 0)  # of nothing on its line, or "- - &name"
    if match is None:
        kind = _C_SCALAR if kind == _C_KEY else kind
        if value == _V_EMPTY or (kind != _C_SCALAR and rest[0] in "-?" and not _plain_start(rest)):
            return (indent, _S_MORE, _C_OTHER, 0, _V_OTHER, 0)  # "- ? x": a key nested on one line
        if kind == _C_SCALAR and rest[0] == "*":
            return (indent, _S_MORE, _C_OTHER, 0, _V_OTHER, 0)  # an alias alone: maybe after a property
    else:
        kind = _C_DASH_KEY if kind == _C_DASH else _C_DASHES_KEY if kind == _C_DASHES else kind
    step = _STEP_OF_VALUE[value] if kind == _C_KEY else _S_MORE
    return (indent, step, kind, column, value, len(line) - len(rest))


def _inner_dashes(line: str, indent: int) -> list[int]:
    """The columns of the dashes after the first (at ``indent``) on a line of items opened on it."""
    columns: list[int] = []
    at = indent + 1
    while True:
        content = line[at:].lstrip(" ")
        if content[:2] != "- ":
            return columns
        at = len(line) - len(content)
        columns.append(at)
        at += 1


def _block_end(lines: list[str], i: int, rest: str, parent: int) -> int:
    """The line after the ``|`` or ``>`` block scalar whose header (``rest``) is on line i."""
    count = len(lines)
    j = i + 1
    first = lines[j] if j < count else ""
    content = first.lstrip(" ")
    block = len(first) - len(content)
    match = _BLOCK_HEADER.fullmatch(rest)
    if match is None or match.group(2) or match.group(5) or not content or block <= parent:
        # an indentation indicator, no content right away, or none (an empty scalar): read as
        # the reader reads it
        return _block_scalar(lines, rest, i, parent)[1]
    if content[0] == "\t":
        raise _Bail  # (libyaml refuses a tab where it looks for the indentation)
    # Its lines: those at its column or right of it, and those of spaces alone (libyaml takes
    # any of them, but for a value the reader would have to fold); a line short of its
    # column ends it, and the caller's rules then take or refuse that line.
    prefix = " " * block
    j += 1
    while j < count and (lines[j].startswith(prefix) or not lines[j].strip(" ")):
        j += 1
    return j


def _repeated_value(lines: list[str], i: int, column: int, depth: int, repeats: _Repeats) -> int:
    """The line after a mapping's value that starts on line i, right of its key's ``column``
    with ``depth`` blocks around it, when its lines are those of a value checked before in the
    document at that depth (``repeats``) and the line after them ends this one too (-1: not so).

    CRDs repeat whole schemas (a type in spec and in status, every served version). The rows
    of a value's lines depend on those lines alone: they start with its first line, right of
    any key whose value it may be, and each line the rules meet in it is at a column of a block
    it opened, or it would have ended it (or been refused). It ended at a line of content as
    far left as its key, which pops the blocks it opened, and no rule looks past such a line
    (quoted scalars and flow collections over lines stop at their closing quote or bracket,
    plain and block scalars at a line so far left), so the same lines before such a line check
    the same. The depth matters for the depth limit alone. The value must not reach the
    document's end, where block scalars have rules of their own.
    """
    known = repeats.get(lines[i])
    if known is None or known[0] != depth:
        return -1
    _, first, count = known
    end = i + count
    if end >= len(lines):
        return -1
    after = lines[end]
    content = after.lstrip(" ")
    if not content or content[0] == "#" or len(after) - len(content) > column:
        return -1
    last = count - 1  # (values that differ mostly differ by their last line, and slices cost their length)
    if lines[first + last] != lines[i + last] or lines[first : first + count] != lines[i:end]:
        return -1
    return end


def _enter_block(lines: list[str], i: int, top: int, in_sequence: bool, enclosing: _Blocks, repeats: _Repeats) -> int:
    """Line i opens a block in the open one (``top``), which goes on ``enclosing``: -1; or it
    starts a mapping's value checked before (see _repeated_value): the line after that value.
    (In a mapping, the key whose value line i starts is at the open block's column.)"""
    if in_sequence:
        enclosing.append((top, True, -1))
        return -1
    end = _repeated_value(lines, i, top, len(enclosing), repeats)
    if end < 0:
        enclosing.append((top, False, i))  # where the value starts, remembered when it ends
    return end


def _leave_block(lines: list[str], i: int, enclosing: _Blocks, repeats: _Repeats) -> tuple[int, bool]:
    """The block around the open one, which line i returns to: its column and whether it is a
    sequence. A mapping's value that line i ends is remembered (see _repeated_value)."""
    top, in_sequence, start = enclosing.pop()
    if start >= 0 and i - start >= _MIN_REPEATED_LINES:
        repeats.setdefault(lines[start], (len(enclosing), start, i - start))
    return top, in_sequence


def check_passed_through(text: str, cache: CheckCache | None = None, screened: int = 0) -> bool:
    """Whether libyaml surely accepts a document and it nests within the depth limit (False: not known here).

    For documents passed through unread (a CRD, a Service): the subset :func:`parse` reads,
    checked by the same rules, but with no values to build, keys may repeat or be of any type
    (libyaml's parser allows both), so it takes a line several times faster. ``cache``: the
    check rows of a run's distinct lines (bounded: lines may hold secrets, so never module state).
    ``screened``: see _unreadable.
    """
    lines = _readable_lines(text, screened)
    if lines is None:
        return False
    rows = {} if cache is None else cache
    get = rows.get
    usual = patterns.compile(_USUAL_LINE).fullmatch
    count = len(lines)
    i = _body_start(lines)
    while i < count and lines[i].lstrip(" ")[:1] in ("", "#"):
        i += 1
    if i >= count or lines[i][:1] in (" ", "-"):
        return False  # no content, an indented root, or one that is not a block mapping
    enclosing: _Blocks = []
    top, in_sequence = 0, False  # the open block: its column, and whether it is a sequence
    pending = -1  # the column of a "key:" or "-" whose value may follow on the next lines
    # The column of the open block while it is a mapping with nothing pending: there a key
    # with a one-line value needs no more than its row (-2: not so).
    simple = 0
    plain = -1  # the line of the last one-line plain scalar: the next line may continue it
    repeats: _Repeats = {}
    try:
        while i < count:
            line = lines[i]
            row = get(line)
            if row is None:
                row = _check_row(line, usual)
                if len(rows) < _MAX_CHECK_ROWS:
                    rows[line] = row
            step = row[1]
            if step:  # a key whose value is on its line (or a block scalar below it), or opens a block
                indent = row[0]
                if indent != simple:
                    if pending >= 0 and indent > pending:  # the first key of a mapping opened by the "key:" above
                        end = _enter_block(lines, i, top, in_sequence, enclosing, repeats)
                        if end >= 0:  # a mapping's value checked before: stepped over
                            i, pending, simple = end, -1, top
                            continue
                        if len(enclosing) > _MOST_CHECKED:
                            return False
                        top, in_sequence, pending = indent, False, -1
                    elif indent < top or (pending < 0 and indent == top and in_sequence):
                        # back to the column of an enclosing mapping: the blocks in between end
                        pending = -1
                        while indent < top or (indent == top and in_sequence):
                            if not enclosing:
                                return False
                            top, in_sequence = _leave_block(lines, i, enclosing, repeats)
                        if indent != top:
                            return False
                    else:
                        step = _S_MORE  # anything else: the rules below
                if step == _S_DONE:
                    simple = top
                    i += 1
                    continue
                if step == _S_PLAIN:
                    simple, plain = top, i
                    i += 1
                    continue
                if step == _S_OPEN:
                    simple, pending = -2, top
                    i += 1
                    continue
                if step == _S_BLOCK:
                    simple = top
                    i = _block_end(lines, i, line[row[5] :], top)
                    continue
            elif row is _BLANK_CHECK_ROW:
                i += 1
                continue
            indent, _, kind, column, value, at = row
            if plain == i - 1 and indent > top:
                # The plain scalar goes on (its lines belong right of ``top``): read as the reader reads it.
                first = lines[plain]
                end = _plain_extent(lines, first[(get(first) or _check_row(first, usual))[5] :], plain, top)[1] + 1
                if end <= i:
                    return False  # it does not go on here after all (a line it stops at): not known here
                i = end
                continue
            dash = kind >= _C_DASH
            if pending >= 0:
                if indent > pending:
                    if kind == _C_SCALAR:  # the value on the line after its key or dash
                        pending = -1
                        if value == _V_DONE:
                            i += 1
                        elif value == _V_PLAIN:
                            plain = i
                            i += 1
                        elif value == _V_QUOTED:
                            i = _quoted_end(lines, line[at:], i)
                        elif value == _V_FLOW:
                            i = _flow_over_lines(lines, line[at:], i, _CHECK_FLOW_ROOM - 1)[1]
                        else:
                            return False
                        simple = -2 if in_sequence else top
                        continue
                    end = _enter_block(lines, i, top, in_sequence, enclosing, repeats)
                    if end >= 0:  # a mapping's value checked before: stepped over
                        i, pending, simple = end, -1, top
                        continue
                    if len(enclosing) > _MOST_CHECKED:
                        return False
                    top, in_sequence = indent, dash
                elif indent == pending and dash:
                    enclosing.append((top, in_sequence, -1))  # a sequence at its key's column (or the next item)
                    if len(enclosing) > _MOST_CHECKED:
                        return False
                    top, in_sequence = indent, True
                pending = -1
            if indent != top or in_sequence != dash:
                while indent < top or (indent == top and in_sequence and not dash):
                    if not enclosing:
                        return False
                    top, in_sequence = _leave_block(lines, i, enclosing, repeats)
                if indent != top or in_sequence != dash:
                    return False
            if kind > _C_OTHER:  # "- - x": a sequence at each later dash's column, then the item as below
                for inner in _inner_dashes(line, indent):
                    enclosing.append((top, True, -1))
                    if len(enclosing) > _MOST_CHECKED:
                        return False
                    top = inner
                kind = _C_DASH_KEY if kind == _C_DASHES_KEY else _C_DASH
            if kind == _C_DASH_KEY:  # "- key: ...": a mapping at the key's column
                enclosing.append((top, True, -1))
                if len(enclosing) > _MOST_CHECKED:
                    return False
                top, in_sequence = column, False
            elif kind == _C_DASH_ALONE:
                pending = indent
            elif kind != _C_KEY and kind != _C_DASH:
                return False
            # The value's lines belong right of ``top``: the key's column, or the dash's.
            if value == _V_DONE or kind == _C_DASH_ALONE:
                i += 1
            elif value == _V_EMPTY:
                pending = top
                i += 1
            elif value == _V_PLAIN:
                plain = i
                i += 1
            elif value == _V_BLOCK:
                i = _block_end(lines, i, line[at:], top)
            elif value == _V_QUOTED:
                i = _quoted_end(lines, line[at:], i)
            elif value == _V_FLOW:
                i = _flow_over_lines(lines, line[at:], i, _CHECK_FLOW_ROOM - 1)[1]
            else:
                return False
            simple = -2 if in_sequence or pending >= 0 else top
    except _Bail:
        return False
    return True


# Pod-template nodes for the splicer, from rows instead of libyaml (see template_node).
_Wanted = dict[str, "_Wanted"]
# Down to the annotations: what template_edits reads in full; other values get shallow nodes.
TEMPLATE_PARTS: _Wanted = {"metadata": {"annotations": {}}}


def _mark(line: int, column: int) -> Any:  # a Mark to the splicer (see tree.Position)
    return Position(line, column)


def _flow_mapping_node(
    text: str, tokens: list[_Token], index: int, i: int, offset: int, wanted: _Wanted
) -> tuple[MappingNode, int]:
    """The node of the flow mapping whose "{" is tokens[index] (on line i, ``text`` starting at
    column ``offset``), and the index of the token after its "}". Its pairs' scalars in full;
    a mapping under a ``wanted`` key built alike (the metadata's annotations), any other nested
    collection shallow (no pairs or items: the splicer reads only its place); a wanted value
    that is a sequence, and with ``wanted`` empty (the annotations themselves) any nested
    collection, are left to libyaml's nodes."""
    pairs: list[tuple[Node, Node]] = []
    start = tokens[index][1]
    index += 1
    while tokens[index][0] != _INDICATOR:  # "}" or a pair: key, ": ", value, then "," or "}"
        key_kind, key_start, key_end = tokens[index]
        value_kind, value_start, value_end = tokens[index + 2]
        key, _ = _flow_value(text, tokens, index, 1, 1)
        key_node = ScalarNode(STR_TAG, key, _mark(i, offset + key_start), _mark(i, offset + key_end), style=_STYLE[key_kind])
        value_node: Node
        if value_kind == _INDICATOR:
            if not wanted:
                raise _Bail  # a nested collection in the annotations
            inner = wanted.get(key)
            if inner is not None:
                if text[value_start] != "{":
                    raise _Bail  # a wanted value that is no mapping: libyaml's nodes, as a block one's
                value_node, index = _flow_mapping_node(text, tokens, index + 2, i, offset, inner)
            else:
                _, index = _flow_value(text, tokens, index + 2, 1, _FLOW_DEPTH)  # (read to step over it)
                shape = MappingNode if text[value_start] == "{" else SequenceNode
                tag = MAP_TAG if shape is MappingNode else SEQ_TAG
                value_end = tokens[index - 1][2]
                value_node = shape(tag, [], _mark(i, offset + value_start), _mark(i, offset + value_end), flow_style=True)
        else:
            value, _ = _flow_value(text, tokens, index + 2, 1, 1)
            value_node = ScalarNode(
                STR_TAG if value_kind != _FLOW_PLAIN else implicit_tag(text[value_start:value_end]),
                value if value.__class__ is str else text[value_start:value_end],
                _mark(i, offset + value_start),
                _mark(i, offset + value_end),
                style=_STYLE[value_kind],
            )
            index += 3
        pairs.append((key_node, value_node))
        if text[tokens[index][1]] == ",":
            index += 1
    end = tokens[index][2]
    return MappingNode(MAP_TAG, pairs, _mark(i, offset + start), _mark(i, offset + end), flow_style=True), index + 1


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

    @classmethod
    def over(cls, text: str, row_cache: RowCache | None, plain_values: dict[str, Any] | None, covered: Covered) -> _NodeBuilder:
        """A builder over the lines of a document :func:`parse` accepted, ``covered`` its lines read as blank."""
        builder = cls(_document_lines(text), {} if row_cache is None else row_cache, {} if plain_values is None else plain_values)
        for start, end in covered:
            builder.rows[start:end] = [_END_ROW] * (end - start)
        return builder

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

    def item_rows(self, i: int, column: int) -> Iterator[int]:
        """The rows of the items ("-") of the block sequence at ``column`` whose first item is row i."""
        rows = self.rows
        count = len(rows)
        while i < count:
            indent, dash, _, _, shape, _ = rows[i] or self.row(i)
            if shape != _BLANK:
                if indent < column or (indent == column and not dash):
                    return
                if indent == column:
                    yield i
            i += 1

    def find(self, i: int, column: int, wanted: str, on_dash: bool = False) -> int:
        """The row of key ``wanted`` in the block mapping at ``column`` whose first key is row i (-1 if absent);
        ``on_dash``: a sequence's item, whose first key is on its dash's row i and the others below it."""
        if on_dash:
            return i if self.row(i)[2] == wanted else self.find(i + 1, column, wanted)
        return next((row for row in self.key_rows(i, column) if self.row(row)[2] == wanted), -1)

    def item_start(self, i: int) -> tuple[int, int, bool]:
        """The block mapping that is a sequence's item starting on row i (as list_item_lines
        gives it): its first key's row and column, and whether that key follows the dash."""
        indent, dash, key, _, _, _ = self.row(i)
        if not key:
            raise _Bail  # no mapping's first key on that row: left to libyaml's nodes
        return (i, indent + 1 + len(dash), True) if dash else (i, indent, False)

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
        row = i  # the row the value starts on
        if not rest:
            nested = self.nested_start(i, column)
            if nested is None:
                # libyaml places an empty value right after the ':' indicator.
                colon = _mark(i, column + len(key) + 1)
                return ScalarNode(NULL_TAG, "", colon, colon)
            j, indent, is_sequence = nested
            if is_sequence:
                return SequenceNode(SEQ_TAG, [], _mark(j, indent), _mark(j + 1, 0), flow_style=False)
            if self.row(j)[2]:
                return self.mapping(j, indent, wanted)
            # A scalar or a flow collection on the line after its key: helm's `toYaml` of an
            # empty map, indented under "annotations:", writes "{}" there.
            rest, row = self.row(j)[3], j
            if wanted is not None and rest[0] not in "[{":
                raise _Bail  # a scalar where the splicer wants a mapping: let libyaml tell
        if wanted is not None and rest[0] in "[{" and rest.rstrip(" ") not in ("{}", "[]"):
            if rest[0] != "{":
                raise _Bail  # the splicer reads into this one: left to libyaml
            return self.flow_mapping(row, rest, wanted)
        return self.scalar(row, rest, column)

    def flow_mapping(self, i: int, rest: str, wanted: _Wanted) -> MappingNode:
        """A one-line flow mapping (a pod template's annotations, or its metadata with them),
        with its pairs' nodes: see _flow_mapping_node."""
        line = self.lines[i]
        _flow_line(rest, _FLOW_DEPTH)  # the whole line checked as parse() checks it
        tokens, _ = _flow_tokens(rest)
        return _flow_mapping_node(rest, tokens, 0, i, len(line) - len(rest), wanted)[0]

    def scalar(self, i: int, rest: str, column: int) -> Node:
        """The node of the value ``rest`` on row i (a scalar, or a flow collection read shallowly)."""
        line = self.lines[i]
        start = len(line) - len(rest)
        first = rest[0]
        if first in "[{":
            if _flat_flow(rest) is not _UNSEEN:
                end = rest.find("}" if first == "{" else "]") + 1  # no nesting or quotes: the first closing bracket
            else:
                _, end = _flow(rest)
            if first == "{":
                return MappingNode(MAP_TAG, [], _mark(i, start), _mark(i, start + end), flow_style=True)
            return SequenceNode(SEQ_TAG, [], _mark(i, start), _mark(i, start + end), flow_style=True)
        if first in "|>":
            # libyaml ends one on the line after its header, but on a last line without a line
            # break (then empty) at that line's end: there the splicer may remove its line.
            last = i + 1 == len(self.lines) and self.lines.__class__ is _OpenEnd
            return ScalarNode(STR_TAG, "", _mark(i, start), _mark(i, len(line)) if last else _mark(i + 1, 0), style=first)
        if first == '"':
            match = patterns.match(_DOUBLE_IN_FLOW, rest)
            if match is None:
                raise _Bail
            return ScalarNode(STR_TAG, _unescape(match.group(1)), _mark(i, start), _mark(i, start + match.end()), style='"')
        if first == "'":
            match = patterns.match(_SINGLE_IN_FLOW, rest)
            if match is None:
                raise _Bail
            value = match.group(1).replace("''", "'")
            return ScalarNode(STR_TAG, value, _mark(i, start), _mark(i, start + match.end()), style="'")
        text, end_line, end_column = _plain_extent(self.lines, rest, i, column)
        return ScalarNode(implicit_tag(text), text, _mark(i, start), _mark(end_line, end_column), style="")

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


def template_node(
    text: str,
    path: tuple[str, ...],
    row_cache: RowCache | None = None,
    plain_values: dict[str, Any] | None = None,
    start: TemplateStart | None = None,
    covered: Covered = (),
    item: bool = False,
) -> MappingNode | None:
    """The pod template at ``path`` of a document :func:`parse` accepted, as nodes for the splicer (None: compose instead).

    Builds only what ``template_edits`` reads: the template's pairs (other values
    shallow), its metadata and annotations in full, with libyaml's marks and styles.
    ``start``: where :func:`parse` found the template (used when its path is ``path``);
    ``covered``: what :func:`parse` gave. ``item``: ``text`` is a List item's lines, from the
    line list_item_lines found for it (see engine._item_window): the path starts at the item,
    not at a document's root.
    """
    builder = _NodeBuilder.over(text, row_cache, plain_values, covered)
    try:
        if item:
            i, column, on_dash = builder.item_start(0)
        elif start is not None and start[0] == path:
            return builder.mapping(start[1], start[2], TEMPLATE_PARTS)
        else:
            i, column, on_dash = builder.next_content(_body_start(builder.lines)), 0, False
        for key in path:
            found = builder.find(i, column, key, on_dash)
            on_dash = False
            if found < 0 or builder.row(found)[3]:
                return None
            nested = builder.nested_start(found, column)
            if nested is None or nested[2] or not builder.row(nested[0])[2]:
                return None
            i, column, _ = nested
        if on_dash:
            return None  # an item that is the template itself: its first key shares the dash's row
        return builder.mapping(i, column, TEMPLATE_PARTS)
    except _Bail:
        return None  # something the splicer reads is outside what rows tell: compose it


def field_line(
    text: str,
    dotted: str,
    row_cache: RowCache | None = None,
    plain_values: dict[str, Any] | None = None,
    covered: Covered = (),
    item: bool = False,
) -> int | None:
    """What tree.line_of gives for a document :func:`parse` accepted, read from its rows (None: compose instead).

    The 1-based line of the innermost list item the path reaches, else of the last key
    found, else of the root's. A path that goes on into a flow collection closed on its
    line is followed through its value, every node of it on that line (a finding about
    ``envFrom: [{secretRef: {name: s}}]``); one over lines is left to libyaml's nodes
    (None). ``covered``: what :func:`parse` gave. ``item``: the root is the List item whose
    lines ``text`` is, as in template_node.
    """
    builder = _NodeBuilder.over(text, row_cache, plain_values, covered)
    item_line: int | None = None
    # Where the path is: a block mapping or sequence at ``column`` whose first key or item is
    # on ``row`` (``on_dash``: a mapping that is a sequence's item, its first key after the
    # "-"), else a scalar (``column`` None), or a flow collection (``flow``).
    column: int | None = 0
    in_sequence = on_dash = flow = False
    try:
        if item:
            row, column, on_dash = builder.item_start(0)
        else:
            row = builder.next_content(_body_start(builder.lines))
        line = row
        parts = list(field_parts(dotted))
        for at, (index, key) in enumerate(parts):
            if flow:
                return _line_in_flow(_flow_line(builder.row(row)[3], _FLOW_DEPTH), parts[at:], row, line, item_line)
            if column is None or in_sequence != (index is not None):
                break  # line_of stops where the path does not fit the node
            if index is not None:
                found = next((r for n, r in enumerate(builder.item_rows(row, column)) if n == index), -1)
                if found < 0:
                    break
                _, dash, item_key, rest, _, _ = builder.row(found)
                if item_key:  # "- key: ...": a mapping whose first key is on the dash's line
                    row, column, in_sequence, on_dash = found, column + 1 + len(dash), False, True
                elif rest:  # a scalar or flow collection after the dash
                    row, column, flow = found, None, rest[0] in "[{"
                else:  # "-" alone: the item is the block below it
                    nested = builder.nested_start(found, column)
                    if nested is None or nested[1] <= column:
                        return None  # a null item
                    row, column, in_sequence = nested
                    on_dash = False
                    if not in_sequence and not builder.row(row)[2]:
                        column, flow = None, builder.row(row)[3][:1] in ("[", "{")
                item_line = line = row
                continue
            found = builder.find(row, column, key, on_dash)
            if found < 0:
                break
            line = found
            on_dash = False
            rest = builder.row(found)[3]
            if rest:
                row, column, flow = found, None, rest[0] in "[{"
                continue
            nested = builder.nested_start(found, column)
            if nested is None:
                row, column = found, None  # null
                continue
            row, column, in_sequence = nested
            if not in_sequence and not builder.row(row)[2]:
                column, flow = None, builder.row(row)[3][:1] in ("[", "{")
    except _Bail:
        return None
    return (item_line if item_line is not None else line) + 1


def _line_in_flow(value: Any, parts: list[tuple[int | None, str]], row: int, line: int, item_line: int | None) -> int:
    """field_line's answer for the rest of a path (``parts``) that goes on into a flow
    collection whose value is ``value``, all on row ``row``: each part found there is on that
    row, as tree.line_of would find it (keys by their text, as mapping_get matches str keys)."""
    for index, key in parts:
        if index is not None:
            if value.__class__ is not list or index >= len(value):
                break
            value = value[index]
            item_line = line = row
            continue
        if value.__class__ is not dict or key not in value:
            break
        value = value[key]
        line = row
    return (item_line if item_line is not None else line) + 1


# The root's "items:" line (compiled on first use; patterns keeps it): Lists are few.
_ITEMS_LINE = r"(?m)^items:(?: *| +#.*)$"


def list_item_lines(text: str) -> list[int] | None:
    """The 0-based lines where the items of a List document's root ``items`` block sequence
    start (where libyaml's node for each item starts), or None when there is no such sequence.

    Lines more indented than the sequence's dashes (the items' content: kube-prometheus's
    dashboards are tens of thousands of them) are stepped over by one pattern match, the
    lines skipped counted in C; only the lines at the dashes' column or left of it, and the
    first content line of an item whose dash is alone, are looked at one by one.
    """
    body = _document_body(text)
    found_items = patterns.compile(_ITEMS_LINE).search(body)
    if found_items is None:
        return None
    size = len(body)
    at = found_items.end() + 1  # where the line being looked at starts
    index = body.count("\n", 0, at)  # and its number
    deeper = 0  # the indentation of the items' content, once they are found (0: looked at line by line)
    found: list[int] = []
    column = -1
    waiting = False  # a "-" alone: the item starts on the next content line
    while at < size:
        if deeper and not waiting:
            skipped = indented_end(body, at, deeper)
            index += body.count("\n", at, skipped)
            at = skipped
            if at >= size:
                break
        stop = body.find("\n", at)
        if stop < 0:
            stop = size
        line = body[at:stop]
        number = index
        at, index = stop + 1, index + 1
        content = line.lstrip(" ")
        if not content or content[0] == "#":
            continue
        indent = len(line) - len(content)
        if waiting:
            found.append(number)
            waiting = False
        if column < 0:
            if content[0] != "-":
                return None
            column = indent
            if column < _MOST_PRECOMPILED_INDENT:
                deeper = column + 1
        if indent < column:
            break
        if indent == column:
            if content[:2] not in ("- ", "-") or (len(content) > 1 and content[1] != " "):
                break
            rest = content[1:].lstrip(" ")
            if rest and rest[0] != "#":
                found.append(number)
            else:
                waiting = True
    return None if waiting else found
