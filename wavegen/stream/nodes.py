"""Composes one document with libyaml and converts its node tree to plain Python values."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ..core.model import TypedScalar
from ..core.record import Record
from ..errors import WavegenError
from .resolver import BOOL_TAG, MAP_TAG, MERGE_TAG, NULL_TAG, SEQ_TAG, STR_TAG
from .tree import MAX_DEPTH, MAX_EXPANDED_NODES, node_at

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ClassVar


try:
    from yaml import CSafeLoader as _Loader
    from yaml._yaml import CParser as _CParser

    HAVE_LIBYAML = True
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

    HAVE_LIBYAML = False

_TRUE_WORDS = frozenset(("yes", "true", "on", "y"))


# Cheap bound first: every flow level needs a "[" or "{", and block levels are bounded by
# the longest indentation/indicator prefix of a line. A column of that prefix holds at
# most two block levels (a mapping and a sequence sitting at its key's column, whose item
# starts on the next line, one column in). When every "- " has its item on the same line
# and no line starts with "?" or ":" (kubectl, helm and kustomize write nothing else), a
# "- " adds two columns for at most two levels, so a column holds at most one level.
# A document with few enough flow openers and no line prefix this long cannot nest
# deeper than MAX_DEPTH, so it is never walked.
def _prefix_limit(flow_openers: int, compact: bool) -> int:
    if compact:
        return MAX_DEPTH - 2 - flow_openers
    return (MAX_DEPTH - 4 - flow_openers) // 2


# A line that can open two levels in one column, or more than one per indicator.
# Possessive quantifiers: without backtracking over indentation the scan is several times faster.
_LOOSE = r" *+(?:\t|[?:]|-[ \t]*+(?:\n|\Z)|-[ \t]++[-?:](?:[ \t\n]|\Z))"
_LOOSE_LINE = re.compile("\n" + _LOOSE)
_LOOSE_FIRST_LINE = re.compile(_LOOSE)


# Where a flow collection can open: at a line's start, after an indicator ("-", ":", "?",
# ",", "[", "{") or after a tag or anchor. A "[" inside a plain scalar ("[]string" in a
# description) is not counted; quoted and block scalars may be (which only errs safe).
_OPENS_AFTER = frozenset("-:?,[{")


def _flow_openers(text: str) -> int:
    count = 0
    for bracket in "[{":
        start = text.find(bracket)
        while start >= 0:
            head = text[text.rfind("\n", 0, start) + 1 : start].rstrip(" \t")
            if not head or head[-1] in _OPENS_AFTER or head.rsplit(None, 1)[-1][0] in "!&":
                count += 1
            start = text.find(bracket, start + 1)
    return count


def _within(text: str, flow_openers: int, *, compact: bool) -> bool:
    """Whether the bound alone shows the text nests no deeper than MAX_DEPTH."""
    # Rounded down (a shorter prefix only errs safe) so that a handful of patterns serve
    # every document: compiling one per bracket count cost more than the checks.
    prefix = _prefix_limit(flow_openers, compact) // 8 * 8
    if prefix <= 0:
        return False
    later, first = _deep_line(prefix)
    return not later.search(text) and not first.match(text)


@functools.cache
def _deep_line(prefix: int) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Patterns for a line (later, or the first) whose prefix is at least ``prefix`` characters."""
    # "\n" as a literal prefix instead of "^" with re.M: several times faster to scan.
    return re.compile(f"\n[ \t?:-]{{{prefix}}}"), re.compile(f"[ \t?:-]{{{prefix}}}")


def yaml_error(
    err: yaml.YAMLError, file: str, document: int, line_offset: int, source: str = "", template: str = ""
) -> WavegenError:
    """One-line message for a libyaml/PyYAML error, positioned in the whole stream."""
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    problem = getattr(err, "problem", None) or str(err).splitlines()[0]
    context = getattr(err, "context", None)
    text = f"invalid YAML: {problem}" + (f" ({context})" if context else "")
    if mark is not None:
        line = mark.line + 1 + line_offset
    elif isinstance(err, yaml.reader.ReaderError) and source:
        # Reader errors (control characters) carry a UTF-8 byte offset, not a mark.
        line = source.encode("utf-8", "surrogatepass")[: err.position].count(b"\n") + 1 + line_offset
    else:
        line = line_offset + 1
    return WavegenError(text, file=file, document=document, line=line, template=template)


_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def _bracket_lines(text: str) -> Iterator[str]:
    """The lines of text that hold a "[" or "{", each once, found at C speed."""
    square, curly = text.find("["), text.find("{")
    while square >= 0 or curly >= 0:
        found = curly if square < 0 or 0 <= curly < square else square
        start = text.rfind("\n", 0, found) + 1
        end = text.find("\n", found)
        end = len(text) if end < 0 else end
        yield text[start:end]
        # each search resumes past this line, so the text is scanned once for each bracket kind
        if square >= 0 and square < end:
            square = text.find("[", end)
        if curly >= 0 and curly < end:
            curly = text.find("{", end)


