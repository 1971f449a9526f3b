"""Computes text edits that set or remove pod-template annotations at located nodes."""

from __future__ import annotations

from _collections_abc import Iterator, Mapping, Sequence

from ..core.record import OrderedRecord
from . import patterns
from .resolver import MERGE_TAG, NULL_TAG
from .tree import is_mapping, is_scalar, is_sequence, mapping_get

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

    from .tree import AnyMapping, AnyNode


class Unsafe(Exception):
    """This document cannot be edited as text; it needs a structural round trip."""


class Edit(OrderedRecord):
    __slots__ = ("end", "start", "text")
    start: Final[int]
    end: Final[int]
    text: Final[str]

    def __init__(self, start: int, end: int, text: str) -> None:
        self.start = start
        self.end = end
        self.text = text


class DocumentText:
    """A document's text with libyaml (line, column) marks mapped to offsets."""

    def __init__(self, text: str, starts: Sequence[int]) -> None:
        self.text = text
        self.starts = starts
        # ("\r" first: a search for one character takes a 5 MB document 0.2 ms, for two 2.8 ms)
        self.eol = "\r\n" if "\r" in text and "\r\n" in text else "\n"

    def offset(self, line: int, column: int) -> int:
        return self.starts[line] + column

    def node_start(self, node: AnyNode) -> int:
        return self.offset(node.start_mark.line, node.start_mark.column)

    def node_end(self, node: AnyNode) -> int:
        return self.offset(node.end_mark.line, node.end_mark.column)

    def line_start(self, line: int) -> int:
        return self.starts[line]

    def next_line_start(self, line: int) -> int:
        return self.starts[line + 1] if line + 1 < len(self.starts) else len(self.text)


def apply_edits(text: str, edits: Sequence[Edit]) -> str:
    """Apply non-overlapping edits; zero-width insertions at a position go before replacements there."""
    return str(Spliced(text, edits))


class Spliced:
    """A document's text with non-overlapping edits applied, made a part at a time where it is read.

    An edited document joined whole took its size twice over at the peak (its unedited stretches
    sliced, then joined): a List of dashboards of 2.7 MB, one character of it past U+00FF, is 5.3 MB
    a copy. Written, it is sliced a batch at a time (see engine.encode_chunks); ``str()`` joins it.
    Zero-width insertions at a position go before replacements there; overlapping edits raise Unsafe.
    """

    __slots__ = ("_length", "edits", "text")

    def __init__(self, text: str, edits: Sequence[Edit]) -> None:
        ordered = sorted(edits)
        position = 0
        for edit in ordered:
            if edit.start < position:
                raise Unsafe("overlapping edits")
            position = edit.end
        self.text = text
        self.edits = ordered
        self._length = len(text) + sum(len(edit.text) - (edit.end - edit.start) for edit in ordered)

    def _segments(self) -> Iterator[tuple[str, int, int]]:
        """The spliced text as (text, start, stop) ranges, in order: the document's between the edits, and theirs."""
        position = 0
        for edit in self.edits:
            yield self.text, position, edit.start
            yield edit.text, 0, len(edit.text)
            position = edit.end
        yield self.text, position, len(self.text)

    def parts(self, most: int) -> Iterator[str]:
        """The spliced text in order, in non-empty parts of at most ``most`` characters."""
        for text, start, stop in self._segments():
            if start == 0 and stop == len(text) and stop <= most:
                if stop:
                    yield text  # (an edit's text, or a short document whole: no copy)
                continue
            for at in range(start, stop, most):
                yield text[at : min(at + most, stop)]

    def __len__(self) -> int:
        return self._length

    def __str__(self) -> str:
        return "".join(self.parts(max(self._length, 1)))

    def __getitem__(self, key: slice) -> str:
        """The characters of a slice (steps of 1), made from the ranges they fall in."""
        start, stop, step = key.indices(self._length)
        if step != 1:
            raise ValueError("Spliced takes slices of step 1 only")
        found: list[str] = []
        offset = 0  # where the range starts in the spliced text
        for text, begin, end in self._segments():
            size = end - begin
            if offset + size > start and offset < stop:
                found.append(text[begin + max(start - offset, 0) : begin + min(stop - offset, size)])
            offset += size
            if offset >= stop:
                break
        return "".join(found)

    def endswith(self, suffix: str) -> bool:
        return len(suffix) <= self._length and self[self._length - len(suffix) :] == suffix


def _quote(value: str) -> str:
    """``value`` as a JSON string, which is also a YAML double-quoted scalar."""
    if value.isascii() and value.isprintable() and '"' not in value and "\\" not in value:
        return f'"{value}"'  # what json.dumps gives for these (hashes, names), without importing json
    import json

    return json.dumps(value)


def _is_null(node: AnyNode) -> bool:
    return is_scalar(node) and node.tag == NULL_TAG


