"""Splits a YAML stream into document pieces whose concatenation is the stream, byte for byte."""

from __future__ import annotations

import codecs
from _collections_abc import Iterable, Sequence

from ..core.record import Record
from ..errors import WavegenError
from . import patterns

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import overload

# libyaml (YAML 1.1) treats NEL, LS and PS as line breaks too; positions must agree with it.
# This and the other patterns for what few streams hold are compiled on first use (patterns
# keeps them): compiling every pattern at import cost each run about a millisecond.
LINE_BREAK = "\r\n|[\r\n\x85\u2028\u2029]"
_EXOTIC_BREAKS = ("\x85", "\u2028", "\u2029")
# LineStarts: lines found by stepping from the text's start, and the size of its counted chunks.
_LINES_FROM_START = 256
_CHUNK_CHARS = 4096
# Piece.helm_template: the length of the parts of a piece's first lines split at a time.
_HEADER_PART_CHARS = 4096
# Markers are searched as "\n---" rather than "^---" with re.M: a literal prefix
# lets the regex engine skip ahead, which is several times faster on big streams;
# a marker on the very first line is checked separately. One search finds the lines
# that may start a document, end one or hold a directive: a search of their own for
# "\n%" or "..." each cost about as much as this one on a big chart (CRD descriptions
# hold "%" and "." everywhere).
_MARK = patterns.compile(r"\n(?:---|\.\.\.|%)")
# What may follow "---" or "..." on a marker line ("" at the end of the text).
_AFTER_MARKER = ("", " ", "\t", "\r", "\n")
# The same two in UTF-8 bytes, where no byte of a character past ASCII is one of theirs.
_MARK_BYTES = patterns.compile(rb"\n(?:---|\.\.\.|%)")
_AFTER_MARKER_BYTES = (b"", b" ", b"\t", b"\r", b"\n")
_DOC_END = r"\n\.\.\.(?=[ \t\r\n]|\Z)[^\r\n]*(?:\r\n|\n|\Z)"
_DOC_END_FIRST = r"\.\.\.(?=[ \t\r\n]|\Z)[^\r\n]*(?:\r\n|\n|\Z)"
_DIRECTIVE_LINE = r"^%[^\r\n]*\r?\n\Z"
_NON_CONTENT_LINE = patterns.compile(r"[ \t]*(?:#.*)?|(?:---|\.\.\.)(?:[ \t]+(?:#.*)?)?[ \t]*|%.*")
BOM = "\ufeff"
# A CR that is no CRLF's: a line break of its own, which the splitter refuses (check_line_breaks).
_LONE_CR = "\r(?!\n)"
_LONE_CR_BYTES = b"\r(?!\n)"
# helm template writes this comment above every document it renders.
_HELM_SOURCE = r"#[ \t]*Source:[ \t]*(\S[^\r\n]*?)[ \t]*\Z"


class Piece(Record, hashable=False):
    """A slice of the stream holding at most one document (plus its marker lines and comments)."""

    __slots__ = ("line", "number", "text")
    text: str
    line: int  # 0-based line of the first character, in the whole stream
    number: int  # document number for messages, 1-based

    def __init__(self, text: str, line: int, number: int) -> None:
        self.text = text
        self.line = line
        self.number = number

    def has_content(self) -> bool:
        """Whether anything but markers, directives, comments and blank lines is in the piece."""
        return any(not _NON_CONTENT_LINE.fullmatch(line) for line in self.text.splitlines())

    def helm_template(self) -> str:
        """The template helm named in a ``# Source:`` comment above the content, else ""."""
        # Only the comments before the document's content count: its first lines, split a
        # part at a time (a List's piece of megabytes is named for each finding in it; even
        # looking for "Source:" in all of it took 1.7 ms).
        text = self.text
        at, size = 0, _HEADER_PART_CHARS
        while at < len(text):
            lines = text[at : at + size].splitlines(keepends=True)
            if at + size < len(text):
                lines.pop()  # perhaps cut short: split again with the next part
                if not lines:
                    size *= 2  # a line longer than the part
                    continue
            for line in lines:
                at += len(line)
                line = line.splitlines()[0]
                if not _NON_CONTENT_LINE.fullmatch(line):
                    return ""
                match = patterns.match(_HELM_SOURCE, line.strip())
                if match:
                    return match.group(1)
        return ""


