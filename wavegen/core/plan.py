"""Decides, for a set of objects, which pod templates get which wavegen annotations, and why."""

from __future__ import annotations

from _collections_abc import Mapping, Sequence

from ..errors import UsageError
from .hashing import CanonicalCache
from .model import ConfigSource, Finding, Reference, Severity, SourceKey, is_mapping
from .podtemplate import Identity, at_path, object_identity, selection, short_ref, template_references
from .record import Record
from .refs import merge_visible_keys, pod_spec_references
from .sources import SourceError, config_source, metadata_annotations
from .wave import (
    WAVE_HASH_ANNOTATION,
    wave_enabled,
    wave_hash,
    wave_missing_required,
)
from .workloads import NON_ROLLING_KINDS, WorkloadKind, WorkloadTable, split_api_version

# typing only for type checkers (see model.py); the choices below are plain strings at run time.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final, Literal, NamedTuple

    Profile = Literal["wavegen", "wave"]
    MissingPolicy = Literal["warn", "error", "ignore"]
    # "key-missing": the object is in the bundle (and hashed as usual) but lacks a
    # key this non-optional reference names, so the pod could not start.
    RefState = Literal["present", "key-missing", "missing", "optional-absent", "ignored"]
    WorkloadStatus = Literal["annotated", "no-references", "ignored", "not-opted-in", "not-rolling", "no-template"]
else:
    from .record import NamedTuple

    Profile = MissingPolicy = RefState = WorkloadStatus = str

HASH_ANNOTATION = "wavegen.io/config-hash"
UNHASHED_ANNOTATION = "wavegen.io/unhashed-refs"

PROFILES: tuple[Profile, ...] = ("wavegen", "wave")
MISSING_POLICIES: tuple[MissingPolicy, ...] = ("warn", "error", "ignore")


class Options(Record):
    """Everything that changes the core's decisions; adapters fill it from flags, functionConfig, env."""

    __slots__ = ("hmac_key", "missing", "namespace", "opt_in", "profile", "workloads")
    profile: Final[Profile]
    namespace: Final[str]
    missing: Final[MissingPolicy]
    opt_in: Final[bool]
    workloads: Final[WorkloadTable]
    hmac_key: Final[bytes | None]

    def __init__(
        self,
        profile: Profile = "wavegen",
        namespace: str = "default",
        missing: MissingPolicy = "warn",
        opt_in: bool = False,
        workloads: WorkloadTable | None = None,
        hmac_key: bytes | None = None,
    ) -> None:
        if profile not in PROFILES:
            raise UsageError(f"unknown profile {profile!r} (choose from {', '.join(PROFILES)})")
        if missing not in MISSING_POLICIES:
            raise UsageError(f"unknown missing policy {missing!r} (choose from {', '.join(MISSING_POLICIES)})")
        self.profile = profile
        self.namespace = namespace
        self.missing = missing
        self.opt_in = opt_in
        self.workloads = WorkloadTable() if workloads is None else workloads
        self.hmac_key = hmac_key

    def with_workloads(self, workloads: WorkloadTable) -> Options:
        """The same options with another workload table."""
        return Options(self.profile, self.namespace, self.missing, self.opt_in, workloads, self.hmac_key)

    @property
    def hash_annotation(self) -> str:
        return WAVE_HASH_ANNOTATION if self.profile == "wave" else HASH_ANNOTATION

    @property
    def owned_annotations(self) -> tuple[str, ...]:
        """Pod-template annotations this profile writes and may rewrite or remove."""
        if self.profile == "wave":
            return (self.hash_annotation,)
        return (HASH_ANNOTATION, UNHASHED_ANNOTATION)


