"""Runs the core over byte streams: parse the documents that matter, plan, splice, re-assemble."""

from __future__ import annotations

import gc
from _collections_abc import Iterable, Iterator, Mapping

from ..core.model import Finding, Severity
from ..core.plan import FieldTree, KubeObject, Options, Plan, PlanReader, PlanReads, fields_read, plan
from ..core.podtemplate import Identity
from ..core.record import Record
from ..errors import WavegenError
from . import fastparse, patterns
from .splice import DocumentText, Edit, Spliced, Unsafe, shared_near_template, template_edits
from .split import BOM, Piece, check_line_breaks, line_starts, split_as_bytes, split_marked, split_utf8
from .tree import field_parts, is_mapping, line_of, list_item, node_at

# typing only for type checkers (see core/model.py); Any stands in at run time, where it
# appears only in type aliases.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Sequence
    from typing import IO, Any, Final, NamedTuple, TypeVar

    from yaml.nodes import Node

    from . import fallback
    from .tree import AnyNode

    # A List item's index, or None for a document that is one object (see Engine._planned).
    _Item = TypeVar("_Item", bound=int | None)
else:
    from ..core.record import NamedTuple

    Any = object

# A kind line: on the first line, else after a line break. The line break as a literal prefix,
# not "^" with re.M: libyaml-ordered ConfigMaps put "kind:" after their data (190 KB of a
# dashboard's: 57 us against 541).
_KIND_LINE = r"""(?:kind|"kind"|'kind')[ \t]*:[ \t]*["']?([A-Za-z0-9_.-]*)"""
_KIND = patterns.compile("\n" + _KIND_LINE)
_KIND_FIRST = ("kind", '"kind"', "'kind'")  # a document whose first line may be its kind (rare: compiled on first use)
# Where a document's kind line is looked for first: most documents name their kind in their first
# lines; those written with sorted keys (kubectl's output, jsonnet's: kube-prometheus) after their
# data or items, near their end (see _kind_near_end).
_KIND_NEAR_START = 4096
_UTF8_BOM = BOM.encode()


def _kind_near_end(text: str) -> re.Match[str] | None:
    """The kind line of a document whose first _KIND_NEAR_START characters hold none: the last line
    that starts as one, found from the end (an 800 KB List of dashboards: 0.3 ms to search from its
    start). A document's kind lines at column 0 are its root's one key (a second would be a
    duplicate key), but for text of a quoted scalar over lines: the caller trusts a kind found so
    only where the reader checks it against the body. None when no line starts as one, or the
    last that does is none."""
    at = text.rfind("\nkind")
    at = max(at, text.rfind('\n"kind"', at + 1), text.rfind("\n'kind'", at + 1))  # (only after it: no second pass)
    return _KIND.match(text, at) if at >= 0 else None


_ALWAYS_PARSED = frozenset(("ConfigMap", "Secret", "List", "Job", "Pod", "ReplicationController"))
# Text encoded and written at once: large enough that a bundle of small documents is not
# thousands of tiny writes, small enough that no copy of a whole output is ever made.
WRITE_BATCH_CHARS = 64 * 1024
# In inputs up to this size (all of a run's inputs together), the subset reader checks the
# documents passed through unread, instead of libyaml: reading them costs less than
# importing PyYAML. Measured whole-process, CRD-heavy inputs read by the reader against
# libyaml's path: 0.81x the time at 291 KB (gatekeeper), 0.92x at 500 KiB, 1.01x at 600 KiB
# (kyverno's first documents); past this size libyaml's C checks are the faster.
READ_PASSED_THROUGH_CHARS = 512 * 1024
# An input is read in several processes (Engine.jobs) when the documents it reads (workloads,
# ConfigMaps, Secrets, Lists) hold at least this many characters, and in one more for each
# further multiple. Forking, each process building its own caches and the results pickled back cost a
# few milliseconds: measured whole-process (median of 9) on benchmarks/gen_bundle.py's styled
# bundles, two processes against one took 60.2 against 55.1 ms at 273 KB, 72.5 against 82.2 ms
# at 547 KB and 105 against 130 ms at 1.1 MB.
SPLIT_WORK_CHARS = 512 * 1024
# A document passed through costs about this many times less to check than one read (for
# dividing the work; they do not count towards SPLIT_WORK_CHARS).
PASSED_THROUGH_SHARE = 4
# What a child's part costs beyond reading it (pickling its results here, loading them there),
# as a share of reading it.
CHILD_OVERHEAD = 0.15
# No single Kubernetes object comes near this (etcd stores at most ~1.5 MiB); parsing a
# document this large would take seconds and gigabytes, so it is refused unread.
MAX_DOCUMENT_CHARS = 32 * 1024 * 1024


class InputDocument(Record):
    """One named input: a file's bytes, or standard input's. A bytearray's bytes are consumed: the
    engine empties it from its end as it decodes its pieces (see files.read_inputs)."""

    __slots__ = ("data", "name")
    name: Final[str]
    data: Final[bytes | bytearray]

    def __init__(self, name: str, data: bytes | bytearray) -> None:
        self.name = name
        self.data = data


class _Located(NamedTuple):
    """Where an object is: file, piece, and item of a List (a tuple: one is kept per object)."""

    file: int
    piece: int
    item: int | None


class _ParsedFile(Record, hashable=False):
    # Not the input's bytes: its pieces are its whole text (bom + pieces is the input).
    __slots__ = ("aliased", "bom", "covered", "docs", "fast_read", "item_lines", "json_read", "name", "pieces", "plain_breaks")
    name: str
    bom: str
    pieces: list[Piece]
    # Whether its line breaks are LF and CRLF alone (see split.line_starts): no NEL, LS or PS in
    # it (ASCII, or bytes refused_utf8 screened), and a lone CR refuses an input.
    plain_breaks: bool
    docs: dict[int, DocumentText]
    aliased: set[int]
    # Pieces the subset reader read (no node tree needed to edit), with where their pod template starts.
    fast_read: dict[int, fastparse.TemplateStart | None]
    # Of those, the pieces with lines their rows step over (fastparse.Covered; few have any).
    covered: dict[int, fastparse.Covered]
    # List pieces the subset reader read: for each object item, the line where it starts and
    # where the next object item does (-1: none), the lines its rows are read from (_item_window).
    item_lines: dict[int, dict[int, tuple[int, int]]]
    # Pieces read as JSON (their nodes are jsonread's), and for a List each item's start and end
    # offsets in the piece (_json_item_window).
    json_read: dict[int, list[tuple[int, int]] | None]

    def __init__(
        self,
        name: str,
        bom: str,
        pieces: list[Piece],
        docs: dict[int, DocumentText] | None = None,
        aliased: set[int] | None = None,
        fast_read: dict[int, fastparse.TemplateStart | None] | None = None,
        covered: dict[int, fastparse.Covered] | None = None,
        item_lines: dict[int, dict[int, tuple[int, int]]] | None = None,
        json_read: dict[int, list[tuple[int, int]] | None] | None = None,
        plain_breaks: bool = False,
    ) -> None:
        self.name = name
        self.bom = bom
        self.pieces = pieces
        self.plain_breaks = plain_breaks
        self.docs = {} if docs is None else docs
        self.aliased = set() if aliased is None else aliased
        self.fast_read = {} if fast_read is None else fast_read
        self.covered = {} if covered is None else covered
        self.item_lines = {} if item_lines is None else item_lines
        self.json_read = {} if json_read is None else json_read

    def text_chunks(self) -> list[str]:
        """The input's text as it was read: the byte-order mark, then every piece (no copies)."""
        return [self.bom, *(piece.text for piece in self.pieces)]


