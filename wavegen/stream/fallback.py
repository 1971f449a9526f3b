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


def _set_annotations(
    root: Any, item: int | None, path: Sequence[str], desired: Mapping[str, str | None], shared: set[int]
) -> None:
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString

    node = root["items"][item] if item is not None else root
    # A mapping an alias names too (the workload's own metadata, say) would change in every
    # place that names it: the template's way to its annotations gets copies of its own, from
    # the first such mapping on (everything inside one is shared with the other places).
    apart = False
    for part in path:
        child = node[part]
        if apart or id(child) in shared:
            apart = True
            child = node[part] = CommentedMap(child.items())
        node = child
    metadata = node.get("metadata")
    if metadata is None:
        if all(v is None for v in desired.values()):
            return
        metadata = node["metadata"] = CommentedMap()
    elif apart or id(metadata) in shared:
        apart = True
        metadata = node["metadata"] = CommentedMap(metadata.items())
    annotations = metadata.get("annotations")
    if annotations is None:
        if all(v is None for v in desired.values()):
            return
        annotations = metadata["annotations"] = CommentedMap()
    elif apart or id(annotations) in shared:
        annotations = metadata["annotations"] = CommentedMap(annotations.items())
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
        shared = _shared(root)
        for item, path, desired in changes:
            _set_annotations(root, item, path, desired, shared)
        out = io.StringIO()
        yaml.dump(root, out)
    except Exception as err:  # ruamel raises many unrelated types; report one line
        raise WavegenError(f"cannot re-emit document: {type(err).__name__}") from None
    rendered = out.getvalue()
    if "\r\n" in text:
        rendered = rendered.replace("\n", "\r\n")
    return head + rendered + tail


def _shared(root: Any) -> set[int]:
    """The mappings and sequences of a loaded document that it holds in more than one place (an anchor's, named by an alias)."""
    seen: set[int] = set()
    shared: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if not isinstance(node, (dict, list)):
            continue
        if id(node) in seen:
            shared.add(id(node))
            continue
        seen.add(id(node))
        stack.extend(node.values() if isinstance(node, dict) else node)
    return shared