class LineStarts(Sequence[int]):
    """Offsets at which each line of a text whose line breaks are LF or CRLF begins (a CRLF's
    line starts after its LF), found for the lines asked about.

    Splicing reads a handful of lines per document; listing every line's offset
    up front cost more time and memory than the edits themselves. Lines past the first
    _LINES_FROM_START are found from a chunk of the text whose line breaks before it were
    counted (a List's workloads are edited tens of thousands of lines into one document).
    """

    def __init__(self, text: str) -> None:
        self._text = text
        # The lines, counted when first asked (an edit rarely asks: 1.3 ms for a List of 5 MB).
        self._count = 0
        # The line breaks before each multiple of _CHUNK_CHARS, counted as far as a line asked needs.
        self._breaks_before = [0]

    def __len__(self) -> int:
        if not self._count:
            self._count = self._text.count("\n") + 1
        return self._count

    if TYPE_CHECKING:  # typing.overload, for type checkers only (see core/model.py)

        @overload
        def __getitem__(self, index: int) -> int: ...

        @overload
        def __getitem__(self, index: slice) -> Sequence[int]: ...

    def __getitem__(self, index: int | slice) -> int | Sequence[int]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        asked = index
        if index < 0:
            index += len(self)
            if index < 0:
                raise IndexError(asked)
        offset = 0
        text = self._text
        if index > _LINES_FROM_START:
            # The line starts after the index-th line break: after the last chunk start with fewer before it.
            breaks = self._breaks_before
            while breaks[-1] < index:
                start = (len(breaks) - 1) * _CHUNK_CHARS
                if start >= len(text):
                    raise IndexError(asked)  # (fewer line breaks than that)
                breaks.append(breaks[-1] + text.count("\n", start, start + _CHUNK_CHARS))
            chunk = len(breaks) - 1
            while breaks[chunk] >= index:
                chunk -= 1
            offset = chunk * _CHUNK_CHARS
            index -= breaks[chunk]
        find = text.find
        for _ in range(index):
            offset = find("\n", offset) + 1
            if not offset:
                raise IndexError(asked)  # (fewer line breaks than that)
        return offset


def line_starts(text: str, plain_breaks: bool = False) -> Sequence[int]:
    """Offsets at which each line of text begins. ``plain_breaks``: the caller knows its line
    breaks are LF and CRLF alone (no NEL, LS, PS or lone CR: not looked for, a pass each over a
    List of 2.7 MB past Latin-1, 1.3 ms in all)."""
    if not plain_breaks and (
        ("\r" in text and patterns.compile(_LONE_CR).search(text) is not None) or any(ch in text for ch in _EXOTIC_BREAKS)
    ):
        return [0, *(m.end() for m in patterns.finditer(LINE_BREAK, text))]
    return LineStarts(text)


def check_line_breaks(text: str | bytes | bytearray, file: str) -> None:
    """Refuse lone CR line breaks: document boundaries could not be found reliably.

    A text, or its UTF-8 bytes, searched as it is: normalizing a CRLF input to look for a CR
    left copied it twice (6 MB of CRLF: 12 MB of peak memory the run did not otherwise need,
    and three times the time of one search)."""
    if isinstance(text, str):
        found = patterns.compile(_LONE_CR).search(text) if "\r" in text else None
        line = -1 if found is None else text.count("\n", 0, found.start()) + 1
    else:
        found_in_bytes = patterns.compile(_LONE_CR_BYTES).search(text) if b"\r" in text else None
        line = -1 if found_in_bytes is None else text.count(b"\n", 0, found_in_bytes.start()) + 1
    if line > 0:
        raise WavegenError("lone carriage return (CR) line break; use LF or CRLF line endings", file=file, line=line)