def _flow_levels(text: str) -> int:
    """A finer bound on how deep flow collections nest at any point of the text.

    A line without quotes or "#" whose brackets nest properly and close on it holds flow
    collections that end on it (inside a flow collection nothing else can hold a bracket),
    so it adds its own nesting at that line only; the openers of every other line count as
    if all of them stayed open (as _flow_openers does).
    """
    across = within = 0
    for line in _bracket_lines(text):
        if '"' not in line and "'" not in line and "#" not in line:
            depth = peak = 0
            for bracket in _NOT_BRACKET.sub("", line):
                depth += 1 if bracket in "[{" else -1
                if depth < 0:
                    break
                peak = max(peak, depth)
            if depth == 0:
                within = max(within, peak)
                continue
        across += _flow_openers(line)
    return across + within


def check_depth(text: str) -> None:
    """Refuse a document nesting deeper than MAX_DEPTH before anything recursive sees it.

    Costs a few C-speed scans for ordinary documents; a finer bound looks at documents
    with deep lines or many brackets, and only documents that might still be deep are
    walked event by event, a walk that stops at the first level too many.
    """
    if _within(text, text.count("[") + text.count("{"), compact=False):
        return
    compact = not _LOOSE_LINE.search(text) and not _LOOSE_FIRST_LINE.match(text)
    if _within(text, _flow_openers(text), compact=compact):
        return
    if _within(text, _flow_levels(text), compact=compact):
        return
    next_event: Callable[[], Any] = _CParser(text).get_event if HAVE_LIBYAML else yaml.parse(text, Loader=_Loader).__next__
    depth = 0
    while True:
        try:
            event = next_event()
        except yaml.scanner.ScannerError as err:
            # libyaml >= 0.2.6 (bundled in PyYAML 6.0.4) has a flow-depth limit of its own,
            # met while it scans ahead, before our walk reaches MAX_DEPTH events deep.
            if err.problem != "exceeded maximum nesting depth" or err.problem_mark is None:
                raise
            line = err.problem_mark.line + 1
            raise WavegenError(f"document nests deeper than {MAX_DEPTH} levels; refusing it", line=line) from None
        event_type = type(event)
        if event_type is yaml.MappingStartEvent or event_type is yaml.SequenceStartEvent:
            depth += 1
            if depth > MAX_DEPTH:
                raise WavegenError(f"document nests deeper than {MAX_DEPTH} levels; refusing it", line=event.start_mark.line + 1)
        elif event_type is yaml.MappingEndEvent or event_type is yaml.SequenceEndEvent:
            depth -= 1
        elif event_type is yaml.StreamEndEvent:
            return


def validate_piece(text: str) -> None:
    """Syntax-check one document we do not otherwise parse (raises yaml.YAMLError)."""
    check_depth(text)
    if HAVE_LIBYAML:
        _CParser(text).raw_parse()
    else:  # pragma: no cover
        for _ in yaml.parse(text, Loader=_Loader):
            pass


def libyaml_accepts(text: str | bytes) -> bool:
    """Whether libyaml parses the text (or its UTF-8 bytes) without error, in one C pass (nothing is built)."""
    try:
        _CParser(text).raw_parse()
    except yaml.YAMLError:
        return False
    return True


class _LeanResolveLoader(_Loader):
    """The safe loader with a leaner resolver: the same tags, far fewer Python steps per scalar.

    SafeLoader has no path resolvers and no wildcard implicit resolvers, so
    resolving is a lookup by first character; PyYAML's generic version builds
    lists and checks path state for every node, a quarter of compose time.
    """

    _by_first_char: ClassVar[dict[str | None, tuple[tuple[str, re.Pattern[str]], ...]]] = {
        first: tuple(pairs) for first, pairs in _Loader.yaml_implicit_resolvers.items()
    }

    def resolve(self, kind: type[Node], value: Any, implicit: Any) -> str:
        if kind is ScalarNode:
            if implicit[0]:
                for tag, regexp in self._by_first_char.get(value[:1], ()):
                    if regexp.match(value):
                        return tag
            return STR_TAG
        return SEQ_TAG if kind is SequenceNode else MAP_TAG

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        return None

    def ascend_resolver(self) -> None:
        return None


# The lean resolver is only equivalent while SafeLoader keeps these properties.
assert not _Loader.yaml_path_resolvers and None not in _Loader.yaml_implicit_resolvers


def compose(text: str, depth_checked: bool = False) -> Node | None:
    """The node tree of a single-document text (None for an empty one); ``depth_checked``: the
    caller knows the text within the depth limit (check_depth found it so, or it was composed)."""
    if not depth_checked:
        check_depth(text)
    loader = _LeanResolveLoader(text)
    try:
        return loader.get_single_node()
    finally:
        loader.dispose()


