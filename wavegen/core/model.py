"""Plain data types shared by the core: config sources, references, workloads, findings."""

from __future__ import annotations

from _collections_abc import Collection, Iterator, Mapping

from .record import Record

# typing only for type checkers: importing it costs a one-document run about 4 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ClassVar, Final, Literal, NamedTuple, TypeGuard

    SourceKind = Literal["ConfigMap", "Secret"]
else:
    from .record import NamedTuple

    SourceKind = str


def is_mapping(value: Any) -> TypeGuard[Mapping[str, Any]]:
    """``isinstance(value, Mapping)``, answered without the ABC machinery for dicts and None (the common cases)."""
    return isinstance(value, dict) or (value is not None and isinstance(value, Mapping))


class SourceKey(NamedTuple):
    """Identity of a ConfigMap or Secret: kind, namespace and name.

    A named tuple, so that hashing, equality and ordering (by kind, namespace,
    name) run in C: the planner looks sources up once per reference.
    """

    kind: SourceKind
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.kind}/{self.namespace}/{self.name}"


class _KeyNames(Collection[str]):
    """The keys of two mappings as one collection: membership is two lookups, nothing is copied."""

    __slots__ = ("_first", "_second")

    def __init__(self, first: Mapping[str, object], second: Mapping[str, object]) -> None:
        self._first = first
        self._second = second

    def __contains__(self, key: object) -> bool:
        return key in self._first or key in self._second

    def __iter__(self) -> Iterator[str]:
        yield from self._first
        yield from (k for k in self._second if k not in self._first)

    def __len__(self) -> int:
        return sum(1 for _ in self)


class ConfigSource(Record):
    """A ConfigMap or Secret holding the data the API server would store.

    ``text_data`` is a ConfigMap's ``data`` (always empty for a Secret).
    ``binary_data`` is a ConfigMap's ``binaryData`` decoded from base64, or a
    Secret's ``data`` decoded from base64 with ``stringData`` folded over it
    (UTF-8 encoded), exactly as the API server stores it. An empty mapping and
    an absent field are the same thing, as they are once stored.
    """

    __slots__ = ("annotations", "binary_data", "ignored", "key", "text_data")
    key: Final[SourceKey]
    text_data: Final[Mapping[str, str]]
    binary_data: Final[Mapping[str, bytes]]
    annotations: Final[Mapping[str, str]]
    ignored: Final[bool]

    def __init__(
        self,
        key: SourceKey,
        text_data: Mapping[str, str],
        binary_data: Mapping[str, bytes],
        annotations: Mapping[str, str] | None = None,
        ignored: bool = False,
    ) -> None:
        self.key = key
        self.text_data = text_data
        self.binary_data = binary_data
        self.annotations = {} if annotations is None else annotations
        self.ignored = ignored

    def key_names(self) -> Collection[str]:
        """Every key the object holds (``data`` and ``binaryData``, or a Secret's folded ``data``), without copying."""
        return _KeyNames(self.text_data, self.binary_data)

    def stored_value(self, key: str) -> bytes | None:
        """One key's stored bytes as ``visible_items`` gives them (None when absent), without copying the others."""
        if key in self.binary_data:
            return self.binary_data[key]
        text = self.text_data.get(key)
        return None if text is None else text.encode("utf-8")

    def visible_items(self, keys: frozenset[str] | None) -> dict[str, bytes]:
        """Return the key -> stored bytes a reference sees (all keys when ``keys`` is None)."""
        merged: dict[str, bytes] = {k: v.encode("utf-8") for k, v in self.text_data.items()}
        merged.update(self.binary_data)
        if keys is None:
            return merged
        return {k: v for k, v in merged.items() if k in keys}


class Reference(NamedTuple):
    """One place a pod template names a ConfigMap or Secret.

    ``keys`` is None when the reference can see every key (``envFrom``, a
    volume without ``items``); otherwise the set of keys it can see.
    ``field`` is a dotted path for messages, e.g.
    ``spec.template.spec.containers[0].envFrom[1].configMapRef``.
    A named tuple: a pod spec yields several, and a tuple is built in C.
    """

    source: SourceKey
    keys: frozenset[str] | None
    optional: bool
    field: str


class Workload(Record):
    """A workload's identity and the parts of it the core reads."""

    __slots__ = ("annotations", "api_version", "kind", "name", "namespace", "template_paths", "templates")
    api_version: Final[str]
    kind: Final[str]
    namespace: Final[str]
    name: Final[str]
    annotations: Final[Mapping[str, str]]
    template_paths: Final[tuple[tuple[str, ...], ...]]
    # Each entry is the pod template (the mapping holding metadata and spec)
    # found at the corresponding template path.
    templates: Final[tuple[Mapping[str, Any], ...]]

    def __init__(
        self,
        api_version: str,
        kind: str,
        namespace: str,
        name: str,
        annotations: Mapping[str, str],
        template_paths: tuple[tuple[str, ...], ...],
        templates: tuple[Mapping[str, Any], ...],
    ) -> None:
        self.api_version = api_version
        self.kind = kind
        self.namespace = namespace
        self.name = name
        self.annotations = annotations
        self.template_paths = template_paths
        self.templates = templates

    def __str__(self) -> str:
        return f"{self.kind}/{self.namespace}/{self.name}"


class TypedScalar(Record):
    """A YAML scalar that is not a string (a number, boolean written as such, timestamp, ...).

    Kept apart from ``str`` so the core can reject it where the API server
    only accepts strings (ConfigMap data) instead of silently converting it.
    """

    __slots__ = ("tag", "text")
    tag: Final[str]
    text: Final[str]

    def __init__(self, tag: str, text: str) -> None:
        self.tag = tag
        self.text = text


class Severity(str):
    """How serious a finding is: ``Severity.ERROR``, ``WARNING`` or ``INFO``, equal to "error", "warning" and "info".

    A str whose three values are its only instances, with ``value``, ``name`` and ``Severity("error")``
    as a ``StrEnum``'s members have them; not an ``enum.StrEnum``, because importing enum costs a
    run about 1 ms.
    """

    __slots__ = ()
    ERROR: ClassVar[Severity]
    WARNING: ClassVar[Severity]
    INFO: ClassVar[Severity]

    def __new__(cls, value: str) -> Severity:
        member = _SEVERITIES.get(value)
        if member is None:
            raise ValueError(f"{value!r} is not a valid Severity")
        return member

    @property
    def value(self) -> str:
        return str.__str__(self)

    @property
    def name(self) -> str:
        return self.upper()

    def __repr__(self) -> str:
        return f"<Severity.{self.name}: {str.__repr__(self)}>"


_SEVERITIES: Final = {value: str.__new__(Severity, value) for value in ("error", "warning", "info")}
Severity.ERROR, Severity.WARNING, Severity.INFO = _SEVERITIES.values()


class Finding(Record):
    """Something the user should know; never contains Secret values."""

    __slots__ = ("document", "field", "file", "line", "message", "resource", "severity", "template")
    severity: Final[Severity]
    message: Final[str]
    resource: Final[str]
    field: Final[str]
    file: Final[str]
    line: Final[int]
    document: Final[int]
    template: Final[str]  # helm's "# Source:" template of the document, if it names one

    def __init__(
        self,
        severity: Severity,
        message: str,
        resource: str = "",
        field: str = "",
        file: str = "",
        line: int = 0,
        document: int = 0,
        template: str = "",
    ) -> None:
        self.severity = severity
        self.message = message
        self.resource = resource
        self.field = field
        self.file = file
        self.line = line
        self.document = document
        self.template = template
