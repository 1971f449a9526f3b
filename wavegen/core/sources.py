"""Turns ConfigMap and Secret bodies into ConfigSource values, as the API server would store them."""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import WavegenError
from .model import ConfigSource, SourceKey, SourceKind, TypedScalar, is_mapping

TYPE_CHECKING = False
if TYPE_CHECKING:
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


# YAML 1.1's tags of scalars that are no strings, as the stream's resolver gives them (the
# core reads no YAML).
_INT_TAG = "tag:yaml.org,2002:int"
_FLOAT_TAG = "tag:yaml.org,2002:float"
# Scalars YAML 1.1 reads as a timestamp, "=" or "<<", which go-yaml reads as strings, as written.
_GO_STRING_TAGS = frozenset(("tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:value", "tag:yaml.org,2002:merge"))


def _sent_as_string(scalar: TypedScalar) -> str | None:
    """The string kubectl, helm and Argo CD send for a scalar YAML 1.1 reads as no string, or None
    when they send no string either (then the API server refuses it in a ConfigMap's data).

    They turn YAML into JSON with sigs.k8s.io/yaml, whose go-yaml v2 reads as strings what it has no
    number for: a timestamp (``2024-01-15``, kept as written), ``=`` and ``<<`` as values,
    base-60 numbers (``12:30``: go-yaml has none), a number past its range (``0x`` and 17 hex
    digits, ``1e+400``), and a float starting with ``.`` whose ``_`` does not stand between two
    digits (``.5_``: Go's float parser refuses it). Held to sigs.k8s.io/yaml by recorded vectors
    and to a real API server end to end."""
    tag, text = scalar.tag, scalar.text
    if tag in _GO_STRING_TAGS:
        return text
    if tag != _INT_TAG and tag != _FLOAT_TAG:
        return None
    if ":" in text:
        return text
    if text[:1] == "." and not all(text[at - 1].isdigit() and text[at + 1 : at + 2].isdigit() for at in _underscores(text)):
        return text  # go-yaml parses ".5_5" as Go does, where a "_" stands between two digits
    plain = text.replace("_", "")
    unsigned = plain.lstrip("+-")
    try:
        if unsigned[:2] in ("0x", "0b"):
            digits = unsigned[2:]
            if not digits:
                return text  # "0x_": no number to go-yaml
            magnitude = int(digits, 16 if unsigned[1] == "x" else 2)
            # Unsigned, it must fit a uint64; signed, an int64.
            fits = magnitude < (1 << 64) if plain[0] == "0" else magnitude <= (1 << 63) - (plain[0] == "+")
            return None if fits else text
        if "inf" in plain.lower() or "nan" in plain.lower():
            return None  # ".inf", ".nan": go-yaml's floats too
        # Past float64's range go-yaml's number parsers fail, and it keeps the text.
        return text if abs(float(plain)) == float("inf") else None
    except ValueError:
        return None  # an explicit !!int or !!float on text that is no number: go-yaml refuses it too


def _underscores(text: str) -> list[int]:
    return [at for at, char in enumerate(text) if char == "_"]


def _stored_key(key: object) -> str | None:
    """The key the API server stores for a data key YAML 1.1 reads as no string: a decimal integer
    (ingress-nginx's tcp-services ConfigMap: ``5432: ns/svc:5432``) as its digits, which
    sigs.k8s.io/yaml writes for it, and a key go-yaml reads as a string as written (see
    _sent_as_string; a ``<<`` key merges, never reaching here). None for any other key that is
    not a string: hex, octal and ``_`` spellings (sigs.k8s.io/yaml writes their decimal value),
    floats, booleans and nulls."""
    if not isinstance(key, TypedScalar):
        return None
    sent = _sent_as_string(key)
    if sent is not None or key.tag != _INT_TAG:
        return sent
    text = key.text
    digits = text[1:] if text[:1] == "-" else text
    if digits.isascii() and digits.isdigit() and (digits == "0" or digits[0] != "0") and len(digits) <= 18:
        return text
    return None


def _string_map(body: Mapping[str, Any], field: str, what: str) -> dict[str, str]:
    value = body.get(field)
    if value is None:
        return {}
    if not is_mapping(value):
        raise SourceError(f"{what}: '{field}' must be a mapping of key to string", field)
    out: dict[str, str] = {}
    for key, item in value.items():
        if not isinstance(key, str):
            stored = _stored_key(key)
            if stored is None:
                raise SourceError(f"{what}: '{field}' has a non-string key (quote it)", field)
            key = stored
        if not isinstance(item, str):
            sent = _sent_as_string(item) if isinstance(item, TypedScalar) else None
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
    if not raw:
        return out
    import binascii  # a C module that costs a run without Secret data 0.2 ms to load

    for key, text in raw.items():
        try:
            # The API server decodes with Go's StdEncoding, which skips CR and LF.
            if "\n" in text or "\r" in text:
                text = text.replace("\n", "").replace("\r", "")
            # What base64.b64decode(text, validate=True) does, without its Python-level wrapper.
            out[key] = binascii.a2b_base64(text.encode("ascii"), strict_mode=True)
        except (binascii.Error, ValueError):
            # Never echo the value: it may be a secret.
            raise SourceError(f"{what}: '{field}.{key}' is not valid base64", f"{field}.{key}") from None
    return out


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
