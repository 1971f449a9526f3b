"""The anchors, aliases and merge keys of a document the subset reader reads, as libyaml's path reads them.

Imported by fastparse when a document first holds one (most bundles have none, and a run
need not build this module's classes). The reader takes an anchor that is all of a key's or
an item's value (``key: &name`` with its block on the next lines, or null), an alias that is
all of one (``key: *name``, ``- *name``) and a merge key of an alias (``<<: *name``, and
``!!merge <<: *name`` as yq writes it); libyaml's path shares what an alias names (to_python in
nodes.py), and merges a mapping's merge keys after its own keys, each source's new keys in turn.
"""

from __future__ import annotations

from . import patterns
from .tree import MAX_EXPANDED_NODES, PROPERTY

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..core.plan import FieldTree

_UNDEFINED = object()


class Anchors:
    """A document's anchors as the reader defines them, the merge keys it met (applied at its end,
    in the order met: a merge key's alias follows its anchor's collection, so that collection's own
    merge keys come first), and whether an alias or merge key was used (libyaml's has_alias).

    libyaml's path refuses a document whose aliases expand it past MAX_EXPANDED_NODES nodes. Each
    alias adds what it names, expanded, to a count that starts at the document's characters (no
    node takes less than one); past the limit it is ``parsed_only``. The count is taken as
    aliases are met: the reader may drop a collection nobody reads, and what its aliases expand.
    ``refuse``: what to raise for a property outside the subset.
    """

    __slots__ = ("defined", "expanded", "merges", "parsed_only", "refuse", "sizes", "sources", "used")

    def __init__(self, lines: list[str], refuse: type[Exception]) -> None:
        self.refuse = refuse
        self.defined: dict[str, Any] = {}
        self.merges: list[tuple[dict[Any, Any], Any]] = []
        self.used = False
        # libyaml's parser takes the document, but its composer or libyaml's path refuses it or
        # reads another value (see fastparse.PARSED_ONLY)
        self.parsed_only = False
        self.expanded = sum(map(len, lines)) + len(lines)
        self.sizes: dict[int, int] = {}  # expanded sizes of closed collections, by id
        self.sources: dict[int, list[Any]] = {}  # what the merge keys of a mapping name, by its id

    def name(self, rest: str) -> str:
        """The name of the anchor or alias that is all of ``rest``."""
        match = patterns.fullmatch(PROPERTY, rest)
        if match is None:
            raise self.refuse
        return match.group(1)

    def define(self, name: str, value: Any) -> None:
        if name in self.defined:
            self.parsed_only = True  # libyaml's composer refuses a second anchor of a name
        self.defined[name] = value

    def target(self, rest: str, block: Any, enclosing: list[tuple[int, Any, bool, FieldTree | None]]) -> Any:
        """What the alias that is all of ``rest`` names, shared as libyaml's path shares it."""
        value = self.defined.get(self.name(rest), _UNDEFINED)
        if value is _UNDEFINED:
            self.parsed_only = True  # an undefined alias: libyaml's composer refuses it
            return None
        if (value.__class__ is dict or value.__class__ is list) and (
            value is block or any(value is around[1] for around in enclosing)
        ):
            self.parsed_only = True  # inside its own anchor's collection: the value would hold itself
        self.used = True
        if not self.parsed_only:
            self.expanded += expanded_size(value, self.sizes, self.sources)
            if self.expanded > MAX_EXPANDED_NODES:
                self.parsed_only = True  # libyaml's path refuses it
        return value

    def merge(self, mapping: dict[Any, Any], source: Any) -> None:
        self.merges.append((mapping, source))
        self.sources.setdefault(id(mapping), []).append(source)
        self.used = True

    def apply(self) -> None:
        """Merge what each merge key names into its mapping, as libyaml's path does (the mapping's
        own keys first, then each source's new ones, in order)."""
        if self.parsed_only:
            return
        for mapping, source in self.merges:
            for each in source if source.__class__ is list else (source,):
                if each.__class__ is not dict:
                    self.parsed_only = True  # a merge of no mapping: libyaml's path refuses it
                    return
                for key, value in each.items():
                    mapping.setdefault(key, value)


def expanded_size(value: Any, sizes: dict[int, int], merged: dict[int, list[Any]]) -> int:
    """The nodes a closed collection (or scalar) stands for with its aliases expanded, counted as
    libyaml's path counts them: a mapping's merge keys count what they name (``merged``, by id)."""
    kind = value.__class__
    if kind is not dict and kind is not list:
        return 1
    known = sizes.get(id(value))
    if known is not None:
        return known
    if kind is dict:
        total = 1 + sum(1 + expanded_size(item, sizes, merged) for item in value.values())
        total += sum(1 + expanded_size(source, sizes, merged) for source in merged.get(id(value), ()))
    else:
        total = 1 + sum(expanded_size(item, sizes, merged) for item in value)
    sizes[id(value)] = total = min(total, MAX_EXPANDED_NODES + 1)
    return total