def _block_indent_step(doc: DocumentText, mapping: AnyMapping) -> int:
    """The indentation step a block mapping's children use (2 when nothing tells)."""
    first = mapping.value[0][0].start_mark
    base = first.column
    for _, value in mapping.value:
        # (A child that is an alias is its anchor's node, written before: not this mapping's step.)
        if is_mapping(value) and not value.flow_style and value.value and value.value[0][0].start_mark.line > first.line:
            step = value.value[0][0].start_mark.column - base
            if step > 0:
                return int(step)
    return 2


def _render_block(entries: Mapping[str, object], column: int, step: int, eol: str) -> str:
    lines: list[str] = []
    for key, value in entries.items():
        if isinstance(value, Mapping):
            lines.append(f"{' ' * column}{key}:{eol}")
            lines.append(_render_block(value, column + step, step, eol))
        else:
            lines.append(f"{' ' * column}{key}: {_quote(str(value))}{eol}")
    return "".join(lines)


def _render_flow(entries: Mapping[str, object]) -> str:
    parts = []
    for key, value in entries.items():
        if isinstance(value, Mapping):
            parts.append(f"{_quote(key)}: {{{_render_flow(value)}}}")
        else:
            parts.append(f"{_quote(key)}: {_quote(str(value))}")
    return ", ".join(parts)


def _insert_entries(doc: DocumentText, mapping: AnyMapping, entries: Mapping[str, object]) -> Edit:
    """Insert entries as the first keys of a mapping, in its own style."""
    if mapping.flow_style:
        brace = doc.node_start(mapping)
        if doc.text[brace : brace + 1] != "{":
            raise Unsafe("flow mapping without a brace")
        if not mapping.value:
            return Edit(brace + 1, brace + 1, _render_flow(entries))
        first_key = mapping.value[0][0]
        if first_key.start_mark.line > mapping.start_mark.line:
            indent = " " * first_key.start_mark.column
            return Edit(brace + 1, brace + 1, f"{doc.eol}{indent}{_render_flow(entries)},")
        return Edit(brace + 1, brace + 1, f"{_render_flow(entries)}, ")
    if not mapping.value:
        raise Unsafe("empty block mapping")
    first_key = mapping.value[0][0]
    line = first_key.start_mark.line
    column = first_key.start_mark.column
    line_start = doc.line_start(line)
    if doc.text[line_start : line_start + column].strip(" "):
        raise Unsafe("mapping does not start its own line")
    step = _block_indent_step(doc, mapping)
    return Edit(line_start, line_start, _render_block(entries, column, step, doc.eol))


# A key alone on its line ("annotations:", maybe a comment): its value is the implicit null.
# Compiled on first use (patterns keeps it): only null annotations need it.
_KEY_ALONE = r"( *)annotations:[ ]*(?:#[^\r\n]*)?\r?\n"


def _fill_implicit_null(
    doc: DocumentText, mapping: AnyMapping, key_node: AnyNode, value_node: AnyNode, entries: Mapping[str, object]
) -> Edit:
    """Entries as the block value of a key that has none ("annotations:" alone, as helm renders empty values)."""
    line = key_node.start_mark.line
    start, end = doc.line_start(line), doc.next_line_start(line)
    alone = patterns.compile(_KEY_ALONE).fullmatch(doc.text, start, end)
    if (
        alone is None
        or len(alone.group(1)) != key_node.start_mark.column
        or doc.node_start(value_node) != doc.node_end(value_node)
    ):
        raise Unsafe("null annotations")
    step = _block_indent_step(doc, mapping)
    return Edit(end, end, _render_block(entries, key_node.start_mark.column + step, step, doc.eol))


# How YAML 1.1 writes a null on one line (what JSON writes: null); an implicit one has no text.
_NULL_SPELLINGS = ("null", "Null", "NULL", "~")


def _explicit_null(doc: DocumentText, value_node: AnyNode, entries: Mapping[str, object]) -> Edit | None:
    """Entries as a flow mapping in place of a null written out (``"annotations": null``, as a
    JSON manifest or ``kubectl get -o json`` has it): the null's text and nothing else changes.
    None for an implicit null (no text), which _fill_implicit_null takes."""
    start, end = doc.node_start(value_node), doc.node_end(value_node)
    if doc.text[start:end] not in _NULL_SPELLINGS:
        return None
    return Edit(start, end, f"{{{_render_flow(entries)}}}")


def _replace_scalar(doc: DocumentText, node: AnyNode, value: str) -> Edit | None:
    if not is_scalar(node) or node.style not in (None, "", "'", '"'):  # libyaml marks plain as ""
        raise Unsafe("annotation value is not a one-line scalar")
    if node.start_mark.line != node.end_mark.line:
        raise Unsafe("annotation value spans lines")
    if node.tag == "tag:yaml.org,2002:str" and node.value == value:
        return None
    quote = "'" if node.style == "'" else '"'
    rendered = f"'{value}'" if quote == "'" else _quote(value)
    return Edit(doc.node_start(node), doc.node_end(node), rendered)