class KubeObject(Record):
    """One Kubernetes object from a bundle or the cluster; ``uid`` maps decisions back to it."""

    __slots__ = ("body", "document", "file", "identity", "line", "reads", "uid")
    uid: Final[int]
    body: Final[Mapping[str, Any]]
    file: Final[str]
    document: Final[int]
    line: Final[int]
    # What the planner reads of a workload, ConfigMap or Secret, taken out by a reader that then
    # kept only the body's identity (PlanReader.read, with the options the plan uses); None: read the body.
    reads: Final[PlanReads]
    # (apiVersion, kind, namespace, name) as the planner reads them from the body, taken out
    # by the same reader (with the same options); None: read the body.
    identity: Final[Identity | None]

    def __init__(
        self,
        uid: int,
        body: Mapping[str, Any],
        file: str = "",
        document: int = 0,
        line: int = 0,
        reads: PlanReads = None,
        identity: Identity | None = None,
    ) -> None:
        self.uid = uid
        self.body = body
        self.file = file
        self.document = document
        self.line = line
        self.reads = reads
        self.identity = identity

    def with_body(self, body: Mapping[str, Any]) -> KubeObject:
        """The same object (uid and position) with another body (read again by the planner)."""
        return KubeObject(self.uid, body, self.file, self.document, self.line)


# States in which the referenced object is in the bundle and its visible keys are hashed.
HASHED_STATES: frozenset[RefState] = frozenset(("present", "key-missing"))


class ResolvedReference(NamedTuple):
    """A reference and what the bundle holds for it (a named tuple: one is built per reference)."""

    reference: Reference
    state: RefState
    missing_keys: frozenset[str] = frozenset()  # required keys the object lacks (state "key-missing" or "ignored")


class TemplatePlan(Record, hashable=False):
    """The decision for one pod template of a workload."""

    __slots__ = ("current", "desired", "hashed_sources", "path", "references")
    path: tuple[str, ...]
    references: list[ResolvedReference]
    current: dict[str, str]
    desired: dict[str, str | None]  # annotation -> new value, None = remove
    hashed_sources: list[SourceKey]

    def __init__(
        self,
        path: tuple[str, ...],
        references: list[ResolvedReference],
        current: dict[str, str],
        desired: dict[str, str | None],
        hashed_sources: list[SourceKey],
    ) -> None:
        self.path = path
        self.references = references
        self.current = current
        self.desired = desired
        self.hashed_sources = hashed_sources

    @property
    def changed(self) -> bool:
        return any(self.current.get(k) != v for k, v in self.desired.items())

    @property
    def hash_annotation(self) -> str | None:
        """The profile's hash annotation when this template's plan sets or removes it."""
        return next((a for a in (HASH_ANNOTATION, WAVE_HASH_ANNOTATION) if a in self.desired), None)

    @property
    def config_hash(self) -> str | None:
        """The hash this template will carry, under whichever profile's annotation."""
        annotation = self.hash_annotation
        return self.desired[annotation] if annotation else None


class WorkloadPlan(Record, hashable=False):
    __slots__ = ("api_version", "document", "file", "kind", "line", "name", "namespace", "reason", "status", "templates", "uid")
    uid: int
    api_version: str
    kind: str
    namespace: str
    name: str
    status: WorkloadStatus
    reason: str
    templates: list[TemplatePlan]
    file: str
    document: int
    line: int

    def __init__(
        self,
        uid: int,
        api_version: str,
        kind: str,
        namespace: str,
        name: str,
        status: WorkloadStatus,
        reason: str,
        templates: list[TemplatePlan],
        file: str = "",
        document: int = 0,
        line: int = 0,
    ) -> None:
        self.uid = uid
        self.api_version = api_version
        self.kind = kind
        self.namespace = namespace
        self.name = name
        self.status = status
        self.reason = reason
        self.templates = templates
        self.file = file
        self.document = document
        self.line = line

    @property
    def changed(self) -> bool:
        return any(t.changed for t in self.templates)

    @property
    def display(self) -> str:
        return f"{self.kind}/{self.namespace}/{self.name}"