class Output(Record, hashable=False):
    """One input's result as text: the input's chunks, the output's, and whether any piece was edited."""

    __slots__ = ("documents", "edited", "name", "original")
    name: str
    original: list[str]  # the input's text: bom + pieces
    # The output's text, as written: an unedited piece is the very string of the input's, an edited
    # one its text and edits (made a part at a time as it is written: see Spliced).
    documents: Sequence[str | Spliced]
    edited: bool  # False: no piece got an edit or a round trip, so the output is the input

    def __init__(self, name: str, original: list[str], documents: Sequence[str | Spliced], edited: bool) -> None:
        self.name = name
        self.original = original
        self.documents = documents
        self.edited = edited

    @property
    def chunks(self) -> list[str]:
        """The output's text as strings, one per item of ``original`` (an edited document joined)."""
        return [document if document.__class__ is str else str(document) for document in self.documents]

    def changed(self) -> bool:
        return self.edited and not same_text(self.original, self.documents)


def same_text(left: Sequence[str], right: Sequence[str | Spliced]) -> bool:
    """Whether two chunk lists spell the same text, without joining either (an edited document
    of ``right`` is made a part at a time: see Spliced)."""
    if sum(map(len, left)) != sum(map(len, right)):
        return False
    lefts, rights = iter(left), _text_parts(right)
    a = b = ""
    left_at = right_at = 0
    while True:
        if left_at == len(a):
            following = next(lefts, None)
            if following is None:
                return True  # (as long as each other: the right ends here too)
            a, left_at = following, 0
            continue
        if right_at == len(b):
            b, right_at = next(rights), 0
            continue
        size = min(len(a) - left_at, len(b) - right_at)
        # A whole chunk's slice is the chunk itself: aligned chunks are compared without copies.
        if a[left_at : left_at + size] != b[right_at : right_at + size]:
            return False
        left_at += size
        right_at += size


def _text_parts(chunks: Iterable[str | Spliced]) -> Iterator[str]:
    """The chunks as strings, an edited document's in parts of at most WRITE_BATCH_CHARS."""
    for chunk in chunks:
        if isinstance(chunk, Spliced):
            yield from chunk.parts(WRITE_BATCH_CHARS)
        else:
            yield chunk


def encode_chunks(chunks: Iterable[str | Spliced], *, cut: bool = False) -> Iterator[bytes]:
    """UTF-8 bytes of a chunked text, about WRITE_BATCH_CHARS characters at a time, each block
    ending with a whole chunk (libyaml reads them as streams of documents); ``cut``, for writing:
    a chunk longer than that is encoded a part at a time (a CRD of a megabyte joined to the
    chunks before it, then encoded, took its size two to three times over at the peak), and an
    edited document (a Spliced) is made a part at a time as it is encoded."""
    batch: list[str] = []
    size = 0
    for chunk in chunks:
        if isinstance(chunk, Spliced) and not cut:
            chunk = str(chunk)  # (a block ends with a whole document)
        if isinstance(chunk, Spliced) or (cut and len(chunk) > WRITE_BATCH_CHARS):
            if batch:
                yield "".join(batch).encode("utf-8")
                batch.clear()
                size = 0
            # (a long chunk is sliced as the Spliced of no edits it is)
            for part in (chunk if isinstance(chunk, Spliced) else Spliced(chunk, ())).parts(WRITE_BATCH_CHARS):
                yield part.encode("utf-8")
            continue
        batch.append(chunk)
        size += len(chunk)
        if size >= WRITE_BATCH_CHARS:
            yield "".join(batch).encode("utf-8")
            batch.clear()
            size = 0
    if batch:
        yield "".join(batch).encode("utf-8")


def write_chunks(chunks: Iterable[str | Spliced], stream: IO[bytes]) -> None:
    """Write a chunked text to a binary stream as UTF-8, in batches."""
    for block in encode_chunks(chunks, cut=True):
        stream.write(block)


class Result:
    """What a run produced: each input's output as text chunks, the plan, and findings (errors stop output).

    After a run with errors every output is its input, unchanged.
    """

    __slots__ = ("_outputs", "fallbacks", "files", "findings", "plan")

    def __init__(self, files: list[Output], plan: Plan, findings: list[Finding], fallbacks: list[str]) -> None:
        self.files = files
        self.plan = plan
        self.findings = findings
        self.fallbacks = fallbacks
        self._outputs: list[bytes] | None = None

    @property
    def has_errors(self) -> bool:
        return any(f.severity is Severity.ERROR for f in self.findings)

    @property
    def outputs(self) -> list[bytes]:
        """Each input's new bytes, built on first use (a command that writes the chunks never builds them)."""
        if self._outputs is None:
            self._outputs = ["".join(output.chunks).encode("utf-8") for output in self.files]
        return self._outputs

    def release_sources(self) -> None:
        """Let go of the ConfigMaps' and Secrets' values the plan holds, for a caller that needs
        only the outputs and findings from here on: writing a large output reuses their memory
        (istio's Grafana add-on: peak RSS 12.7 -> 12.3 MB). ``plan.sources`` is empty after it."""
        self.plan.sources.clear()

    def changed(self) -> list[int]:
        """Indexes of the inputs whose output differs from them."""
        return [index for index, output in enumerate(self.files) if output.changed()]

    def write(self, index: int, stream: IO[bytes]) -> None:
        """Write one input's output to a binary stream, chunk by chunk."""
        write_chunks(self.files[index].documents, stream)


def decode(source: InputDocument) -> tuple[str, str]:
    """UTF-8 text of an input and its byte-order mark, if any."""
    try:
        text = source.data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise _not_utf8(source.name, source.data, err) from None
    _refuse_nul(source.name, source.data)
    bom = BOM if text.startswith(BOM) else ""
    return text[len(bom) :], bom


def _undecoded(source: InputDocument) -> tuple[bytes | bytearray, str] | None:
    """An input's bytes and its byte-order mark, if any, where split.split_as_bytes says they are
    better cut into pieces before they are decoded, and always for bytes to be consumed (else
    None): Engine.add_held decodes them piece by piece, refusing them as decode would."""
    data = source.data
    if isinstance(data, bytearray):
        if data.startswith(_UTF8_BOM):
            del data[: len(_UTF8_BOM)]  # (in place: a bytearray keeps an offset to its start)
            return data, BOM
        return data, ""
    if not split_as_bytes(data):
        return None
    if data.startswith(_UTF8_BOM):
        return data[len(_UTF8_BOM) :], BOM
    return data, ""


