"""KRM exec function: a ResourceList on stdin, the same list with config hashes and results on stdout."""

from __future__ import annotations

import os
from _collections_abc import Callable, Mapping, Sequence

from ..core.record import Record
from ..errors import EXIT_FINDINGS, EXIT_OK, UsageError, WavegenError
from ..inputs.options import HashingFlags

# typing only for type checkers (see core/model.py): kustomize runs the function on every build.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NamedTuple
else:
    from ..core.record import NamedTuple

RESOURCE_LIST_VERSIONS = ("config.kubernetes.io/v1", "config.kubernetes.io/v1beta1")
TYPED_API_VERSION = "wavegen.io/v1alpha1"
TYPED_KIND = "ConfigHash"
LOCAL_CONFIG_ANNOTATION = "config.kubernetes.io/local-config"
# kpt writes the internal.* names; older orchestrators the legacy config.kubernetes.io/* ones.
PATH_ANNOTATIONS = ("internal.config.kubernetes.io/path", "config.kubernetes.io/path")
INDEX_ANNOTATIONS = ("internal.config.kubernetes.io/index", "config.kubernetes.io/index")
INPUT_NAME = "ResourceList"
_WORKLOAD_SEPARATORS = r"[\s;]+"


class _Item(NamedTuple):
    """Where one item of the ResourceList sits, and what the results need to name it."""

    body: Mapping[str, Any]
    first_line: int  # 1-based, in the whole input
    last_line: int


# ---- functionConfig ------------------------------------------------------------------------------


def _bool_text(value: Any, where: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise UsageError(f"{where}: optIn must be true or false")


def _workloads_from_text(text: str, where: str) -> list[dict[str, Any]]:
    """A ConfigMap can only hold strings: a YAML list of entries, or ``Kind[.group]=path`` specs."""
    import re

    import yaml

    from ..core.workloads import parse_workload_spec

    try:
        parsed = yaml.safe_load(text)
    except yaml.YAMLError:
        parsed = None
    if isinstance(parsed, list):
        return parsed
    entries = []
    for spec in re.split(_WORKLOAD_SEPARATORS, text.strip()):
        if not spec:
            continue
        kind = parse_workload_spec(spec)
        entries.append({"kind": kind.kind, "group": kind.group, "templatePaths": [".".join(p) for p in kind.template_paths]})
    if not entries:
        raise UsageError(f"{where}: workloads is empty")
    return entries


def settings_from_function_config(config: Any) -> dict[str, Any]:
    """The config-file-schema mapping a functionConfig describes (empty when there is none)."""
    if config is None:
        return {}
    if not isinstance(config, Mapping):
        raise UsageError("functionConfig must be an object")
    api_version, kind = config.get("apiVersion"), config.get("kind")
    if api_version == "v1" and kind == "ConfigMap":
        where = "functionConfig ConfigMap data"
        data = config.get("data") or {}
        if not isinstance(data, Mapping):
            raise UsageError(f"{where} must be a mapping")
        settings: dict[str, Any] = {}
        for key, value in data.items():
            if not isinstance(value, str):
                raise UsageError(f"{where}: {key} must be a string")
            settings[str(key)] = value
        if "optIn" in settings:
            settings["optIn"] = _bool_text(settings["optIn"], where)
        if "workloads" in settings:
            settings["workloads"] = _workloads_from_text(settings["workloads"], where)
        return settings
    if api_version == TYPED_API_VERSION and kind == TYPED_KIND:
        where = f"functionConfig {TYPED_KIND} spec"
        spec = config.get("spec") or {}
        if not isinstance(spec, Mapping):
            raise UsageError(f"{where} must be a mapping")
        settings = dict(spec)
        if "optIn" in settings:
            settings["optIn"] = _bool_text(settings["optIn"], where)
        for key in ("profile", "namespace", "missing", "hmacKeyFile"):
            if key in settings and settings[key] is not None and not isinstance(settings[key], str):
                raise UsageError(f"{where}: {key} must be a string")
        return settings
    raise UsageError(f"functionConfig must be a v1 ConfigMap or a {TYPED_API_VERSION} {TYPED_KIND}, got {api_version}/{kind}")


def krm_options(function_config: Any, flags: HashingFlags | None, environ: Mapping[str, str]) -> Any:
    """Options from functionConfig, with command-line flags (``exec.args``) taking precedence."""
    from ..inputs.options import options_from, options_from_flags

    settings = settings_from_function_config(function_config)
    if flags is None:
        return options_from(settings, environ, "functionConfig")
    if flags.config:
        raise UsageError("krm takes its configuration from functionConfig, not --config")
    return options_from_flags(flags, environ, base=settings, where="functionConfig")


# ---- the ResourceList ------------------------------------------------------------------------------


def _load_resource_list(data: bytes) -> dict[str, Any]:
    """The parsed ResourceList (plain data), or a WavegenError saying why this is not one."""
    import yaml

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise WavegenError("input is not UTF-8 text", file=INPUT_NAME) from None
    try:
        docs = [d for d in yaml.load_all(text, Loader=_list_loader()) if d is not None]
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        raise WavegenError(
            f"invalid YAML: {getattr(err, 'problem', None) or 'syntax error'}",
            file=INPUT_NAME,
            line=mark.line + 1 if mark is not None else 0,
        ) from None
    if len(docs) != 1 or not isinstance(docs[0], dict):
        raise WavegenError("expected exactly one ResourceList document on stdin", file=INPUT_NAME)
    return _checked_root(docs[0])


def _list_loader() -> Any:
    """PyYAML's safe loader, reading a plain ``=`` (YAML 1.1's value key, for which it has no
    constructor) as the string it is, as the engine and kubectl's go-yaml read it: the CRDs of
    prometheus-operator's bundle hold one, and a list of them was refused."""
    import yaml

    class ListLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]  # (C or Python)
        pass

    ListLoader.add_constructor("tag:yaml.org,2002:value", ListLoader.construct_scalar)
    return ListLoader


