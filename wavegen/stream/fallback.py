"""Structural round trip through ruamel.yaml for the rare document that cannot be spliced as text."""

from __future__ import annotations

import io
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import WavegenError

_LEADING = re.compile(r"(?:[ \t]*(?:#[^\r\n]*)?(?:\r\n|\n)|---[ \t]*(?:#[^\r\n]*)?(?:\r\n|\n)|%[^\r\n]*(?:\r\n|\n))*")
_MARKER_WITH_CONTENT = re.compile(r"---[ \t]+")
_TRAILING_END = re.compile(r"(?:\r\n|\n)\.\.\.[^\r\n]*(?:\r\n|\n)?\Z")

Change = tuple[int | None, tuple[str, ...], Mapping[str, str | None]]


def _split(text: str) -> tuple[str, str, str]:
    prefix = _LEADING.match(text)
    head = prefix.group(0) if prefix else ""
    rest = text[len(head) :]
    marker = _MARKER_WITH_CONTENT.match(rest)
    if marker:
        head += marker.group(0)
        rest = rest[marker.end() :]
    end = _TRAILING_END.search(rest)
    tail = ""
    if end:
        tail = rest[end.start() :]
        rest = rest[: end.start()] + ("\r\n" if tail.startswith("\r\n") else "\n")
        tail = tail.lstrip("\r\n")
    return head, rest, tail


def _set_annotations(root: Any, item: int | None, path: Sequence[str], desired: Mapping[str, str | None]) -> None:
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString

    node = root["items"][item] if item is not None else root
    for part in path:
        node = node[part]
    metadata = node.get("metadata")
    if metadata is None:
        if all(v is None for v in desired.values()):
            return
        metadata = node["metadata"] = CommentedMap()
    annotations = metadata.get("annotations")
    if annotations is None:
        if all(v is None for v in desired.values()):
            return
        annotations = metadata["annotations"] = CommentedMap()
    for key, value in desired.items():
        if value is None:
            annotations.pop(key, None)
        else:
            annotations[key] = DoubleQuotedScalarString(value)


def roundtrip(text: str, changes: Sequence[Change]) -> str:
    """Re-emit one document with annotation changes applied, keeping comments where ruamel can."""
    from ruamel.yaml import YAML

    head, body, tail = _split(text)
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 1 << 16
    yaml.indent(mapping=2, sequence=4, offset=2)
    try:
        root = yaml.load(body)
        for item, path, desired in changes:
            _set_annotations(root, item, path, desired)
        out = io.StringIO()
        yaml.dump(root, out)
    except Exception as err:  # ruamel raises many unrelated types; report one line
        raise WavegenError(f"cannot re-emit document: {type(err).__name__}") from None
    rendered = out.getvalue()
    if "\r\n" in text:
        rendered = rendered.replace("\n", "\r\n")
    return head + rendered + tail
