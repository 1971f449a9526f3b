"""Node trees the subset reader builds without PyYAML, and lookups that read them and libyaml's alike."""

from __future__ import annotations

from . import patterns
from .resolver import STR_TAG

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Iterator
    from typing import Any, TypeGuard

    import yaml.nodes

# Composing (Cython, C-recursive), converting and the ruamel fallback all recurse once per
# nesting level: a deep document would overflow the C stack (segfault) or exhaust Python's
# recursion limit, and libyaml's flow-level bookkeeping is quadratic in the depth.
MAX_DEPTH = 128
# An alias can make a small document describe an enormous one; refuse before expanding.
MAX_EXPANDED_NODES = 1_000_000
# An anchor or an alias that is all of a value, and a comment after it (libyaml's name
# characters): what the subset reader and the pass-through check take of them. A property
# before a scalar or a tag, or followed by what a name may not hold, is left to libyaml.
PROPERTY = r"[&*]([0-9A-Za-z_-]++)(?: *+| ++#.*+)"


class Position:
    """The part of a libyaml mark the splicer reads: where a node starts or ends (a full yaml Mark costs 3x as much)."""

    __slots__ = ("column", "line")

    def __init__(self, line: int, column: int) -> None:
        self.line = line
        self.column = column


class Node:
    """A node as PyYAML's nodes are: tag, value and start and end marks (read for line and column).

    Its own classes so that the subset reader's path never imports PyYAML; code that reads
    nodes of both kinds tells them apart by ``id``, the class attribute PyYAML's nodes
    have too ("scalar", "sequence", "mapping").
    """

    __slots__ = ("end_mark", "start_mark", "tag", "value")
    id = ""

    def __init__(self, tag: str, value: Any, start_mark: Any, end_mark: Any) -> None:
        self.tag = tag
        self.value = value
        self.start_mark = start_mark
        self.end_mark = end_mark


class ScalarNode(Node):
    __slots__ = ("style",)
    id = "scalar"

    def __init__(self, tag: str, value: str, start_mark: Any, end_mark: Any, style: str | None = None) -> None:
        super().__init__(tag, value, start_mark, end_mark)
        self.style = style


class CollectionNode(Node):
    __slots__ = ("flow_style",)

    def __init__(self, tag: str, value: Any, start_mark: Any, end_mark: Any, flow_style: bool | None = None) -> None:
        super().__init__(tag, value, start_mark, end_mark)
        self.flow_style = flow_style


class SequenceNode(CollectionNode):
    __slots__ = ()
    id = "sequence"


class MappingNode(CollectionNode):
    __slots__ = ()
    id = "mapping"


if TYPE_CHECKING:
    AnyNode = Node | yaml.nodes.Node
    AnyScalar = ScalarNode | yaml.nodes.ScalarNode
    AnyMapping = MappingNode | yaml.nodes.MappingNode
    AnySequence = SequenceNode | yaml.nodes.SequenceNode


def is_scalar(node: AnyNode | None) -> TypeGuard[AnyScalar]:
    return getattr(node, "id", None) == "scalar"


def is_mapping(node: AnyNode | None) -> TypeGuard[AnyMapping]:
    return getattr(node, "id", None) == "mapping"


def is_sequence(node: AnyNode | None) -> TypeGuard[AnySequence]:
    return getattr(node, "id", None) == "sequence"


def mapping_get(node: AnyMapping, key: str) -> tuple[AnyNode, AnyNode] | None:
    """The (key node, value node) pair for a string key of a mapping node."""
    for key_node, value_node in node.value:
        if is_scalar(key_node) and key_node.value == key and key_node.tag == STR_TAG:
            return key_node, value_node
    return None


def node_at(root: AnyNode, path: tuple[str, ...]) -> AnyNode | None:
    """Follow mapping keys from root; None where the path does not exist."""
    node: AnyNode | None = root
    for part in path:
        if not is_mapping(node):
            return None
        pair = mapping_get(node, part)
        node = pair[1] if pair else None
    return node


def list_item(root: AnyNode, item: int) -> AnyNode | None:
    """An item of a List document's ``items`` sequence (None: there is none)."""
    items = node_at(root, ("items",))
    if not is_sequence(items) or item >= len(items.value):
        return None
    return items.value[item]  # type: ignore[no-any-return]


def line_of(root: AnyNode, dotted: str) -> int:
    """1-based line (within the document) a field path points at.

    With a list index in the path this is the line of the innermost list
    item reached (the ``env`` or ``envFrom`` entry, the volume, the projected
    source), so a finding points at the exact entry; without one, the line
    of the last key found. The root's line when nothing is found.
    """
    line = int(root.start_mark.line)
    item_line: int | None = None
    node: AnyNode = root
    for index, key in field_parts(dotted):
        if index is not None:
            if not is_sequence(node) or index >= len(node.value):
                break
            node = node.value[index]
            item_line = line = int(node.start_mark.line)
            continue
        if not is_mapping(node):
            break
        pair = mapping_get(node, key)
        if pair is None:
            break
        line = int(pair[0].start_mark.line)
        node = pair[1]
    return (item_line if item_line is not None else line) + 1


# A field path: dotted mapping keys, ``[N]`` list indexes, ``[key]`` for keys holding dots
# (``metadata.annotations[wavegen.io/extra-secrets]``).
# Compiled when first needed (patterns keeps it): only findings ask for it.
def _field_part() -> re.Pattern[str]:
    return patterns.compile(r"\[([^\]]*)\]|([^.\[]+)")


def field_parts(dotted: str) -> Iterator[tuple[int | None, str]]:
    """The parts of a field path: (index, "") for ``[N]``, (None, key) for a key."""
    for match in _field_part().finditer(dotted):
        bracket, name = match.groups()
        if bracket is not None and bracket.isdigit():
            yield int(bracket), ""
        else:
            yield None, name if bracket is None else bracket
