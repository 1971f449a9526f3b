"""Reads a Kubernetes list answer item by item as its bytes arrive, so a page is never decoded whole."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

# Bytes that change the nesting of a JSON value; everything between them is skipped at C speed.
_STRUCTURE = re.compile(rb'["\[\]{}]')
_STRING_STOP = re.compile(rb'["\\]')
_SCALAR_END = re.compile(rb"[\s,\]}]")
_SPACE = b" \t\r\n"


class ListStreamError(ValueError):
    """The answer is not a JSON object of the shape of a Kubernetes list."""


class ListStream:
    """Iterates the ``items`` of a JSON list object fed as chunks; the other top-level fields land in ``fields``.

    Only one item is decoded at a time (``json.loads`` of its bytes), and bytes already read are dropped
    as the reader moves on. ``fields`` (``metadata`` with ``resourceVersion`` and ``continue``) is
    complete once the iteration ends, wherever the server put it.
    """

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks = iter(chunks)
        self._buf = b""
        self._pos = 0
        self._eof = False
        self.fields: dict[str, Any] = {}

    def __iter__(self) -> Iterator[dict[str, Any]]:
        self._expect(b"{")
        first = True
        while True:
            if self._peek() == b"}":
                self._pos += 1
                break
            if not first:
                self._expect(b",")
            first = False
            key = self._decode(self._value(), "a field name")
            if not isinstance(key, str):
                raise ListStreamError("a field name is not a string")
            self._expect(b":")
            if key == "items" and self._peek() == b"[":
                self._pos += 1
                yield from self._items()
            else:
                self.fields[key] = self._decode(self._value(), f"field {key!r}")
        if self._peek(allow_end=True) != b"":
            raise ListStreamError("bytes after the list object")

    def _items(self) -> Iterator[dict[str, Any]]:
        first = True
        while True:
            if self._peek() == b"]":
                self._pos += 1
                return
            if not first:
                self._expect(b",")
            first = False
            item = self._decode(self._value(), "an item")
            if not isinstance(item, dict):
                raise ListStreamError("an item is not an object")
            yield item

    # -- bytes --------------------------------------------------------------------------

    def _more(self) -> bool:
        """Append the next chunk, dropping what was already consumed; False at the end of the answer."""
        if self._eof:
            return False
        for chunk in self._chunks:
            if chunk:
                self._buf = self._buf[self._pos :] + chunk
                self._pos = 0
                return True
        self._eof = True
        return False

    def _peek(self, allow_end: bool = False) -> bytes:
        """The next non-blank byte (not consumed); b"" at the end when ``allow_end``."""
        while True:
            buf, pos = self._buf, self._pos
            while pos < len(buf) and buf[pos] in _SPACE:
                pos += 1
            self._pos = pos
            if pos < len(buf):
                return buf[pos : pos + 1]
            if not self._more():
                if allow_end:
                    return b""
                raise ListStreamError("the answer ended early")

    def _expect(self, byte: bytes) -> None:
        found = self._peek()
        if found != byte:
            raise ListStreamError(f"expected {byte.decode()!r}, found {found.decode('latin-1')!r}")
        self._pos += 1

    def _value(self) -> bytes:
        """The bytes of the next JSON value, read until it is complete (its syntax is left to json.loads)."""
        opener = self._peek()
        start = self._pos
        if opener == b'"':
            return self._string_value(start)
        if opener not in (b"{", b"["):
            return self._scalar_value(start)
        depth = 0
        scan = start  # offsets are relative to the buffer, which _more() shifts by start
        while True:
            match = _STRUCTURE.search(self._buf, scan)
            if match is None:
                scan = len(self._buf)
                if not self._grow(start):
                    raise ListStreamError("the answer ended inside a value")
                scan -= start
                start = 0
                continue
            char = match.group()
            if char == b'"':
                end = self._string_end(match.end())
                if end < 0:
                    scan, start = self._regrow(start, match.start())
                    continue
                scan = end
                continue
            depth += 1 if char in b"[{" else -1
            scan = match.end()
            if depth == 0:
                self._pos = scan
                return self._buf[start:scan]

    def _string_value(self, start: int) -> bytes:
        while True:
            end = self._string_end(start + 1)
            if end >= 0:
                self._pos = end
                return self._buf[start:end]
            if not self._grow(start):
                raise ListStreamError("the answer ended inside a string")
            start = 0

    def _scalar_value(self, start: int) -> bytes:
        while True:
            match = _SCALAR_END.search(self._buf, start)
            if match is not None:
                self._pos = match.start()
                return self._buf[start : match.start()]
            if not self._grow(start):
                self._pos = len(self._buf)
                return self._buf[start:]
            start = 0

    def _string_end(self, pos: int) -> int:
        """Offset just past the quote closing the string whose body starts at ``pos``; -1 if not yet read."""
        buf = self._buf
        while True:
            match = _STRING_STOP.search(buf, pos)
            if match is None:
                return -1
            if match.group() == b'"':
                return match.end()
            pos = match.end() + 1  # skip the escaped byte (a \uXXXX tail holds no quote or backslash)
            if pos > len(buf):
                return -1

    def _grow(self, start: int) -> bool:
        """Keep the buffer from ``start`` and read one more chunk."""
        self._pos = start
        return self._more()

    def _regrow(self, start: int, resume: int) -> tuple[int, int]:
        """Read more inside a value whose string starting at ``resume`` is unfinished: (new resume, new start)."""
        if not self._grow(start):
            raise ListStreamError("the answer ended inside a string")
        return resume - start, 0

    @staticmethod
    def _decode(raw: bytes, what: str) -> Any:
        try:
            return json.loads(raw)
        except ValueError:
            raise ListStreamError(f"{what} is not valid JSON") from None