def _checked_root(root: dict[str, Any]) -> dict[str, Any]:
    if root.get("kind") != "ResourceList" or root.get("apiVersion") not in RESOURCE_LIST_VERSIONS:
        raise WavegenError(
            f"expected kind ResourceList with apiVersion {' or '.join(RESOURCE_LIST_VERSIONS)}, "
            f"got {root.get('apiVersion')}/{root.get('kind')}",
            file=INPUT_NAME,
        )
    items = root.get("items")
    if items is not None and not isinstance(items, list):
        raise WavegenError("ResourceList items must be a list", file=INPUT_NAME)
    return root


def _read_alike(root: dict[str, Any]) -> bool:
    """Whether the engine read the ResourceList's own fields as PyYAML's loader would: where it made
    of apiVersion, kind or functionConfig a value the loader would type otherwise (a timestamp, a
    number: the engine keeps their text), or items are no list, _load_resource_list reads the list."""
    own = (root.get("apiVersion"), root.get("kind"), root.get("functionConfig"))
    return all(_loaded_alike(field) for field in own) and root.get("items").__class__ in (list, type(None))


def _read_list(data: bytes) -> tuple[Any, WavegenError | None, dict[str, Any] | None]:
    """The engine with the input added, what it refused in it (reported once the input is known to be
    a ResourceList, with its functionConfig's options), and the list it read, where it read the
    list's own fields as PyYAML's loader reads them (None: _load_resource_list reads the list)."""
    from ..stream.engine import InputDocument

    engine = _engine_class()()
    try:
        engine.add(InputDocument(INPUT_NAME, data))
    except WavegenError as err:
        return engine, err, None
    read = engine.root
    if read is None or not _one_document(engine) or not _read_alike(read):
        return engine, None, None
    return engine, None, read


def _one_document(engine: Any) -> bool:
    """Whether the input is one piece, one document (_load_resource_list says what it expects of
    any other input, and reads one whose other pieces hold no document)."""
    return len(engine.files[0].pieces) == 1