def _split_bytes(name: str, data: bytes | bytearray, screened: bool = False) -> tuple[list[Piece], bool, bool]:
    """split_utf8, refusing the input as decode and check_line_breaks would have, in their order:
    bytes that are not UTF-8, then a NUL byte, then a lone CR line break. (A bytearray is gone
    once split: what is refused after bad UTF-8 is looked for first.) ``screened``: the bytes
    hold none of the characters fastparse.refused_utf8 looks for, NEL, LS and PS among them."""
    later: WavegenError | None = None
    try:
        _refuse_nul(name, data)
        check_line_breaks(data, name)
    except WavegenError as err:
        later = err
    try:
        split = split_utf8(data, exotic_breaks=not screened)
    except UnicodeDecodeError as err:
        raise _not_utf8(name, data, err) from None
    if later is not None:
        raise later
    return split


def _refuse_nul(name: str, data: bytes | bytearray) -> None:
    """Refuse UTF-8 input holding a NUL byte (binary data), naming its line."""
    nul = data.find(b"\x00")
    if nul >= 0:
        raise WavegenError("NUL byte in input (binary data?)", file=name, line=data.count(b"\n", 0, nul) + 1)


def _not_utf8(name: str, data: bytes | bytearray, err: UnicodeDecodeError) -> WavegenError:
    line = data[: err.start].count(b"\n") + 1
    return WavegenError("not UTF-8 text (binary data?)", file=name, line=line)


# A document the subset reader read: its body, its root's line, and what the planner reads of it.
# body (or _PLANNED), root line, the planner's reads and identity, where the pod template
# starts, whether libyaml must still check the text, the lines its rows step over, and whether it
# defines or uses anchors (see fastparse.parse)
_Read = tuple[Mapping[str, Any], int, PlanReads, Identity | None, fastparse.TemplateStart | None, bool, fastparse.Covered, int]
# The body of an object whose reads and identity are all the planner needs of it.
# (types.MappingProxyType is this type: importing types costs a run 0.2 ms.)
_PLANNED: Mapping[str, Any] = type(type.__dict__)({})
# The items of a List document the subset reader read: body (or _PLANNED), 0-based line in
# the document, index in ``items``, the planner's reads and identity.
_ListRead = list[tuple[Mapping[str, Any], int, int, PlanReads, Identity | None]]


class _JsonRead(NamedTuple):
    """The objects of a document read as JSON (see jsonread): as a List's items are kept (item
    None for a document that is one object), a List's items' offsets in the piece, and whether
    libyaml is known to accept the text (else it is asked)."""

    objects: list[tuple[Mapping[str, Any], int, int | None, PlanReads, Identity | None]]
    items: list[tuple[int, int]] | None
    checked: bool


