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


# YAML's tag of a scalar read as an integer (the stream's resolver gives it; the core reads no YAML).
_INT_TAG = "tag:yaml.org,2002:int"


def _stored_key(key: object) -> str | None:
    """The key the API server stores for a data key YAML reads as a decimal integer (ingress-nginx's
    tcp-services ConfigMap: ``5432: ns/svc:5432``): kubectl, helm and Argo CD turn YAML into JSON
    with sigs.k8s.io/yaml, which writes such a key as its digits. None for any other key that is
    not a string: hex, octal, "_" or sexagesimal spellings (go-yaml and PyYAML read some of them
    apart), floats, booleans and nulls."""
    if not isinstance(key, TypedScalar) or key.tag != _INT_TAG:
        return None
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
            if item is not None:
                raise SourceError(
                    f"{what}: '{field}.{key}' is not a string (the API server rejects it; quote the value)", f"{field}.{key}"
                )
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