def split_as_bytes(data: bytes) -> bool:
    """Whether a stream is better cut into pieces (split_utf8) before it is decoded: whether its
    bytes are not ASCII (whose text is no larger).

    One character past U+00FF (a typographic apostrophe in a CRD's descriptions) makes Python
    keep a whole decoded text at 2 or 4 bytes a character; decoded a piece at a time, only the
    pieces holding one do (Envoy Gateway's CRDs: 38 such characters in 3.9 MB, whose text
    took 7.9 MB beside the pieces' 6.5)."""
    return not data.isascii()


def split_stream(text: str) -> list[Piece]:
    """Split at document markers; a ``---`` line starts a piece, a ``...`` line ends one."""
    return split_marked(text)[0]


def split_marked(text: str) -> tuple[list[Piece], bool, bool]:
    """split_stream; whether a line of the text starts with "%" (a directive, maybe); and whether
    no piece's document (an end marker that ends the piece left out, see
    fastparse.document_text) has a line but its first that starts with "---", "..." or "%"
    (then the subset reader need not look for them again)."""
    ordered, has_directives, screened = _cuts(text)
    # (not itertools.pairwise: importing itertools costs a run about 40 us)
    chunks = (text[start:end] for start, end in zip(ordered, ordered[1:], strict=False))  # noqa: RUF007
    return _pieces(chunks, any(ch in text for ch in _EXOTIC_BREAKS)), has_directives, screened


def split_utf8(data: bytes | bytearray, exotic_breaks: bool = True) -> tuple[list[Piece], bool, bool]:
    """split_marked for a stream's bytes (where split_as_bytes says so), each piece decoded from
    its bytes: the only decoding they get. Raises UnicodeDecodeError, at the first byte that is
    not UTF-8, as decoding them whole would: every cut follows a line break, which ends any
    character's bytes. Lone CR line breaks are the caller's to refuse (check_line_breaks).

    The cuts are found in the bytes (_marker_cuts), or where a line starts with "%" or "..." in
    the bytes read as Latin-1, one character a byte: markers, the line breaks that end them (LF,
    CRLF) and what is looked for around them are ASCII, which no byte of another character is
    in UTF-8, so they are the cuts of the text. NEL, LS and PS line breaks cut nothing there
    either; they count as lines, in each decoded piece (``exotic_breaks`` False: the caller
    knows the bytes hold none, and no piece is searched for them: three searches of a piece two
    bytes a character took a List of 2.7 MB 0.8 ms).

    A bytearray is emptied as its pieces are decoded, from its last: each piece's bytes are let
    go of once it is decoded (a bytearray gives memory back when cut below half its size), so
    that its bytes and its pieces' texts are not both whole at once (mimir's chart, 2.7 MB of
    dashboards: peak RSS 16.3 -> 14.4 MB). After bytes that are not UTF-8 it is cut no more:
    the error is the first such byte's, and the bytes before it are still there."""
    simple = _marker_cuts(data)
    if simple is not None:
        ordered, screened = simple
        has_directives = False
    else:
        view = data.decode("latin-1")
        ordered, has_directives, screened = _cuts(view)
        del view  # (the pieces take its size again, or more)
    chunks = _decoded(data, list(zip(ordered, ordered[1:], strict=False)))  # noqa: RUF007  # (as in split_marked)
    return _pieces(chunks, exotic_breaks), has_directives, screened  # (NEL, LS and PS looked for in the decoded pieces only)


def _decoded(data: bytes | bytearray, spans: list[tuple[int, int]]) -> list[str]:
    """The pieces of split_utf8, decoded from the last; a bytearray's bytes cut off as each is decoded."""
    chunks: list[str] = []
    refused: UnicodeDecodeError | None = None
    for start, end in reversed(spans):
        with memoryview(data) as raw, raw[start:end] as piece:
            try:
                chunks.append(codecs.utf_8_decode(piece, "strict", True)[0])
            except UnicodeDecodeError as err:
                refused = err  # (an earlier piece's, found next, comes first)
                refused.start += start
                refused.end += start
        if refused is None and isinstance(data, bytearray):
            del data[start:]  # (no view of it is left: it may be cut)
    if refused is not None:
        raise UnicodeDecodeError(refused.encoding, data, refused.start, refused.end, refused.reason)
    chunks.reverse()
    return chunks