class Engine:
    """Parses inputs into core objects and renders a plan back into bytes."""

    def __init__(self, options: Options, *, fast: bool = True, only_planned: bool = False, jobs: int | None = 1) -> None:
        self.options = options
        # Processes a large input's documents may be read in (see SPLIT_WORK_CHARS); None: as
        # many as forked.jobs_wanted() says, found when an input is that large. Only one-shot
        # runs use more than one (forking a long-lived process that has threads is unsafe).
        self.jobs = jobs
        # fast=False keeps the reference reader (libyaml compose for every relevant
        # document); the differential test runs both and requires identical results.
        self.fast = fast
        # only_planned: bodies the subset reader reads keep only what plan() reads
        # (core.plan.fields_read), for callers that need nothing else of them.
        self.fields: dict[str, FieldTree] | None = {} if only_planned else None
        self.reader = PlanReader(options) if only_planned else None
        self.relevant_kinds = _ALWAYS_PARSED | options.workloads.kind_names()
        self.files: list[_ParsedFile] = []
        self.objects: list[KubeObject] = []
        self.located: list[_Located] = []  # by uid
        # Plain scalars the subset reader resolved, shared across this engine's documents only.
        self.plain_values: dict[str, Any] = {}
        # Lines the subset reader split, likewise for this engine's documents only.
        self.row_cache: fastparse.RowCache = {}
        # Lines of documents passed through, classified for fastparse.check_passed_through, likewise.
        self.check_cache: fastparse.CheckCache = {}
        # The last document libyaml composed again for its nodes (see _node), kept from locating
        # the plan's findings to rendering its edits: a List is composed once for both (a JSON
        # List of 600 KB took a third of its run for each, before jsonread); one document's at most.
        self.composed: dict[tuple[int, int], AnyNode | None] = {}
        # What is left of READ_PASSED_THROUGH_CHARS for this engine's inputs.
        self.reader_budget = READ_PASSED_THROUGH_CHARS
        # What the pieces' documents of the input being added are known to hold none of, so the
        # reader need not look again (fastparse.SCREENED_LINES, SCREENED_CHARACTERS).
        self.screened = 0

    def _relevant(self, piece: Piece) -> str | None:
        """The document's kind if it is to be parsed ("" when no kind line tells), else None."""
        text = piece.text
        head = text.find("\n", _KIND_NEAR_START)  # (whole lines: a kind is never cut short)
        match = (text.startswith(_KIND_FIRST) and patterns.match(_KIND_LINE, text)) or _KIND.search(
            text, 0, len(text) if head < 0 else head
        )
        if match is None and head >= 0:
            match = _kind_near_end(text)
            if match is None or not self._read_kind(match.group(1)):
                # Trusted only where the reader checks it against the body (_read_fast): for any
                # other, the search from the start decides, as before.
                match = _KIND.search(text)
        if match and match.group(1):  # an empty, quoted-odd or non-scalar kind is parsed and checked
            kind = match.group(1)
            return kind if self._read_kind(kind) else None
        return "" if piece.has_content() else None

    def _read_kind(self, kind: str) -> bool:
        return kind in self.relevant_kinds or kind.endswith("List")

    def _add_object(self, body: Any, node: Node, file_index: int, piece_index: int, item: int | None) -> None:
        self._append_object(body, node.start_mark.line, file_index, piece_index, item)

    def _append_object(
        self,
        body: Any,
        root_line: int,
        file_index: int,
        piece_index: int,
        item: int | None,
        reads: PlanReads = None,
        identity: Identity | None = None,
    ) -> None:
        parsed = self.files[file_index]
        piece = parsed.pieces[piece_index]
        uid = len(self.objects)
        line = piece.line + root_line + 1
        self.objects.append(KubeObject(uid, body, parsed.name, piece.number, line, reads, identity))
        # Node trees are not kept: they cost several times the parsed data.
        # The few documents that need edits are composed again when rendering.
        self.located.append(_Located(file_index, piece_index, item))

    def _append_read(self, read: _Read | _ListRead | _JsonRead, parsed: _ParsedFile, file_index: int, piece_index: int) -> None:
        if isinstance(read, _JsonRead):
            # Not marked fast_read: its template and fields are found in jsonread's nodes (see _node).
            for body, line, item, reads, identity in read.objects:
                self._append_object(body, line, file_index, piece_index, item, reads, identity)
            parsed.json_read[piece_index] = read.items
            return
        if isinstance(read, list):
            # Not marked fast_read: an item's template and fields are found from where it starts.
            for body, line, item, item_reads, item_identity in read:
                self._append_object(body, line, file_index, piece_index, item, item_reads, item_identity)
            starts = sorted((line, item) for _, line, item, _, _ in read)
            parsed.item_lines[piece_index] = {
                item: (line, starts[index + 1][0] if index + 1 < len(starts) else -1) for index, (line, item) in enumerate(starts)
            }
            return
        body, root_line, reads, identity, template, _, covered, anchored = read
        self._append_object(body, root_line, file_index, piece_index, None, reads, identity)
        if anchored:
            # Rows do not follow aliases: its fields' lines and its template come from libyaml's
            # nodes, and a document that uses an alias is rendered as the reference path renders it.
            if anchored == fastparse.ALIASED:
                parsed.aliased.add(piece_index)
            return
        parsed.fast_read[piece_index] = template
        if covered:
            parsed.covered[piece_index] = covered

    def _check_object(self, body: Any, root_line: int) -> bool:
        """Raises on what is no Kubernetes object; False for an object passed through unread: a
        workload, ConfigMap or Secret named by ``metadata.generateName`` alone (Argo CD's hook
        Jobs are): each create makes a new one, which nothing rolls and nothing names."""
        if not isinstance(body, dict):
            what = "a sequence" if isinstance(body, list) else "a scalar"
            raise WavegenError(f"document is {what}, not a Kubernetes object", line=root_line + 1)
        if "apiVersion" in body or "kind" in body:
            for key in ("apiVersion", "kind"):
                if not isinstance(body.get(key), str) or not body.get(key):
                    raise WavegenError(f"object has no '{key}'", line=root_line + 1)
            metadata = body.get("metadata")
            kind = body["kind"]
            named = isinstance(metadata, dict) and isinstance(metadata.get("name"), str) and metadata["name"]
            if kind in self.relevant_kinds and kind != "List" and not named:
                if isinstance(metadata, dict) and "name" not in metadata:
                    generate_name = metadata.get("generateName")
                    if isinstance(generate_name, str) and generate_name:
                        return False
                raise WavegenError(f"{kind} has no 'metadata.name'", line=root_line + 1)
        return True

    def _read_list_fast(self, text: str) -> _ListRead | None:
        """The items of a List document, read by the subset reader (None: compose it)."""
        # Its ConfigMaps read for their stored form alone keep their long values unmade until hashed.
        deferred = self.reader is not None
        fast = fastparse.parse(text, self.plain_values, None, self.row_cache, self.screened, deferred)
        if fast is None:
            return None
        body, root_line, _, _, covered, anchored = fast  # read whole (no fields): nothing is left for libyaml to check
        kind, items = body.get("kind"), body.get("items")
        if covered or anchored or not isinstance(kind, str) or not kind.endswith("List") or not isinstance(items, list):
            return None
        try:
            self._check_object(body, root_line)
        except WavegenError:
            return None
        lines = fastparse.list_item_lines(text)
        if lines is None or len(lines) != len(items):
            return None
        read: _ListRead = []
        for index, item in enumerate(items):
            if isinstance(item, dict) and "kind" in item:
                read.append(self._planned(item, lines[index], index))
        self._list_read(body)
        return read

    def _list_read(self, body: dict[Any, Any]) -> None:
        """Called with the body of each List document read (its items are the objects added from it);
        the KRM function keeps its ResourceList's. Adding a List consults no option: its items are
        added whatever their kinds, its root is checked as no workload is."""

    def _read_json(self, text: str) -> _JsonRead | None:
        """The objects of a document written as JSON, as the reference path adds them (None: compose it)."""
        from . import jsonread

        read = jsonread.read(text)
        if read is None:
            return None
        body, root_line, spans, checked = read
        try:
            if not self._check_object(body, root_line):
                return _JsonRead([], None, checked)  # passed through: nothing to add
        except WavegenError:
            return None  # the reference path words it
        if "kind" not in body:
            return _JsonRead([], None, checked)
        items = body.get("items")
        if not body["kind"].endswith("List") or not isinstance(items, list):
            return _JsonRead([self._planned(body, root_line, None)], None, checked)
        assert spans is not None and len(spans) == len(items)  # (a root's items array is read with offsets)
        objects: list[tuple[Mapping[str, Any], int, int | None, PlanReads, Identity | None]] = []
        line = offset = 0
        for index, item in enumerate(items):
            if isinstance(item, dict) and "kind" in item:
                start = spans[index][0]
                line += text.count("\n", offset, start)
                offset = start
                objects.append(self._planned(item, line, index))
        return _JsonRead(objects, spans, checked)

    def _planned(
        self, body: dict[str, Any], line: int, item: _Item
    ) -> tuple[Mapping[str, Any], int, _Item, PlanReads, Identity | None]:
        """An object as it is kept: whole, or (only_planned) what the planner reads of it and its identity."""
        if self.reader is None:
            return body, line, item, None, None
        reads, identity = self.reader.read_body(body)
        if reads is None and _unmade(body.get("data")):
            body["data"] = dict(body["data"])  # kept (no ConfigMap of v1): its values made, as read
        return (body if reads is None else _PLANNED), line, item, reads, identity

    def _read_fast(self, text: str, kind: str) -> _Read | _ListRead | _JsonRead | None:
        """A relevant document's value without libyaml, when the subset reader can give it.

        Everything the reader accepts is valid YAML (see fastparse). Anything it
        declines, List documents, and objects the checks would refuse go through the
        reference composer, which also words every error.
        """
        if _json_rooted(text):
            return self._read_json(text)  # (the subset reader takes no document whose root is a flow mapping)
        if kind.endswith("List"):
            return self._read_list_fast(text)
        fields: FieldTree | None = None
        if self.fields is not None and kind:
            fields = self.fields.get(kind)
            if fields is None:
                fields = self.fields[kind] = fields_read(kind, self.options)
        # A ConfigMap read for its stored form alone keeps its long values unmade until hashed.
        deferred = self.reader is not None and kind == "ConfigMap"
        fast = fastparse.parse(text, self.plain_values, fields, self.row_cache, self.screened, deferred)
        if fast is None:
            return None
        body, root_line, template, shaped, covered, anchored = fast
        if anchored & fastparse.PARSED_ONLY:
            return None  # valid YAML, but libyaml's path refuses it, or reads another value: it words that
        if fields is not None and body.get("kind") != kind:
            return None  # the kind line found by pattern is not the object's kind: read it all
        if "kind" not in body and "apiVersion" not in body:
            # No object (a kustomization.yaml without its kind among the manifests): nothing to
            # add, as the reference path adds nothing. (Read whole: no kind line, so no fields
            # and nothing only shaped.)
            return []
        body_kind = body.get("kind")
        if not isinstance(body_kind, str) or body_kind.endswith("List"):
            return None
        try:
            if not self._check_object(body, root_line):
                return None if shaped else []  # passed through: nothing to add (libyaml checks a shaped one)
        except WavegenError:
            return None
        # In only_planned mode a workload, ConfigMap or Secret keeps what the planner reads of it and its identity.
        kept, _, _, reads, identity = self._planned(body, root_line, None)
        return kept, root_line, reads, identity, template, shaped, covered, anchored

    def add(self, source: InputDocument) -> None:
        """Parse one input; raises WavegenError (one line, positioned) on bad input."""
        text, bom = decode(source)
        self.add_text(source.name, text, bom)

    def add_text(self, name: str, text: str, bom: str) -> None:
        """Parse one decoded input (see decode); the engine keeps its pieces, not its bytes."""
        self.add_held(name, [text], bom)

    def add_held(self, name: str, held: list[str | bytes | bytearray], bom: str) -> None:
        """add_text for a text handed over as a one-item list and taken out of it, so that once it
        is cut into pieces (copies of its parts) nothing keeps the whole text: the caller must
        not hold it either (see run). The text may be UTF-8 bytes (see _undecoded), decoded a
        piece at a time (a bytearray's let go of from its end as they are)."""
        text = held.pop()
        if not isinstance(text, str):
            # Looked for in the bytes once: a piece's text past Latin-1 (one typographic quote
            # makes a CRD's) is not encoded again to be looked at (istiod's 2.1 of 78 million
            # instructions). (Before they are split: a bytearray is emptied as it is.)
            characters_screened = not fastparse.refused_utf8(text)
            pieces, directives, lines_screened = _split_bytes(name, text, characters_screened)
            plain_breaks = characters_screened
        else:
            check_line_breaks(text, name)
            pieces, directives, lines_screened = split_marked(text)
            characters_screened = False  # (ASCII: each piece's look is a copy and one C pass)
            plain_breaks = text.isascii()
        del text
        self.screened = (fastparse.SCREENED_LINES if lines_screened else 0) | (
            fastparse.SCREENED_CHARACTERS if characters_screened else 0
        )
        context_free = _context_free(pieces, directives)
        size = sum(len(piece.text) for piece in pieces)
        file_index = len(self.files)
        parsed = _ParsedFile(name, bom, pieces, plain_breaks=plain_breaks)
        self.files.append(parsed)
        if self.fast and context_free and self._add_checked_at_once(parsed, file_index, size):
            return
        for piece_index, piece in enumerate(pieces):
            self._add_piece(parsed, file_index, piece_index, piece)

    def _add_checked_at_once(self, parsed: _ParsedFile, file_index: int, size: int) -> bool:
        """Read what the subset reader can; let libyaml check all the rest in one pass.

        A parser per document costs more than parsing a small one, so the documents
        the reader declines (and those passed through) are checked together. On any
        problem this adds nothing and returns False: going piece by piece then finds
        and words the first problem exactly as without this shortcut. Only for a text
        whose pieces mean alone what they mean together (``context_free`` in add_held).
        """
        reader_checks = size <= self.reader_budget
        if reader_checks:
            self.reader_budget -= size
        pieces = parsed.pieces
        relevant = [self._relevant(piece) for piece in pieces]
        ranges = self._work_ranges(pieces, relevant)
        if len(ranges) == 1:
            examined = [self._examined(pieces, relevant, 0, len(pieces), reader_checks)]
        else:
            import functools

            from . import forked

            # Each part reads its own documents with its own caches: the results are the same.
            parts = [functools.partial(self._examined, pieces, relevant, start, stop, reader_checks) for start, stop in ranges]
            examined = forked.in_parts(parts, shared=(_PLANNED,))
        if not all(valid for _, valid in examined):
            return False
        reads = [read for part, _ in examined for read in part]
        first_uid = len(self.objects)
        try:
            for piece_index, piece in enumerate(pieces):
                fast = reads[piece_index]
                if fast is not None:
                    self._append_read(fast, parsed, file_index, piece_index)
                elif relevant[piece_index] is not None:
                    # (_examined checked its depth, here or in a child, or nothing was added)
                    self._compose_piece(parsed, file_index, piece_index, piece, depth_checked=True)
        except WavegenError:
            del self.located[first_uid:]
            del self.objects[first_uid:]
            parsed.fast_read.clear()
            parsed.covered.clear()
            parsed.aliased.clear()
            return False
        return True

    def _work_ranges(self, pieces: list[Piece], relevant: list[str | None]) -> list[tuple[int, int]]:
        """The pieces in consecutive ranges, one per process, the first for this one (see SPLIT_WORK_CHARS)."""
        # A ConfigMap read for its stored form alone leaves its long literals unmade (see
        # _read_fast): its dashboards cost about what a document passed through does, and a
        # child would pickle their text back (mimir's chart with its 27 dashboards, 2.7 MB: 49 ms
        # in two processes, 42 ms in one).
        light = "ConfigMap" if self.reader is not None else None
        reading = sum(
            len(piece.text) for piece, wanted in zip(pieces, relevant, strict=True) if wanted is not None and wanted != light
        )
        if reading < SPLIT_WORK_CHARS or self.jobs == 1:
            # Documents passed through do not count: their check shares its cache across a bundle's
            # CRDs (kyverno's 3.5 MB took 0.30x the bare load in two processes, 0.27x in one).
            return [(0, len(pieces))]
        weights = [
            len(piece.text) if wanted is not None and wanted != light else len(piece.text) // PASSED_THROUGH_SHARE
            for piece, wanted in zip(pieces, relevant, strict=True)
        ]
        total = sum(weights)
        if total - max(weights) < SPLIT_WORK_CHARS:
            # One document holds much of the work (a ConfigMapList of dashboards; karmada's CRDs
            # as text in ConfigMaps): another process would take less than SPLIT_WORK_CHARS of it,
            # which a document this large (most of it long literals, read from the text) reads
            # quickly, for more than forking it costs (importing forked alone takes about 3.5 ms,
            # pickle with it). karmada's chart, 680 KB: 28 ms in two processes, 23 ms in one.
            return [(0, len(pieces))]
        if self.jobs is None:
            from .forked import jobs_wanted

            self.jobs = jobs_wanted()
        count = min(self.jobs, reading // max(SPLIT_WORK_CHARS, 1) + 1, len(pieces))
        # A child also pickles its results, and this process loads them: children get less.
        child_share = total / (count + CHILD_OVERHEAD)
        ranges: list[tuple[int, int]] = []
        start = done = 0
        end = total - (count - 1) * child_share
        for index, weight in enumerate(weights):
            done += weight
            if done >= end and len(ranges) < count - 1:
                ranges.append((start, index + 1))
                start = index + 1
                end += child_share
        ranges.append((start, len(pieces)))
        # (a document heavier than a child's share leaves the next range empty: no process for it)
        return [(first, stop) for first, stop in ranges if first < stop]

    def _examined(
        self, pieces: list[Piece], relevant: list[str | None], start: int, stop: int, reader_checks: bool
    ) -> tuple[list[_Read | _ListRead | _JsonRead | None], bool]:
        """What the subset reader read of pieces[start:stop], and whether all of them are valid (libyaml
        checks those the reader and the pass-through check cannot vouch for): False also for a piece
        too large or deep, which then goes piece by piece (see _add_checked_at_once)."""
        reads: list[_Read | _ListRead | _JsonRead | None] = []
        unchecked: list[str] = []
        for index in range(start, stop):
            piece = pieces[index]
            if len(piece.text) > MAX_DOCUMENT_CHARS:
                return reads, False
            wanted = relevant[index]
            # The reader keeps to the depth limit itself (it declines deeper documents).
            fast = self._read_fast(piece.text, wanted) if wanted is not None else None
            reads.append(fast)
            if isinstance(fast, _JsonRead):
                if not fast.checked:
                    unchecked.append(piece.text)  # (jsonread leaves libyaml's check to its caller)
            elif _only_shaped(fast):
                # Read, but the flow collections it only shaped still need a check.
                if not (reader_checks and self._reader_checks(piece)):
                    unchecked.append(piece.text)
            elif fast is None and not (wanted is None and self._checked_without_libyaml(piece, reader_checks)):
                import yaml

                from . import nodes

                try:
                    nodes.check_depth(piece.text)
                except (WavegenError, yaml.YAMLError):
                    # too deep, or invalid where the depth walk met it: piece by piece words it
                    return reads, False
                unchecked.append(piece.text)
        return reads, not unchecked or self._libyaml_accepts_all(unchecked)

    def _checked_without_libyaml(self, piece: Piece, reader_checks: bool) -> bool:
        """Whether a document passed through is valid without asking libyaml: the check made for
        such documents first, then (in small inputs) the subset reader reading it whole."""
        if fastparse.check_passed_through(piece.text, self.check_cache, self.screened):
            return True
        if not piece.has_content():
            return fastparse.accepts_without_content(piece.text)  # helm's "# Source:" of an empty template
        return reader_checks and self._reader_checks(piece)

    def _reader_checks(self, piece: Piece) -> bool:
        """Whether the subset reader finds a piece valid, reading all of it.

        What it accepts libyaml accepts too (see fastparse), so libyaml need not check it.
        Pieces without content never come here (see _checked_without_libyaml).
        """
        return fastparse.parse(piece.text, self.plain_values, None, self.row_cache, self.screened) is not None

    @staticmethod
    def _libyaml_accepts_all(texts: list[str]) -> bool:
        """Whether libyaml accepts every text, checked together."""
        from . import nodes

        if not nodes.HAVE_LIBYAML:  # pragma: no cover - PyYAML built without libyaml: piece by piece
            return False
        # In batches of UTF-8 bytes, which libyaml reads in place: one joined text (and the
        # UTF-8 copy libyaml makes of a str) would add twice the unchecked input to peak memory.
        return all(nodes.libyaml_accepts(batch) for batch in encode_chunks(texts))

    def _add_piece(self, parsed: _ParsedFile, file_index: int, piece_index: int, piece: Piece) -> None:
        import yaml

        from . import nodes

        name = parsed.name
        if len(piece.text) > MAX_DOCUMENT_CHARS:
            raise WavegenError(
                f"document is larger than {MAX_DOCUMENT_CHARS // (1024 * 1024)} MiB; refusing it",
                file=name,
                document=piece.number,
                line=piece.line + 1,
                template=piece.helm_template(),
            )
        try:
            kind = self._relevant(piece)
            if kind is None:
                nodes.validate_piece(piece.text)
                return
            if self.fast:
                # What the reader accepts is valid YAML (and within the depth limit) but what it
                # only shaped and what it read as JSON, which libyaml checks; what it declines is
                # composed below exactly as on the reference path.
                fast = self._read_fast(piece.text, kind)
                shaped = _only_shaped(fast) or (isinstance(fast, _JsonRead) and not fast.checked)
                if fast is not None and (not shaped or nodes.libyaml_accepts(piece.text)):
                    self._append_read(fast, parsed, file_index, piece_index)
                    return
        except yaml.YAMLError as err:
            raise nodes.yaml_error(err, name, piece.number, piece.line, piece.text, piece.helm_template()) from None
        except WavegenError as err:
            raise err.located(file=name, document=piece.number, line_offset=piece.line, template=piece.helm_template()) from None
        self._compose_piece(parsed, file_index, piece_index, piece)

    def _compose_piece(
        self, parsed: _ParsedFile, file_index: int, piece_index: int, piece: Piece, depth_checked: bool = False
    ) -> None:
        """Compose a relevant document with libyaml and add its object(s) (``depth_checked``: see nodes.compose)."""
        import yaml

        from . import nodes

        name = parsed.name
        try:
            root = nodes.compose(piece.text, depth_checked)
            if root is None:
                return
            converted = nodes.to_python(root, "&" in piece.text)
            if not self._check_object(converted.value, root.start_mark.line):
                return  # passed through
        except yaml.YAMLError as err:
            raise nodes.yaml_error(err, name, piece.number, piece.line, piece.text, piece.helm_template()) from None
        except RecursionError:
            raise WavegenError(
                "document nests too deeply",
                file=name,
                document=piece.number,
                line=piece.line + 1,
                template=piece.helm_template(),
            ) from None
        except WavegenError as err:
            raise err.located(file=name, document=piece.number, line_offset=piece.line, template=piece.helm_template()) from None
        if converted.has_alias:
            parsed.aliased.add(piece_index)
        body = converted.value
        if not isinstance(body, dict) or "kind" not in body:
            return
        if str(body.get("kind", "")).endswith("List") and isinstance(body.get("items"), list):
            for item_index, item_node in nodes.iter_list_items(root):
                item = body["items"][item_index]
                if isinstance(item, dict) and "kind" in item:
                    self._add_object(item, item_node, file_index, piece_index, item_index)
            self._list_read(body)
            return
        self._add_object(body, root, file_index, piece_index, None)

    def _node(
        self,
        uid: int,
        cache: dict[tuple[int, int], AnyNode | None],
        field: str | None = None,
        template: tuple[str, ...] | None = None,
    ) -> tuple[AnyNode | None, tuple[str, int] | None]:
        """The node of an object, composing its document again (once per document), and the
        text its marks are in when that is not the document's: for one read as JSON, what
        line_of reads for ``field`` or the splicer for the pod template at ``template`` of it
        (jsonread.compose), from its List item's own text when it has a line of its own (see
        _json_item_window)."""
        where = self.located[uid]
        parsed = self.files[where.file]
        if where.piece in parsed.json_read:
            from . import jsonread

            # (No PyYAML: a JSON input need not load it. Built anew for each use: only what it reads.)
            wanted = None
            if field is not None:
                wanted = jsonread.field_wanted(list(field_parts(field)))
            elif template is not None:
                wanted = jsonread.template_wanted(template)
            text = parsed.pieces[where.piece].text
            if where.item is None:
                return jsonread.compose(text, wanted), None
            window = _json_item_window(parsed, where.piece, where.item)
            if window is not None:
                return jsonread.compose(window[0], wanted), window
            return list_item(jsonread.compose(text, {"items": {where.item: wanted}}), where.item), None
        key = (where.file, where.piece)
        if key not in cache:
            from . import nodes

            # Objects of one document are adjacent: keeping only the last
            # document's tree bounds memory to one document.
            cache.clear()
            # Its depth is known: the reader read it within the limit, or it was composed to be added.
            cache[key] = nodes.compose(parsed.pieces[where.piece].text, depth_checked=True)
        root = cache[key]
        if root is None or where.item is None:
            return root, None
        return list_item(root, where.item), None

    def _fast_field_line(self, uid: int, field: str) -> int | None:
        """The line of a field of an object the subset reader read, from its rows (None: compose it)."""
        where = self.located[uid]
        parsed = self.files[where.file]
        piece = parsed.pieces[where.piece]
        if where.item is not None:
            window = _item_window(parsed, where.piece, where.item)
            if window is None:
                return None
            text, _, first = window
            within = fastparse.field_line(text, field, self.row_cache, self.plain_values, item=True)
            return None if within is None else piece.line + first + within
        if where.piece not in parsed.fast_read:
            return None
        covered = parsed.covered.get(where.piece, ())
        within = fastparse.field_line(piece.text, field, self.row_cache, self.plain_values, covered)
        return None if within is None else piece.line + within

    def _locate_finding(
        self,
        finding: Finding,
        by_position: dict[tuple[str, int, int], int],
        cache: dict[tuple[int, int], AnyNode | None],
    ) -> Finding:
        if not finding.field or not finding.resource:
            return finding
        uid = by_position.get((finding.file, finding.document, finding.line))
        if uid is None:
            return finding
        line = self._fast_field_line(uid, finding.field)
        if line is None:
            node, _ = self._node(uid, cache, field=finding.field)
            if node is None:
                return finding
            line = self.objects[uid].line - 1 - node.start_mark.line + line_of(node, finding.field)
        return Finding(
            finding.severity,
            finding.message,
            finding.resource,
            finding.field,
            finding.file,
            line,
            finding.document,
            finding.template,
        )

    def _name_templates(self, findings: list[Finding]) -> list[Finding]:
        """Findings about documents that carry helm's ``# Source:`` comment name that template too."""
        by_name: dict[str, _ParsedFile] = {}
        for parsed in self.files:
            by_name.setdefault(parsed.name, parsed)
        named: list[Finding] = []
        for finding in findings:
            found = by_name.get(finding.file)
            pieces = found.pieces if found is not None else []
            # Pieces are numbered from 1 in order, so document N is piece N - 1.
            template = pieces[finding.document - 1].helm_template() if 0 < finding.document <= len(pieces) else ""
            if template and not finding.template:
                finding = Finding(
                    finding.severity,
                    finding.message,
                    finding.resource,
                    finding.field,
                    finding.file,
                    finding.line,
                    finding.document,
                    template,
                )
            named.append(finding)
        return named

    def plan(self) -> Plan:
        result = plan(self.objects, self.options)
        if result.findings:
            result.findings = self._name_templates(result.findings)
        if not any(f.field and f.resource for f in result.findings):
            return result  # nothing to locate
        # Findings name their object by position; index positions once instead of
        # scanning every object per finding (quadratic with many warnings).
        by_position: dict[tuple[str, int, int], int] = {}
        for obj in self.objects:
            by_position.setdefault((obj.file, obj.document, obj.line), obj.uid)
        result.findings = [self._locate_finding(f, by_position, self.composed) for f in result.findings]
        return result

    def unchanged(self) -> list[Output]:
        """Every input as its own output (what a run with errors hands back)."""
        return [_as_read(parsed) for parsed in self.files]

    def render(self, result: Plan) -> tuple[list[Output], list[str]]:
        """The new text of every input, and the names of documents that needed a round trip."""
        edits: dict[tuple[int, int], list[Edit]] = {}
        changes: dict[tuple[int, int], list[fallback.Change]] = {}
        unsafe: set[tuple[int, int]] = set()
        roots = self.composed
        for workload in result.workloads:
            if not workload.changed:
                continue
            where = self.located[workload.uid]
            key = (where.file, where.piece)
            parsed = self.files[where.file]
            for template in workload.templates:
                if not template.changed:
                    continue
                changes.setdefault(key, []).append((where.item, template.path, template.desired))
                if key in unsafe:
                    continue
                if where.piece in parsed.aliased:
                    # Anchors, aliases or merge keys: spliced only where the edits touch nothing
                    # shared and hide nothing merged, else the structural round trip.
                    object_node = self._node(workload.uid, roots)[0] if where.item is None else None
                    if object_node is None or shared_near_template(object_node, template.path):
                        unsafe.add(key)
                        continue
                doc = _document(parsed, where.piece)
                node: AnyNode | None = None
                marked = doc  # the text the node's marks are in: the document, or a List item's lines
                shift = 0  # where that text starts in the document
                if where.item is not None:
                    window = _item_window(parsed, where.piece, where.item)
                    if window is not None:
                        text, shift, _ = window
                        node = fastparse.template_node(text, template.path, self.row_cache, self.plain_values, item=True)
                        marked = DocumentText(text, line_starts(text, parsed.plain_breaks))
                        marked.eol = doc.eol  # (what the whole document's inserted lines end with)
                elif where.piece in parsed.fast_read:
                    start = parsed.fast_read[where.piece]
                    covered = parsed.covered.get(where.piece, ())
                    node = fastparse.template_node(doc.text, template.path, self.row_cache, self.plain_values, start, covered)
                if node is None:
                    object_node, json_window = self._node(workload.uid, roots, template=template.path)
                    if json_window is None:
                        marked = doc  # (the node's marks are the whole document's)
                    else:
                        text, shift = json_window  # (built alone: its marks are its own text's)
                        marked = DocumentText(text, line_starts(text, parsed.plain_breaks))
                        marked.eol = doc.eol
                    node = node_at(object_node, template.path) if object_node is not None else None
                try:
                    if node is None or not is_mapping(node):
                        raise Unsafe("template not found")
                    made = template_edits(marked, node, template.desired)
                    edits.setdefault(key, []).extend(
                        made if marked is doc else [Edit(edit.start + shift, edit.end + shift, edit.text) for edit in made]
                    )
                except Unsafe:
                    unsafe.add(key)
        roots.clear()  # (no more nodes are needed: the edits hold offsets)
        outputs: list[Output] = []
        fallbacks: list[str] = []
        touched = {file_index for file_index, _ in edits.keys() | unsafe}
        for file_index, parsed in enumerate(self.files):
            if file_index not in touched:
                outputs.append(_as_read(parsed))
                continue
            chunks: list[str | Spliced] = [parsed.bom]
            for piece_index, piece in enumerate(parsed.pieces):
                key = (file_index, piece_index)
                if key in unsafe:
                    try:
                        chunks.append(_roundtrip(piece.text, changes[key]))
                    except WavegenError as err:
                        raise err.located(file=parsed.name, document=piece.number, line_offset=piece.line) from None
                    fallbacks.append(f"{parsed.name}, document {piece.number}")
                elif key in edits:
                    try:
                        chunks.append(Spliced(piece.text, edits[key]))
                    except Unsafe:
                        chunks.append(_roundtrip(piece.text, changes[key]))
                        fallbacks.append(f"{parsed.name}, document {piece.number}")
                else:
                    chunks.append(piece.text)
            outputs.append(Output(parsed.name, parsed.text_chunks(), chunks, True))
        return outputs, fallbacks


def _only_shaped(read: _Read | _ListRead | _JsonRead | None) -> bool:
    """Whether the subset reader read a document but only shaped some of its flow collections (libyaml checks them)."""
    return read is not None and not isinstance(read, (list, _JsonRead)) and read[5]


def _json_rooted(text: str) -> bool:
    """Whether a document's first content (past its "---" line, blank and comment lines) is a "{"."""
    at = 0
    while True:
        end = text.find("\n", at)
        line = text[at : len(text) if end < 0 else end].strip()
        if line and line != "---" and line[0] != "#":
            return line[0] == "{"
        if end < 0:
            return False
        at = end + 1


def _context_free(pieces: list[Piece], directives: bool) -> bool:
    """Whether each piece of a text means alone what it means in the stream (``directives``:
    whether a line starts with "%", as split_marked found)."""
    # Directives make a document's meaning depend on where the stream is cut, and so does what
    # follows a "..." end marker but a "---" (a bare document); a BOM may restart a stream. With
    # none of them, libyaml accepting a run of "---"-separated pieces means it accepts every
    # piece alone, and the converse: an end marker that ends a piece (split_stream leaves it
    # last there) is read as its document's end (fastparse.document_text).
    # (A BOM looked for piece by piece: a piece with no character past U+00FF answers at once.)
    if directives or pieces[0].text.startswith("...") or any(BOM in piece.text for piece in pieces):
        return False
    # split_stream cuts after every end marker, so a piece but the first that does not start
    # with "---" follows one: there, until the next "---", comments and blank lines only (no
    # bare document, no second marker, which libyaml refuses there and accepts alone). A
    # marker line the reader does not take leaves its piece to libyaml, checked after "---" as here.
    return not any(
        index and not piece.text.startswith("---") and ("..." in piece.text or piece.has_content())
        for index, piece in enumerate(pieces)
    )


def _unmade(data: Any) -> bool:
    """Whether a ConfigMap's ``data`` is a TextData (see fastparse.parse's ``defer_data``), not
    the dict, list or scalar a document may hold there."""
    return data.__class__ is not dict and isinstance(data, Mapping)


def _document(parsed: _ParsedFile, piece_index: int) -> DocumentText:
    """A piece's text with its line starts, made when first needed and kept for the run."""
    doc = parsed.docs.get(piece_index)
    if doc is None:
        text = parsed.pieces[piece_index].text
        doc = parsed.docs[piece_index] = DocumentText(text, line_starts(text, parsed.plain_breaks))
    return doc


def _item_window(parsed: _ParsedFile, piece_index: int, item: int) -> tuple[str, int, int] | None:
    """A List item's lines as rows read them, from its first line to the next object item's
    (whose dash, or a line left of its own keys, ends its mappings): their text, where it
    starts in the piece and its first line. None for an item of a List the reader did not read.

    The List's lines are never split whole (a List of 2.7 MB is 56,000 lines): the item's rows
    give its template's nodes and its fields' lines, their marks in its text."""
    spans = parsed.item_lines.get(piece_index)
    if spans is None:
        return None
    first, following = spans[item]
    doc = _document(parsed, piece_index)
    begin = doc.line_start(first)
    return doc.text[begin : doc.line_start(following) if following >= 0 else len(doc.text)], begin, first


def _json_item_window(parsed: _ParsedFile, piece_index: int, item: int) -> tuple[str, int] | None:
    """An item of a List read as JSON, from its line's start to its closing bracket, and where
    that starts in the piece: its nodes are built from it alone (a List of 600 KB is not read
    whole for each finding and edit). None for an item of a List not read so, or one that shares
    its first line with what comes before it (its marks' columns would not be the List's)."""
    spans = parsed.json_read.get(piece_index)
    if spans is None:
        return None
    start, end = spans[item]
    text = parsed.pieces[piece_index].text
    begin = text.rfind("\n", 0, start) + 1
    if text.count(" ", begin, start) != start - begin:
        return None
    return text[begin:end], begin


def _roundtrip(text: str, changes: list[fallback.Change]) -> str:
    # Imported here: the structural round trip is rare, and its module costs start-up time.
    from .fallback import roundtrip

    return roundtrip(text, changes)


def _as_read(parsed: _ParsedFile) -> Output:
    text = parsed.text_chunks()
    return Output(parsed.name, text, text, False)


def _decoded(inputs: Iterable[InputDocument]) -> Iterator[tuple[str, list[str | bytes | bytearray], str]]:
    """Name, text (in a one-item list, for Engine.add_held to take; or UTF-8 bytes, see
    _undecoded) and byte-order mark of each input, holding no input once it is decoded (its
    bytes, once they are cut into pieces) and no text once it is taken."""
    for source in inputs:
        name = source.name
        undecoded = _undecoded(source)
        text, bom = decode(source) if undecoded is None else undecoded
        del source, undecoded  # the bytes can go now, if nothing else holds them (see handed_over)
        held: list[str | bytes | bytearray] = [text]
        del text
        yield name, held, bom


def handed_over(inputs: list[InputDocument]) -> Iterator[InputDocument]:
    """The inputs in order, each removed from the list as it is taken: nothing here keeps their bytes alive."""
    inputs.reverse()
    while inputs:
        yield inputs.pop()


def run(inputs: Iterable[InputDocument], options: Options, *, fast: bool = True, jobs: int | None = None) -> Result:
    """Parse every input as one bundle, plan, and render; bad input raises WavegenError.

    Only the pieces of each input's text are kept, not its bytes: pass ``handed_over(inputs)``
    for each file's bytes to be freed as soon as it is decoded. ``jobs``: see Engine (None: a
    large input may be read in forked processes, as many as forked.jobs_wanted() allows).
    """
    # Parsed documents stay alive until rendering and form no cycles; the
    # cyclic collector would rescan them again and again (it tripled run time).
    collecting = gc.isenabled()
    gc.disable()
    try:
        engine = Engine(options, fast=fast, only_planned=True, jobs=jobs)
        for name, held, bom in _decoded(inputs):
            engine.add_held(name, held, bom)
        result = engine.plan()
        engine.objects = []  # rendering needs only the plan and the pieces: free the objects first
        if result.has_errors:
            return Result(engine.unchanged(), result, result.findings, [])
        outputs, fallbacks = engine.render(result)
        return Result(outputs, result, result.findings, fallbacks)
    finally:
        if collecting:
            gc.enable()