class Plan(Record, hashable=False):
    __slots__ = ("findings", "sources", "workloads")
    sources: dict[SourceKey, ConfigSource]
    workloads: list[WorkloadPlan]
    findings: list[Finding]

    def __init__(self, sources: dict[SourceKey, ConfigSource], workloads: list[WorkloadPlan], findings: list[Finding]) -> None:
        self.sources = sources
        self.workloads = workloads
        self.findings = findings

    @property
    def has_errors(self) -> bool:
        return any(f.severity is Severity.ERROR for f in self.findings)


#: The parts of a body the planner reads, as nested keys; None stands for a whole value. A
#: tree applies to a mapping, or to each item of a sequence. See :func:`fields_read`.
FieldTree = dict[str, "FieldTree | None"]
_IDENTITY_FIELDS: FieldTree = {
    "apiVersion": None,
    "kind": None,
    "metadata": {"name": None, "namespace": None, "annotations": None},
}
_SOURCE_FIELDS: FieldTree = {"data": None, "binaryData": None, "stringData": None}
_CONTAINER_FIELDS: FieldTree = {"env": {"valueFrom": None}, "envFrom": None}
_TEMPLATE_FIELDS: FieldTree = {
    "metadata": {"annotations": None},
    "spec": {
        "volumes": {"configMap": None, "secret": None, "projected": None},
        "initContainers": _CONTAINER_FIELDS,
        "containers": _CONTAINER_FIELDS,
    },
}


class TemplateFields(dict[str, "FieldTree | None"]):
    """The fields read of the pod template at ``path``: a reader may note where it starts."""

    __slots__ = ("path",)

    def __init__(self, path: tuple[str, ...], fields: FieldTree) -> None:
        super().__init__(fields)
        self.path = path


def _merge_fields(into: FieldTree, tree: FieldTree) -> None:
    for key, sub in tree.items():
        if key not in into:
            into[key] = _copy_fields(sub)
            continue
        mine = into[key]
        if mine is None or sub is None:
            into[key] = None
            continue
        _merge_fields(mine, sub)
        if isinstance(sub, TemplateFields) and not isinstance(mine, TemplateFields):
            into[key] = TemplateFields(sub.path, mine)


def _copy_fields(tree: FieldTree | None) -> FieldTree | None:
    if tree is None:
        return None
    copy = {key: _copy_fields(sub) for key, sub in tree.items()}
    return TemplateFields(tree.path, copy) if isinstance(tree, TemplateFields) else copy


def _non_rolling_template_path(kind: str) -> tuple[str, ...]:
    return ("spec", "template") if kind == "Job" else ()


def fields_read(kind: str, options: Options) -> FieldTree:
    """Every part of a ``kind`` object's body :func:`plan` can read, whatever its API group.

    A reader may drop everything else before planning (or keep it: values outside
    the tree are never read); the plan is the same. Tests hold the planner to it.
    """
    tree = _copy_fields(_IDENTITY_FIELDS)
    assert tree is not None
    if kind in ("ConfigMap", "Secret"):
        _merge_fields(tree, _SOURCE_FIELDS)
    paths = [path for workload in options.workloads.kinds if workload.kind == kind for path in workload.template_paths]
    paths.extend(_non_rolling_template_path(kind) for group, name in NON_ROLLING_KINDS if name == kind)
    for path in paths:
        nested: FieldTree = TemplateFields(path, _TEMPLATE_FIELDS)
        for part in reversed(path):
            nested = {part: nested}
        _merge_fields(tree, nested)
    return tree


def _identities(objects: Sequence[KubeObject], options: Options) -> list[Identity]:
    namespace = options.namespace
    return [object_identity(obj.body, namespace) if obj.identity is None else obj.identity for obj in objects]


def _stored_form(kind: str, namespace: str, name: str, body: Mapping[str, Any]) -> ConfigSource | SourceError:
    """A ConfigMap's or Secret's stored form, or what is wrong with it (kept without a traceback,
    which would hold the frames that raised it)."""
    try:
        return config_source(kind, namespace, name, body)  # type: ignore[arg-type]
    except SourceError as err:
        return err.with_traceback(None)


