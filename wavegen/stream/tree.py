"""Node trees for the splicer and lookups in them, apart from composing documents with libyaml."""

from __future__ import annotations

from yaml.nodes import MappingNode, Node, ScalarNode

from .resolver import STR_TAG

# Composing (Cython, C-recursive), converting and the ruamel fallback all recurse once per
# nesting level: a deep document would overflow the C stack (segfault) or exhaust Python's
# recursion limit, and libyaml's flow-level bookkeeping is quadratic in the depth.
MAX_DEPTH = 128


def mapping_get(node: MappingNode, key: str) -> tuple[Node, Node] | None:
    """The (key node, value node) pair for a string key of a mapping node."""
    for key_node, value_node in node.value:
        if isinstance(key_node, ScalarNode) and key_node.value == key and key_node.tag == STR_TAG:
            return key_node, value_node
    return None


def node_at(root: Node, path: tuple[str, ...]) -> Node | None:
    """Follow mapping keys from root; None where the path does not exist."""
    node: Node | None = root
    for part in path:
        if not isinstance(node, MappingNode):
            return None
        pair = mapping_get(node, part)
        node = pair[1] if pair else None
    return node