def _loaded_alike(value: Any) -> bool:
    """Whether PyYAML's safe loader makes the same value of the text the engine made ``value`` of:
    strings, booleans, nulls and integers, in mappings and lists of them."""
    return _every_leaf(value, lambda leaf: leaf is None or leaf.__class__ in (str, bool, int))


def _every_leaf(value: Any, test: Callable[[Any], bool]) -> bool:
    """Whether ``test`` holds for every key and value in ``value``'s mappings and lists (for ``value``
    itself where it is neither)."""
    if value.__class__ is dict:
        return all(_every_leaf(key, test) and _every_leaf(item, test) for key, item in value.items())
    if value.__class__ is list:
        return all(_every_leaf(item, test) for item in value)
    return test(value)


def is_local_config(body: Any) -> bool:
    metadata = body.get("metadata") if isinstance(body, Mapping) else None
    annotations = metadata.get("annotations") if isinstance(metadata, Mapping) else None
    if not isinstance(annotations, Mapping):
        return False
    return str(annotations.get(LOCAL_CONFIG_ANNOTATION, "")).strip().lower() == "true"


def _engine_class() -> Any:
    from ..core.plan import Options
    from ..stream.engine import Engine

    class KrmEngine(Engine):
        """The stream engine, blind to items the orchestrator marked local-config, keeping the list it reads."""

        def __init__(self) -> None:
            # The options come from the list's functionConfig, read with the list: adding a List
            # consults none (see Engine._list_read), so the engine starts from the defaults and is
            # given the list's before it plans.
            super().__init__(Options())
            self.local_bodies: list[Any] = []
            self.root: dict[str, Any] | None = None

        def _list_read(self, body: dict[Any, Any]) -> None:
            self.root = body

        def _append_object(
            self, body: Any, root_line: int, file_index: int, piece_index: int, item: int | None, *rest: Any
        ) -> None:
            # local-config items never reach the cluster: hashing them would describe data no pod sees.
            if item is not None and is_local_config(body):
                self.local_bodies.append(body)
                return
            super()._append_object(body, root_line, file_index, piece_index, item, *rest)

    return KrmEngine


def _predict_kustomize_names(engine: Any) -> None:
    """Show the core the objects as kustomize will emit them, so the hash matches the applied bundle."""
    from .kustomize_names import FinalNames

    # local-config items are never hashed, but kustomize still renames references to them.
    names = FinalNames([*(obj.body for obj in engine.objects), *engine.local_bodies])
    if not names.active:
        return
    renamed = []
    for obj in engine.objects:
        if id(obj.body) in names.final:
            renamed.append(obj.with_body(names.source_body(obj.body)))
        else:
            renamed.append(obj.with_body(names.workload_body(obj.body)))
    engine.objects = renamed


def _items_of(engine: Any, lines: int) -> list[_Item]:
    """Each object's lines: from its first to the line before the next object's (the last one's to
    the ``lines`` of the input), so that a finding on an object's first line names that object."""
    objects = engine.objects
    count = len(objects)
    return [
        _Item(obj.body, obj.line, objects[index + 1].line - 1 if index + 1 < count else lines)
        for index, obj in enumerate(objects)
    ]


def _identity(body: Mapping[str, Any]) -> dict[str, str]:
    metadata = body.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    ref = {
        "apiVersion": str(body.get("apiVersion", "")),
        "kind": str(body.get("kind", "")),
        "name": str(metadata.get("name", "")),
    }
    if metadata.get("namespace"):
        ref["namespace"] = str(metadata["namespace"])
    return ref


def _annotation(body: Mapping[str, Any], names: Sequence[str]) -> str | None:
    metadata = body.get("metadata")
    annotations = metadata.get("annotations") if isinstance(metadata, Mapping) else None
    if isinstance(annotations, Mapping):
        for name in names:
            value = annotations.get(name)
            if value is not None:
                return str(value)
    return None