def _collect_sources(
    objects: Sequence[KubeObject], identities: Sequence[Identity]
) -> tuple[dict[SourceKey, ConfigSource], list[Finding]]:
    sources: dict[SourceKey, ConfigSource] = {}
    findings: list[Finding] = []
    for obj, (api_version, kind, namespace, name) in zip(objects, identities, strict=True):
        if api_version != "v1" or kind not in ("ConfigMap", "Secret") or not name:
            continue
        reads = obj.reads
        stored = reads if isinstance(reads, (ConfigSource, SourceError)) else _stored_form(kind, namespace, name, obj.body)
        if isinstance(stored, SourceError):
            findings.append(
                Finding(
                    Severity.ERROR, stored.message, f"{kind}/{namespace}/{name}", stored.field, obj.file, obj.line, obj.document
                )
            )
            continue
        source = stored
        sources.pop(source.key, None)  # re-insert: the last definition wins, in its position
        sources[source.key] = source
    return sources, findings


def collect_sources(objects: Sequence[KubeObject], options: Options) -> tuple[dict[SourceKey, ConfigSource], list[Finding]]:
    """Every ConfigMap and Secret in the objects, in stored form; invalid ones become error findings.

    A ConfigMap/Secret defined twice keeps its last definition, as ``kubectl
    apply`` of the bundle would leave it (duplicates are reported by
    :func:`duplicate_findings`).
    """
    return _collect_sources(objects, _identities(objects, options))


def _where(obj: KubeObject) -> str:
    return ":".join(str(p) for p in (obj.file or "input", obj.document, obj.line))


def _duplicate_findings(objects: Sequence[KubeObject], identities: Sequence[Identity]) -> list[Finding]:
    first: dict[tuple[str, str, str, str], KubeObject] = {}
    groups: dict[str, str] = {}
    findings: list[Finding] = []
    for obj, (api_version, kind, namespace, name) in zip(objects, identities, strict=True):
        if not kind or not name:
            continue
        group = groups.get(api_version)
        if group is None:
            group = groups[api_version] = split_api_version(api_version)[0]
        identity = (group, kind, namespace, name)
        earlier = first.get(identity)
        if earlier is None:
            first[identity] = obj
            continue
        kind_text = f"{kind}.{group}" if group else kind
        findings.append(
            Finding(
                Severity.WARNING,
                f"{kind_text} {namespace}/{name} is defined twice, at {_where(earlier)} and {_where(obj)};"
                " kubectl apply would apply both and keep the last",
                f"{kind}/{namespace}/{name}",
                "",
                obj.file,
                obj.line,
                obj.document,
            )
        )
    return findings


def duplicate_findings(objects: Sequence[KubeObject], options: Options) -> list[Finding]:
    """A warning for each object defined again in the bundle (same API group, kind, namespace and name).

    ``kubectl apply`` applies both and the last one wins; for a ConfigMap or
    Secret the hash uses that last one too. Namespaces default as everywhere
    else (``options.namespace``); cluster-scoped kinds share that default, which
    is harmless because they can only collide with themselves.
    """
    return _duplicate_findings(objects, _identities(objects, options))


def _pod_needs(template: Mapping[str, Any], path: tuple[str, ...], namespace: str, options: Options) -> dict[str, Reference]:
    """The pod's own references by field, where the profile's differ in the keys a pod needs.

    wave reads plain volumes whole (it ignores their ``items``), but the
    kubelet still needs every key those ``items`` name to mount them.
    """
    if options.profile != "wave":
        return {}
    spec = template.get("spec")
    refs = pod_spec_references(spec if is_mapping(spec) else {}, namespace, ".".join((*path, "spec")))
    return {r.field: r for r in refs if r.keys is not None}


_NO_KEYS: frozenset[str] = frozenset()
_new_tuple = tuple.__new__  # builds a named tuple without its Python-level __new__ (same value)