class Converted(Record, hashable=False):
    __slots__ = ("has_alias", "value")
    value: Any
    has_alias: bool

    def __init__(self, value: Any, has_alias: bool) -> None:
        self.value = value
        self.has_alias = has_alias


class DuplicateKeyError(WavegenError):
    pass


def _scalar(node: ScalarNode) -> Any:
    tag = node.tag
    if tag == STR_TAG:
        return node.value
    if tag == NULL_TAG:
        return None
    if tag == BOOL_TAG:
        return node.value.lower() in _TRUE_WORDS
    return TypedScalar(tag, node.value)


def _expanded_size(node: Node, sizes: dict[int, int]) -> int:
    known = sizes.get(id(node))
    if known is not None:
        return known
    sizes[id(node)] = 1  # provisional, guards against recursive aliases
    if isinstance(node, MappingNode):
        total = 1 + sum(_expanded_size(k, sizes) + _expanded_size(v, sizes) for k, v in node.value)
    elif isinstance(node, SequenceNode):
        total = 1 + sum(_expanded_size(child, sizes) for child in node.value)
    else:
        total = 1
    sizes[id(node)] = min(total, MAX_EXPANDED_NODES + 1)
    return sizes[id(node)]


def _duplicate(key: Any, key_node: Node) -> DuplicateKeyError:
    return DuplicateKeyError(f"duplicate key {key!r}", line=key_node.start_mark.line + 1)


class _NeedsAliasPath(Exception):
    pass


def _plain(node: Node) -> Any:
    """Fast conversion for documents without anchors (no aliases, no merge keys possible)."""
    node_type = type(node)
    if node_type is ScalarNode:
        if node.tag == STR_TAG:
            return node.value
        return _scalar(node)  # type: ignore[arg-type]
    if node_type is MappingNode:
        mapping: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if type(key_node) is ScalarNode and key_node.tag == STR_TAG:
                key = key_node.value
            elif key_node.tag == MERGE_TAG:
                raise _NeedsAliasPath
            else:
                key = _plain(key_node)
                if isinstance(key, (list, dict)):
                    key = repr(key)
            if key in mapping:
                raise _duplicate(key, key_node)
            mapping[key] = _plain(value_node)
        return mapping
    if node_type is SequenceNode:
        return [_plain(child) for child in node.value]
    raise WavegenError(f"unsupported YAML node {node_type.__name__}")  # pragma: no cover


def to_python(root: Node, may_have_anchors: bool = True) -> Converted:
    """Convert a node tree; duplicate keys are errors, aliases are shared, not expanded."""
    if not may_have_anchors:
        try:
            return Converted(_plain(root), False)
        except _NeedsAliasPath:
            pass
    memo: dict[int, Any] = {}
    has_alias = False

    def convert(node: Node) -> Any:
        nonlocal has_alias
        key = id(node)
        if key in memo:
            has_alias = True
            return memo[key]
        if isinstance(node, ScalarNode):
            value = _scalar(node)
            memo[key] = value
            return value
        if isinstance(node, SequenceNode):
            items: list[Any] = []
            memo[key] = items
            items.extend(convert(child) for child in node.value)
            return items
        if isinstance(node, MappingNode):
            mapping: dict[Any, Any] = {}
            memo[key] = mapping
            merges: list[Node] = []
            for key_node, value_node in node.value:
                if key_node.tag == MERGE_TAG:
                    merges.append(value_node)
                    continue
                k = convert(key_node)
                if isinstance(k, (list, dict)):
                    k = repr(k)
                if k in mapping:
                    raise _duplicate(k, key_node)
                mapping[k] = convert(value_node)
            for merge_node in merges:
                has_alias = True
                sources = merge_node.value if isinstance(merge_node, SequenceNode) else [merge_node]
                for source in sources:
                    merged = convert(source)
                    if not isinstance(merged, dict):
                        # PyYAML and go-yaml (kubectl, helm, Argo CD) refuse it too.
                        raise WavegenError(
                            "a merge key ('<<') takes a mapping or a list of mappings", line=source.start_mark.line + 1
                        )
                    for mk, mv in merged.items():
                        mapping.setdefault(mk, mv)
            return mapping
        raise WavegenError(f"unsupported YAML node {type(node).__name__}")  # pragma: no cover

    value = convert(root)
    if has_alias and _expanded_size(root, {}) > MAX_EXPANDED_NODES:
        raise WavegenError(
            f"aliases expand this document to more than {MAX_EXPANDED_NODES:,} nodes; refusing it",
            line=root.start_mark.line + 1,
        )
    return Converted(value, has_alias)


def iter_list_items(root: Node) -> Iterator[tuple[int, Node]]:
    """Items of a ``kind: List`` document's ``items`` sequence."""
    items = node_at(root, ("items",))
    if isinstance(items, SequenceNode):
        yield from enumerate(items.value)