def _marker_cuts(data: bytes | bytearray) -> tuple[list[int], bool] | None:
    """_cuts for a stream's bytes with no directive and no end marker (None: a line starting
    with "%" or "...", which _cuts reads in the text), and whether no marker line is left inside
    a piece; its "---" lines found in the bytes themselves.

    Not from the bytes read as Latin-1, as _cuts reads them: that text, freed, made the C
    library serve the next allocations of its size from its heap, which keeps the pages it
    touches (the first part of a List of 2.7 MB decoded before its first character past U+00FF:
    0.7 MB more at the run's peak)."""
    if data.startswith((b"%", b"...")):
        return None
    cuts = [0]
    screened = True
    for mark in _MARK_BYTES.finditer(data):
        at = mark.start() + 1
        if data[at : at + 1] != b"-":
            return None
        if data[at + 3 : at + 4] in _AFTER_MARKER_BYTES:
            cuts.append(at)
        else:
            screened = False  # "---x": no marker, left inside its piece
    if data:
        cuts.append(len(data))
    return cuts, screened


def _pieces(chunks: Iterable[str], exotic_breaks: bool) -> list[Piece]:
    """The pieces of a stream cut into ``chunks``, numbered, each with the line it starts on; one
    empty piece for no chunks. ``exotic_breaks``: whether a chunk may hold a NEL, LS or PS line
    break (then one that does has its lines counted as libyaml counts them)."""
    pieces: list[Piece] = []
    line = 0
    for number, chunk in enumerate(chunks, start=1):
        pieces.append(Piece(chunk, line, number))
        if exotic_breaks and ("\x85" in chunk or "\u2028" in chunk or "\u2029" in chunk):
            line += len(patterns.findall(LINE_BREAK, chunk))
        else:
            line += chunk.count("\n")
    return pieces or [Piece("", 0, 1)]


def _cuts(text: str) -> tuple[list[int], bool, bool]:
    """Where split_marked cuts the text, in order; whether a line starts with "%"; and whether no
    marker line is left inside a piece."""
    cuts = {0, len(text)}
    starts: list[int] = []
    ends: list[int] = []
    # Directives (%YAML, %TAG) belong to the document they precede (most streams have none).
    has_directives = text.startswith("%")
    screened = True
    for mark in _MARK.finditer(text):
        at = mark.start() + 1
        first = text[at]
        if first == "%":
            has_directives = True
        elif text[at + 3 : at + 4] not in _AFTER_MARKER:
            screened = False  # "---x", "...x": no marker, left inside its piece
        elif first == "-":
            starts.append(at)
        else:
            ends.append(at)
    for cut in starts:
        while has_directives and cut > 0:
            previous = text.rfind("\n", 0, cut - 1) + 1
            if patterns.match(_DIRECTIVE_LINE, text[previous:cut]):
                cut = previous
            else:
                break
        cuts.add(cut)
    # End markers (most streams have none): the cut follows the marker's line. As one search
    # through the text would, a marker whose "\n" ends the line of the one before is skipped.
    taken = 0
    for at in ends:
        if at - 1 < taken:
            continue
        marker = patterns.compile(_DOC_END).match(text, at - 1)
        if marker is not None:
            taken = marker.end()
            cuts.add(taken)
        else:
            screened = False  # a marker line without a line break libyaml takes: left inside
    if text.startswith("..."):
        first_end = patterns.match(_DOC_END_FIRST, text)
        if first_end:
            cuts.add(first_end.end())
    # A directive pulls the "---" after it into its piece: no piece is screened then.
    return sorted(cuts), has_directives, screened and not has_directives