def _absent_keys(need: Reference, source: ConfigSource) -> frozenset[str]:
    """``absent_required_keys(need, source.key_names())``, without building the key view."""
    keys = need.keys
    if need.optional or keys is None:
        return _NO_KEYS
    text, binary = source.text_data, source.binary_data
    for key in keys:
        if key not in text and key not in binary:
            return frozenset([k for k in keys if k not in text and k not in binary])
    return _NO_KEYS


def _resolve(
    refs: Sequence[Reference], sources: Mapping[SourceKey, ConfigSource], needs: Mapping[str, Reference] | None = None
) -> list[ResolvedReference]:
    resolved = []
    for ref in refs:
        source = sources.get(ref.source)
        absent = _NO_KEYS
        if source is None:
            state: RefState = "optional-absent" if ref.optional else "missing"
        else:
            need = needs.get(ref.field, ref) if needs else ref
            if need.keys is not None and need.source == ref.source:  # only a keyed reference can lack a key
                absent = _absent_keys(need, source)
            # An ignored object is kept out of the hash, not out of the pod: a key it lacks still stops the pod.
            state = "ignored" if source.ignored else "key-missing" if absent else "present"
        resolved.append(_new_tuple(ResolvedReference, (ref, state, absent)))
    return resolved


def _owned_annotations(template: Mapping[str, Any], owned: tuple[str, ...]) -> dict[str, str]:
    """The template's string-valued annotations among ``owned``, in the template's order."""
    metadata = template.get("metadata")
    annotations = metadata.get("annotations") if is_mapping(metadata) else None
    if not annotations or not is_mapping(annotations):
        return {}
    return {k: v for k, v in annotations.items() if k in owned and isinstance(k, str) and isinstance(v, str)}


class TemplateReads(Record, hashable=False):
    """What the planner reads of one pod template: its references and its owned annotations."""

    __slots__ = ("current", "needs", "path", "references")
    path: Final[tuple[str, ...]]
    references: Final[list[Reference]]
    needs: Final[Mapping[str, Reference]]  # see _pod_needs (wave profile only)
    current: Final[Mapping[str, str]]

    def __init__(
        self, path: tuple[str, ...], references: list[Reference], needs: Mapping[str, Reference], current: Mapping[str, str]
    ) -> None:
        self.path = path
        self.references = references
        self.needs = needs
        self.current = current


class WorkloadReads(Record, hashable=False):
    """Everything the planner reads of a workload's body, so that a reader may drop the body.

    ``not_rolling`` is the reason for a kind that carries a pod spec but does not roll
    (None for a workload kind); ``template_paths`` are where the kind's templates may be.
    Only valid with the :class:`Options` it was read with.
    """

    __slots__ = ("annotations", "not_rolling", "template_paths", "templates")
    annotations: Final[Mapping[str, str]]
    templates: Final[list[TemplateReads]]
    not_rolling: Final[str | None]
    template_paths: Final[tuple[tuple[str, ...], ...]]

    def __init__(
        self,
        annotations: Mapping[str, str],
        templates: list[TemplateReads],
        not_rolling: str | None,
        template_paths: tuple[tuple[str, ...], ...],
    ) -> None:
        self.annotations = annotations
        self.templates = templates
        self.not_rolling = not_rolling
        self.template_paths = template_paths


#: What a reader may take out of a body for the planner (see KubeObject.reads).
PlanReads = WorkloadReads | ConfigSource | SourceError | None
_NOTHING: Mapping[str, Any] = {}