def _item_for(finding: Any, items: Sequence[_Item], default_namespace: str) -> _Item | None:
    if finding.line:
        for item in items:
            if item.first_line <= finding.line <= item.last_line:
                return item
    if finding.resource:
        for item in items:
            ref = _identity(item.body)
            display = f"{ref['kind']}/{ref.get('namespace') or default_namespace}/{ref['name']}"
            if display == finding.resource:
                return item
    return None


def result_of(finding: Any, item: _Item | None) -> dict[str, Any]:
    """One KRM result for a finding: severity, message, resourceRef, field and file."""
    result: dict[str, Any] = {"message": finding.message, "severity": finding.severity.value}
    if item is not None:
        result["resourceRef"] = _identity(item.body)
    if finding.field:
        result["field"] = {"path": finding.field}
    if item is not None:
        path = _annotation(item.body, PATH_ANNOTATIONS)
        if path:
            file: dict[str, Any] = {"path": path}
            index = _annotation(item.body, INDEX_ANNOTATIONS)
            if index is not None and index.strip().isdigit():
                file["index"] = int(index)
            result["file"] = file
    return result


def _error_result(err: WavegenError) -> dict[str, Any]:
    return {"message": err.message, "severity": "error"}


# ---- writing results back -----------------------------------------------------------------------


def _looks_like_json(text: str) -> bool:
    return text.lstrip("\ufeff \t\r\n").startswith("{")


def _dump_results(results: list[dict[str, Any]], indent: str, newline: str) -> str:
    import yaml

    # libyaml's emitter writes what PyYAML's Python one writes where every string is printable ASCII
    # (tests/unit/test_krm.py holds it to that), in a sixth of the time (the chart mix's 2,243 results:
    # 0.55 -> 0.09 s); past ASCII it writes some characters otherwise (escapes those past U+FFFF).
    fast = getattr(yaml, "CSafeDumper", None) if _printable_ascii(results) else None
    dumped = yaml.dump(
        {"results": results},
        Dumper=fast or yaml.SafeDumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        width=1 << 16,
    )
    # (its lines end with "\n"; splitlines would cut a message at a NEL, LS or PS inside it too)
    lines = dumped.split("\n")[:-1]
    return "".join(indent + line + newline for line in lines)


def _printable_ascii(value: Any) -> bool:
    """Whether every string in ``value`` (results: mappings, lists, strings and integers) is printable ASCII."""
    return _every_leaf(value, _printable_ascii_leaf)


def _printable_ascii_leaf(leaf: Any) -> bool:
    return bool(leaf.isascii() and leaf.isprintable()) if leaf.__class__ is str else leaf.__class__ is int


def _root_mapping(text: str) -> Any:
    """The block mapping node of the one document in text, or None when it is not one."""
    import yaml
    from yaml.nodes import MappingNode

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    roots = [n for n in yaml.compose_all(text, Loader=loader) if isinstance(n, MappingNode)]
    if len(roots) != 1 or roots[0].flow_style:
        return None
    return roots[0]


def _set_in_data(data: Any, results: list[dict[str, Any]] | None) -> None:
    if results is None:
        data.pop("results", None)
    else:
        data["results"] = results


def _after_line_of(text: str, index: int) -> int:
    """The offset just past the line break that ends the line holding ``index`` (or the end of text)."""
    if index > 0 and text[index - 1] == "\n":
        return index
    newline_at = text.find("\n", index)
    return len(text) if newline_at < 0 else newline_at + 1


# A line at column 0 of a ResourceList that is no key's: blank, a comment, an item of a block
# sequence written at its key's column.
_NOT_A_KEY_LINE = r"[ \t]*(?:#.*)?\r?|- .*|-\r?"
# A key's line at column 0: a plain key, and what follows its colon on the line.
_KEY_LINE = r"([A-Za-z_][\w.-]*):(?:[ \t]+(.*?))?\r?"
# A line start whose line is neither blank nor a comment.
_CONTENT_LINE = r"^(?![ \t]*(?:#|\r?$))"
# The first line of a value below its key's line that starts a block sequence or block mapping.
_COLLECTION_START = r"[ ]*(?:-(?: |\r?$)|[A-Za-z_][\w.-]*:(?:[ \t]|\r?$))"


