"""Turns ConfigMap and Secret bodies into ConfigSource values, as the API server would store them."""

from __future__ import annotations

from _collections_abc import Mapping

from ..errors import WavegenError
from .model import ConfigSource, SourceKey, SourceKind, TypedScalar, is_mapping

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

IGNORE_ANNOTATION = "wavegen.io/ignore"


class SourceError(WavegenError):
    """Invalid ConfigMap/Secret content; ``field`` is the dotted path, for locating the line."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field

    def __reduce__(self) -> tuple[type[SourceError], tuple[str, str], dict[str, object]]:
        # Kept in what the reader read, which a forked reader pickles (see stream/forked.py).
        return SourceError, (self.message, self.field), self.__dict__


def _string_map(body: Mapping[str, Any], field: str, what: str) -> Mapping[str, str]:
    value = body.get(field)
    if value is None:
        return {}
    if value.__class__ is not dict:
        from .textdata import TextData  # (imported only where a reader made one)

        if value.__class__ is TextData:
            return value  # strings to strings, some not made yet: kept so
    if not is_mapping(value):
        raise SourceError(f"{what}: '{field}' must be a mapping of key to string", field)
    out: dict[str, str] = {}
    for key, item in value.items():
        if not isinstance(key, str):
            # Imported here: a run whose data holds strings only (the usual one) never needs it.
            from .yamltojson import stored_key

            stored = stored_key(key)
            if stored is None:
                raise SourceError(f"{what}: '{field}' has a non-string key (quote it)", field)
            key = stored
        if not isinstance(item, str):
            if isinstance(item, TypedScalar):
                from .yamltojson import sent_as_string

                sent = sent_as_string(item)
            else:
                sent = None
            if sent is not None:
                item = sent
            elif item is not None:
                raise SourceError(
                    f"{what}: '{field}.{key}' is not a string (the API server rejects it; quote the value)", f"{field}.{key}"
                )
            else:
                item = ""
        out[key] = item
    return out


def _decode_map(raw: Mapping[str, str], field: str, what: str) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for key, text in raw.items():
        # The API server decodes with Go's StdEncoding, which skips CR and LF.
        if "\n" in text or "\r" in text:
            text = text.replace("\n", "").replace("\r", "")
        decoded = _decode_base64(text)
        if decoded is None:
            # Never echo the value: it may be a secret.
            raise SourceError(f"{what}: '{field}.{key}' is not valid base64", f"{field}.{key}")
        out[key] = decoded
    return out


# binascii is a C module that costs a run about 0.25 ms to load (it loads zlib too); Python decodes
# base64 about 4 times slower a character (4 ns here), so the Secrets of a chart (certificates
# included) decode in less time than the import. Past this many characters in a process, which take
# Python about as long as the import, binascii decodes the rest.
_PYTHON_BASE64_CHARS = 64 * 1024
_python_decoded = [0]  # characters decoded in Python so far in this process
_BASE64_DIGITS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def _octal_table(digit_of: Callable[[int], int]) -> bytes:
    """A bytes.translate table: each base64 digit to one octal digit of its 6 bits, any other byte to "x"."""
    table = bytearray(b"x" * 256)
    for value, digit in enumerate(_BASE64_DIGITS):
        table[digit] = ord("0") + digit_of(value)
    return bytes(table)


_HIGH_OCTAL = _octal_table(lambda value: value >> 3)
_LOW_OCTAL = _octal_table(lambda value: value & 7)
# (trailing "=" count, number of digits mod 4) of the texts base64 takes: whole groups of four
# digits, the last perhaps two digits and "==" or three and "=".
_BASE64_ENDINGS = frozenset(((0, 0), (1, 3), (2, 2)))


def _decode_base64(text: str) -> bytes | None:
    """``text`` decoded as the API server decodes it (Go's ``base64.StdEncoding``, once CR and LF
    are dropped), or None where it refuses it: padding only to end the last group, digits
    only, the bits past the last byte ignored. That is binascii's strict mode since Python 3.13;
    before, it also took "=" after a whole group ("AAAA="), which the ending check refuses first.
    """
    # The padding from the last three characters (three or more: refused), not text.rstrip("="),
    # which copies a megabyte of base64 that ends with one.
    tail = text[-3:]
    count = len(text) - len(tail) + len(tail.rstrip("="))
    if (len(text) - count, count % 4) not in _BASE64_ENDINGS:
        return None
    if _python_decoded[0] + count > _PYTHON_BASE64_CHARS:
        import binascii

        try:
            # (a str of ASCII as it is: encoded to bytes first, a megabyte was one more at the peak)
            return binascii.a2b_base64(text, strict_mode=True)
        except (binascii.Error, ValueError):
            return None
    _python_decoded[0] += count
    if not count:
        return b""
    digits = text[:count]
    if not digits.isascii():
        return None
    # Each digit as two octal digits, by two C translations and one interleaving: int() reads them
    # in one C pass, and refuses the "x" of anything that is not a digit ("=" inside, a space).
    raw = digits.encode("ascii")
    octal = bytearray(2 * count)
    octal[0::2] = raw.translate(_HIGH_OCTAL)
    octal[1::2] = raw.translate(_LOW_OCTAL)
    try:
        value = int(octal, 8)
    except ValueError:
        return None
    bits = 6 * count
    return (value >> (bits % 8)).to_bytes(bits // 8, "big")


def metadata_annotations(body: Mapping[str, Any]) -> dict[str, str]:
    """String-valued annotations of an object's metadata (others are ignored)."""
    metadata = body.get("metadata")
    annotations = metadata.get("annotations") if is_mapping(metadata) else None
    if not annotations or not is_mapping(annotations):
        return {}
    return {k: v for k, v in annotations.items() if isinstance(k, str) and isinstance(v, str)}


def config_source(kind: SourceKind, namespace: str, name: str, body: Mapping[str, Any]) -> ConfigSource:
    """Build the stored form of a ConfigMap or Secret body; raises SourceError on invalid content."""
    what = f"{kind} {namespace}/{name}"
    annotations = metadata_annotations(body)
    ignored = annotations.get(IGNORE_ANNOTATION, "").lower() == "true"
    key = SourceKey(kind, namespace, name)
    if kind == "ConfigMap":
        text_data = _string_map(body, "data", what)
        binary = _decode_map(_string_map(body, "binaryData", what), "binaryData", what)
        overlap = sorted(set(text_data) & set(binary)) if binary else None
        if overlap:
            raise SourceError(f"{what}: key '{overlap[0]}' is in both data and binaryData", f"binaryData.{overlap[0]}")
        return ConfigSource(key, text_data, binary, annotations, ignored)
    data = _decode_map(_string_map(body, "data", what), "data", what)
    if body.get("stringData") is not None:
        for string_key, text in _string_map(body, "stringData", what).items():
            data[string_key] = text.encode("utf-8")
    return ConfigSource(key, {}, data, annotations, ignored)