class PlanReader:
    """Reads bodies for the planner (:meth:`read`); caches the kind lookups."""

    __slots__ = ("kinds", "options", "owned", "wave")

    def __init__(self, options: Options) -> None:
        self.options = options
        self.owned = options.owned_annotations
        self.wave = options.profile == "wave"
        self.kinds: dict[tuple[str, str], WorkloadKind | None] = {}

    def _lookup(self, group: str, kind: str) -> WorkloadKind | None:
        try:
            return self.kinds[group, kind]
        except KeyError:
            found = self.kinds[group, kind] = self.options.workloads.lookup(group, kind)
            return found

    def read_body(self, body: Mapping[str, Any]) -> tuple[PlanReads, Identity]:
        """All the planner reads of a body, and its identity: a workload's reads, a ConfigMap's
        or Secret's stored form (or what is wrong with it), or None when the body must be kept."""
        identity = object_identity(body, self.options.namespace)
        api_version, kind, namespace, name = identity
        if api_version == "v1" and kind in ("ConfigMap", "Secret") and name and self._lookup("", kind) is None:
            return _stored_form(kind, namespace, name, body), identity
        return self.read(body, identity), identity

    def read(self, body: Mapping[str, Any], identity: Identity) -> WorkloadReads | None:
        """What the planner needs of a workload body; None when the object is no workload at all."""
        api_version, kind, namespace, _ = identity
        group = split_api_version(api_version)[0] if "/" in api_version else ""
        workload_kind = self._lookup(group, kind)
        options = self.options
        if workload_kind is None:
            reason = NON_ROLLING_KINDS.get((group, kind))
            if reason is None:
                return None
            annotations = metadata_annotations(body)
            spec_path = _non_rolling_template_path(kind)
            template = at_path(body, spec_path) if spec_path else body
            templates = []
            if template is not None:
                refs = template_references(template, spec_path, annotations, namespace, options.profile)
                templates.append(TemplateReads(spec_path, refs, _NOTHING, _NOTHING))
            return WorkloadReads(annotations, templates, reason, (spec_path,))
        annotations = metadata_annotations(body)
        templates = []
        for path in workload_kind.template_paths:
            template = at_path(body, path)
            if template is None:
                continue
            refs = template_references(template, path, annotations, namespace, options.profile)
            needs = _pod_needs(template, path, namespace, options) if self.wave else _NOTHING
            current = _owned_annotations(template, self.owned) or _NOTHING
            templates.append(TemplateReads(path, refs, needs, current))
        return WorkloadReads(annotations or _NOTHING, templates, None, workload_kind.template_paths)


class _Planner:
    """Plans workloads against one set of sources; caches what repeats across workloads."""

    __slots__ = ("canonical", "options", "owned", "reader", "sources", "wave")

    def __init__(self, sources: Mapping[SourceKey, ConfigSource], options: Options) -> None:
        self.options = options
        self.sources = sources
        self.canonical = CanonicalCache()
        self.owned = options.owned_annotations
        self.wave = options.profile == "wave"
        self.reader = PlanReader(options)

    def _template_plan(self, reads: TemplateReads, workload_annotations: Mapping[str, str], namespace: str) -> TemplatePlan:
        options = self.options
        sources = self.sources
        refs = reads.references
        resolved = _resolve(refs, sources, reads.needs if self.wave else None)
        current = dict(reads.current)
        # A missing key changes nothing in the hash: the keys that are there are hashed as before.
        present = [r.reference for r in resolved if r.state in HASHED_STATES]
        visible = merge_visible_keys(present)
        desired: dict[str, str | None] = {}
        if self.wave:
            # wave hashes every enabled workload, references or not, and knows
            # nothing of wavegen.io/ignore: give it every reference as wave sees it.
            if visible or wave_enabled(workload_annotations):
                desired[options.hash_annotation] = wave_hash(refs, sources)
            else:
                desired[options.hash_annotation] = None
        elif not visible:
            desired = {k: None for k in self.owned}
        else:
            desired[HASH_ANNOTATION] = self.canonical.config_hash(
                [(sources[k], keys) for k, keys in visible.items()], options.hmac_key
            )
            unhashed = sorted(
                {short_ref(r.reference.source, namespace) for r in resolved if r.state in ("missing", "optional-absent")}
            )
            desired[UNHASHED_ANNOTATION] = ",".join(unhashed) if unhashed else None
        return TemplatePlan(reads.path, resolved, current, desired, sorted(visible))

    def workload(self, obj: KubeObject, identity: Identity) -> WorkloadPlan | None:
        reads = obj.reads if isinstance(obj.reads, WorkloadReads) else self.reader.read(obj.body, identity)
        if reads is None:
            return None
        api_version, kind, namespace, name = identity
        if reads.not_rolling is not None:
            templates = [TemplatePlan(t.path, _resolve(t.references, self.sources), {}, {}, []) for t in reads.templates]
            return WorkloadPlan(
                obj.uid,
                api_version,
                kind,
                namespace,
                name,
                "not-rolling",
                reads.not_rolling,
                templates,
                obj.file,
                obj.document,
                obj.line,
            )
        annotations = reads.annotations
        status: WorkloadStatus | None
        status, reason = selection(annotations, self.options.opt_in, self.options.profile)
        templates = []
        for template_reads in reads.templates:
            plan = self._template_plan(template_reads, annotations, namespace)
            if status is not None:
                plan.desired = {}
            templates.append(plan)
        if status is None:
            if not templates:
                status, reason = (
                    "no-template",
                    "no pod template at " + " or ".join(".".join(p) for p in reads.template_paths),
                )
            elif all(all(v is None for v in t.desired.values()) for t in templates):
                status, reason = "no-references", "references no ConfigMap or Secret in the bundle"
            else:
                status, reason = "annotated", ""
        return WorkloadPlan(
            obj.uid, api_version, kind, namespace, name, status, reason, templates, obj.file, obj.document, obj.line
        )