def _remove_pair(doc: DocumentText, mapping: AnyMapping, key_node: AnyNode, value_node: AnyNode) -> Edit:
    if mapping.flow_style:
        raise Unsafe("removal from a flow mapping")
    line = key_node.start_mark.line
    if value_node.end_mark.line != line:
        raise Unsafe("annotation value spans lines")
    line_start = doc.line_start(line)
    if doc.text[line_start : doc.node_start(key_node)].strip(" "):
        raise Unsafe("annotation does not start its own line")
    return Edit(line_start, doc.next_line_start(line), "")


def template_edits(doc: DocumentText, template: AnyNode, desired: Mapping[str, str | None]) -> list[Edit]:
    """Edits that make a pod template's annotations match ``desired`` (None = remove)."""
    if not is_mapping(template):
        raise Unsafe("pod template is not a mapping")
    to_set = {k: v for k, v in desired.items() if v is not None}
    to_remove = [k for k, v in desired.items() if v is None]
    metadata_pair = mapping_get(template, "metadata")
    if metadata_pair is None or _is_null(metadata_pair[1]):
        if not to_set:
            return []
        if metadata_pair is not None:
            raise Unsafe("null metadata")
        return [_insert_entries(doc, template, {"metadata": {"annotations": to_set}})]
    metadata = metadata_pair[1]
    if not is_mapping(metadata):
        raise Unsafe("metadata is not a mapping")
    annotations_pair = mapping_get(metadata, "annotations")
    if annotations_pair is None or _is_null(annotations_pair[1]):
        if not to_set:
            return []
        if annotations_pair is not None:
            explicit = _explicit_null(doc, annotations_pair[1], to_set)
            if explicit is not None:
                return [explicit]
            return [_fill_implicit_null(doc, metadata, annotations_pair[0], annotations_pair[1], to_set)]
        if not metadata.value:
            raise Unsafe("empty metadata")
        return [_insert_entries(doc, metadata, {"annotations": to_set})]
    annotations = annotations_pair[1]
    if not is_mapping(annotations):
        raise Unsafe("annotations is not a mapping")
    edits: list[Edit] = []
    new_entries: dict[str, object] = {}
    for key, value in to_set.items():
        pair = mapping_get(annotations, key)
        if pair is None:
            new_entries[key] = value
            continue
        edit = _replace_scalar(doc, pair[1], value)
        if edit is not None:
            edits.append(edit)
    for key in to_remove:
        pair = mapping_get(annotations, key)
        if pair is not None:
            edits.append(_remove_pair(doc, annotations, pair[0], pair[1]))
    if new_entries:
        if not annotations.value and not annotations.flow_style:
            raise Unsafe("empty block annotations")
        edits.append(_insert_entries(doc, annotations, new_entries))
    return edits


def shared_near_template(root: AnyNode, path: tuple[str, ...]) -> bool:
    """Whether editing the annotations of the pod template at ``path`` of a document with
    anchors, aliases or merge keys could change more than that template: a node on the way to
    it that the document reaches twice (an anchored node an alias names, or inside one); in the
    template, its metadata or annotations, a merge key (a key added there would hide what it
    merges) or a node the edits read the place of, or rewrite, reached twice (its text is the
    anchor's, shared with every alias to it). Then the document takes the structural round trip."""
    reached = _times_reached(root)
    node: AnyNode | None = root
    for part in path:
        if not is_mapping(node) or reached[id(node)] > 1:
            return True
        pair = mapping_get(node, part)
        node = None if pair is None else pair[1]
    for field in ("metadata", "annotations", ""):  # ("": the annotations' own pairs)
        if not is_mapping(node):
            return False  # (none, or what template_edits refuses: the round trip either way)
        pairs = node.value
        if reached[id(node)] > 1 or any(key.tag == MERGE_TAG for key, _ in pairs):
            return True
        # Edits take a mapping's place from its first key, and rewrite the annotations' values
        # (a metadata or annotations value reached twice is refused as the next mapping, or by
        # template_edits when it is no mapping).
        if pairs and reached[id(pairs[0][0])] > 1:
            return True
        if not field and any(reached[id(value)] > 1 for _, value in pairs):
            return True
        pair = mapping_get(node, field) if field else None
        node = None if pair is None else pair[1]
    return False


def _times_reached(root: AnyNode) -> dict[int, int]:
    """How many times following the document from its root reaches each node: an alias is its
    anchor's node, reached again (and not followed again)."""
    reached: dict[int, int] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        key = id(node)
        times = reached[key] = reached.get(key, 0) + 1
        if times > 1:
            continue
        if is_mapping(node):
            for key_node, value_node in node.value:
                stack += (key_node, value_node)
        elif is_sequence(node):
            stack += node.value
    return reached