def _root_entries(text: str, keys: Sequence[Any]) -> list[tuple[str, int, int]] | None:
    """The root mapping's keys where ``text`` writes them at column 0 in block style, as kustomize
    and kpt do: each key, where its line starts and where its value ends (past the line where
    libyaml's node for it ends, as _with_results_composed takes it); None unless the lines at column
    0 are the lines of ``keys`` (the root's keys, in order, as read) and lines that are no key's
    (_NOT_A_KEY_LINE).

    ``keys`` are the check: a line at column 0 inside a quoted scalar or a flow collection over
    lines that looks like a key's is one more key than the root has. A value below its key's line
    that starts a block collection ends where the next key's line starts (or the text ends:
    libyaml ends a block collection at the next token), an absent one at the end of its key's line
    (libyaml's null there is marked at the colon); any other value, and one on its key's line, is
    composed alone, from its key's line to the next key's, which gives the marks the whole text
    gives (a document's top-level entries at column 0 share nothing but anchors, which fail it)."""
    import re

    import yaml

    if not all(key.__class__ is str for key in keys):
        return None
    not_a_key, key_line = re.compile(_NOT_A_KEY_LINE), re.compile(_KEY_LINE)
    found: list[tuple[str, int, str | None]] = []
    for line in re.finditer(r"^[^ \n].*", text, re.MULTILINE):
        if not_a_key.fullmatch(line.group()):
            continue
        key = key_line.fullmatch(line.group())
        if key is None:
            return None
        rest = key.group(2)
        found.append((key.group(1), line.start(), rest if rest and not rest.startswith("#") else None))
    if [name for name, _, _ in found] != list(keys):
        return None
    content = re.compile(_CONTENT_LINE, re.MULTILINE)
    entries: list[tuple[str, int, int]] = []
    for index, (name, start, inline) in enumerate(found):
        stop = found[index + 1][1] if index + 1 < len(found) else len(text)
        below = _after_line_of(text, start + 1)  # (the line after the key's)
        if inline is None:
            first = content.search(text, below, stop)
            if first is None:
                entries.append((name, start, below))  # (an empty value: its key's line)
                continue
            if re.match(_COLLECTION_START, text[first.start() : text.find("\n", first.start()) + 1 or stop]):
                entries.append((name, start, stop))
                continue
        try:
            node = yaml.compose(text[start:stop], Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        except yaml.YAMLError:
            return None
        if not isinstance(node, yaml.MappingNode) or len(node.value) != 1:
            return None
        entries.append((name, start, _after_line_of(text, start + node.value[0][1].end_mark.index)))
    return entries


def with_results(text: str, results: list[dict[str, Any]] | None, keys: Sequence[Any] | None = None) -> str:
    """The ResourceList text with ``results`` replaced (removed when None); everything else byte for byte.

    ``keys``: its root mapping's keys as read, in order; with them, a list written as kustomize and
    kpt write it is not composed again (see _root_entries): a list of the chart mix's 5,320 objects
    took 2.9 s to compose for its results.
    """
    if _looks_like_json(text):
        import json

        data = json.loads(text)
        _set_in_data(data, results)
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    newline = "\r\n" if "\r\n" in text else "\n"
    if keys is None or (entries := _root_entries(text, keys)) is None:
        return _with_results_composed(text, results, newline)
    for name, start, end in entries:
        if name == "results":
            text = text[:start] + text[end:]
            if results is None:
                return text
            # Found again: a value that ends at the next token reaches further with results gone.
            entries = _root_entries(text, [key for key in keys if key != "results"])
            if entries is None:
                return _with_results_composed(text, results, newline)
            break
    if results is None:
        return text
    if not entries:
        raise WavegenError("cannot write results into this ResourceList", file=INPUT_NAME)
    return _inserted(text, entries[-1][2], results, "", newline)


def _with_results_composed(text: str, results: list[dict[str, Any]] | None, newline: str | None = None) -> str:
    """with_results from the nodes libyaml composes of the list (any YAML it reads); ``newline``: the
    line break the list had before its results were taken out (by default, what the text has)."""
    import yaml
    from yaml.nodes import ScalarNode

    root = _root_mapping(text)
    if root is None:  # flow style: nothing to preserve byte for byte, re-emit the whole list
        data = yaml.safe_load(text)
        _set_in_data(data, results)
        return str(yaml.safe_dump(data, sort_keys=False, default_flow_style=False, allow_unicode=True, width=1 << 16))
    if newline is None:
        newline = "\r\n" if "\r\n" in text else "\n"
    for key_node, value_node in root.value:
        if isinstance(key_node, ScalarNode) and key_node.value == "results":
            start = text.rfind("\n", 0, key_node.start_mark.index) + 1
            text = text[:start] + text[_after_line_of(text, value_node.end_mark.index) :]
            root = _root_mapping(text)
            break
    if results is None:
        return text
    if root is None or not root.value:
        raise WavegenError("cannot write results into this ResourceList", file=INPUT_NAME)
    insert_at = _after_line_of(text, root.value[-1][1].end_mark.index)
    return _inserted(text, insert_at, results, " " * root.start_mark.column, newline)


def _inserted(text: str, insert_at: int, results: list[dict[str, Any]], indent: str, newline: str) -> str:
    """``results`` dumped into ``text`` at ``insert_at``, a line's start (or the end of the text)."""
    if insert_at == len(text) and not text.endswith("\n"):
        text += newline
        insert_at = len(text)
    return text[:insert_at] + _dump_results(results, indent, newline) + text[insert_at:]


# ---- the command ------------------------------------------------------------------------------------


class KrmOutcome(Record, hashable=False):
    """What the function writes to stdout and how it exits."""

    __slots__ = ("exit_code", "output", "results")

    def __init__(self, output: bytes, exit_code: int, results: list[dict[str, Any]]) -> None:
        self.output = output
        self.exit_code = exit_code
        self.results = results


def process(data: bytes, flags: HashingFlags | None = None, environ: Mapping[str, str] | None = None) -> KrmOutcome:
    """Run the function over one serialized ResourceList; raises WavegenError only for unreadable input.

    The list is read as the stream engine reads any input (the subset reader takes a List's items
    from their own lines); PyYAML loads it whole only where that reader declines its own fields.
    """
    from ..core.model import Severity

    env = os.environ if environ is None else environ
    engine, refused, read = _read_list(data)
    root = _load_resource_list(data) if read is None else _checked_root(read)
    # (the input is decoded again only where it is written back as it came: the engine holds its pieces)
    try:
        options = krm_options(root.get("functionConfig"), flags, env)
        if refused is not None:
            raise refused
        engine.options = options
        _predict_kustomize_names(engine)
        plan = engine.plan()
        if plan.has_errors:
            output_text = data.decode("utf-8")
        else:
            outputs, _ = engine.render(plan)
            output_text = "".join(outputs[0].chunks)
    except WavegenError as err:
        results = [_error_result(err)]
        output = with_results(data.decode("utf-8"), results, list(root)).encode("utf-8")
        return KrmOutcome(output, err.exit_code or EXIT_FINDINGS, results)
    items = _items_of(engine, data.count(b"\n") + 1)
    results = [result_of(f, _item_for(f, items, options.namespace)) for f in plan.findings]
    if results or "results" in root:
        output_text = with_results(output_text, results or None, list(root))
    failed = any(f.severity is Severity.ERROR for f in plan.findings)
    return KrmOutcome(output_text.encode("utf-8"), EXIT_FINDINGS if failed else EXIT_OK, results)