def _missing_findings(workload: WorkloadPlan, sources: Mapping[SourceKey, ConfigSource], options: Options) -> list[Finding]:
    if options.missing == "ignore" or workload.status not in ("annotated", "no-references"):
        return []
    severity = Severity.ERROR if options.missing == "error" else Severity.WARNING
    findings = []
    for template in workload.templates:
        for resolved in template.references:
            src = resolved.reference.source
            if resolved.state == "missing":
                message = f"{workload.display} references {src.kind} {src.namespace}/{src.name}, which is not in the bundle"
            elif resolved.missing_keys:
                keys = ", ".join(repr(k) for k in sorted(resolved.missing_keys))
                what, it = ("keys", "them") if len(resolved.missing_keys) > 1 else ("key", "it")
                message = (
                    f"{workload.display} needs {what} {keys} of {src.kind} {src.namespace}/{src.name},"
                    f" which lacks {it} in the bundle; its pods cannot start"
                )
            else:
                continue
            findings.append(
                Finding(
                    severity,
                    message,
                    workload.display,
                    resolved.reference.field,
                    workload.file,
                    workload.line,
                    workload.document,
                )
            )
    if options.profile == "wave":
        for template in workload.templates:
            present = {r.reference.source for r in template.references if r.state != "missing"}
            refs = [r.reference for r in template.references if r.reference.source in present]
            for problem in wave_missing_required(refs, sources):
                findings.append(
                    Finding(
                        Severity.WARNING,
                        f"{workload.display}: wave will not update its hash: {problem}",
                        workload.display,
                        ".".join(template.path),
                        workload.file,
                        workload.line,
                        workload.document,
                    )
                )
    return findings


def plan_workload(obj: KubeObject, sources: Mapping[SourceKey, ConfigSource], options: Options) -> WorkloadPlan | None:
    """The plan for one object, or None when it is not a workload at all."""
    return _Planner(sources, options).workload(obj, object_identity(obj.body, options.namespace))


def plan(objects: Sequence[KubeObject], options: Options) -> Plan:
    """The whole decision for a bundle: sources, each workload's annotations, findings."""
    identities = _identities(objects, options)
    sources, findings = _collect_sources(objects, identities)
    findings.extend(_duplicate_findings(objects, identities))
    planner = _Planner(sources, options)
    workloads = []
    for obj, identity in zip(objects, identities, strict=True):
        workload = planner.workload(obj, identity)
        if workload is not None:
            workloads.append(workload)
            findings.extend(_missing_findings(workload, sources, options))
    return Plan(sources, workloads, findings)
