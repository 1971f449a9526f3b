"""Decides, for a set of objects, which pod templates get which wavegen annotations, and why."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import UsageError
from .hashing import config_hash
from .model import ConfigSource, Finding, Reference, Severity, SourceKey
from .refs import absent_required_keys, extra_references, merge_visible_keys, pod_spec_references
from .sources import IGNORE_ANNOTATION, SourceError, config_source, metadata_annotations
from .wave import WAVE_HASH_ANNOTATION
from .workloads import NON_ROLLING_KINDS, WorkloadTable, split_api_version

HASH_ANNOTATION = "wavegen.io/config-hash"
UNHASHED_ANNOTATION = "wavegen.io/unhashed-refs"
ENABLED_ANNOTATION = "wavegen.io/enabled"

Profile = Literal["wavegen", "wave"]
MissingPolicy = Literal["warn", "error", "ignore"]
PROFILES: tuple[Profile, ...] = ("wavegen", "wave")
MISSING_POLICIES: tuple[MissingPolicy, ...] = ("warn", "error", "ignore")


@dataclass(frozen=True, slots=True)
class Options:
    """Everything that changes the core's decisions; adapters fill it from flags, functionConfig, env."""

    profile: Profile = "wavegen"
    namespace: str = "default"
    missing: MissingPolicy = "warn"
    opt_in: bool = False
    workloads: WorkloadTable = field(default_factory=WorkloadTable)
    hmac_key: bytes | None = None

    def __post_init__(self) -> None:
        if self.profile not in PROFILES:
            raise UsageError(f"unknown profile {self.profile!r} (choose from {', '.join(PROFILES)})")
        if self.missing not in MISSING_POLICIES:
            raise UsageError(f"unknown missing policy {self.missing!r} (choose from {', '.join(MISSING_POLICIES)})")

    @property
    def hash_annotation(self) -> str:
        return WAVE_HASH_ANNOTATION if self.profile == "wave" else HASH_ANNOTATION

    @property
    def owned_annotations(self) -> tuple[str, ...]:
        """Pod-template annotations this profile writes and may rewrite or remove."""
        if self.profile == "wave":
            return (self.hash_annotation,)
        return (HASH_ANNOTATION, UNHASHED_ANNOTATION)


@dataclass(frozen=True, slots=True)
class KubeObject:
    """One Kubernetes object from a bundle or the cluster; ``uid`` maps decisions back to it."""

    uid: int
    body: Mapping[str, Any]
    file: str = ""
    document: int = 0
    line: int = 0


# "key-missing": the object is in the bundle (and hashed as usual) but lacks a
# key this non-optional reference names, so the pod could not start.
RefState = Literal["present", "key-missing", "missing", "optional-absent", "ignored"]
# States in which the referenced object is in the bundle and its visible keys are hashed.
HASHED_STATES: frozenset[RefState] = frozenset(("present", "key-missing"))


@dataclass(frozen=True, slots=True)
class ResolvedReference:
    reference: Reference
    state: RefState
    missing_keys: frozenset[str] = frozenset()  # required keys the object lacks (state "key-missing" or "ignored")


@dataclass(slots=True)
class TemplatePlan:
    """The decision for one pod template of a workload."""

    path: tuple[str, ...]
    references: list[ResolvedReference]
    current: dict[str, str]
    desired: dict[str, str | None]  # annotation -> new value, None = remove
    hashed_sources: list[SourceKey]

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


WorkloadStatus = Literal["annotated", "no-references", "ignored", "not-opted-in", "not-rolling", "no-template"]


@dataclass(slots=True)
class WorkloadPlan:
    uid: int
    api_version: str
    kind: str
    namespace: str
    name: str
    status: WorkloadStatus
    reason: str
    templates: list[TemplatePlan]
    file: str = ""
    document: int = 0
    line: int = 0

    @property
    def changed(self) -> bool:
        return any(t.changed for t in self.templates)

    @property
    def display(self) -> str:
        return f"{self.kind}/{self.namespace}/{self.name}"


@dataclass(slots=True)
class Plan:
    sources: dict[SourceKey, ConfigSource]
    workloads: list[WorkloadPlan]
    findings: list[Finding]

    @property
    def has_errors(self) -> bool:
        return any(f.severity is Severity.ERROR for f in self.findings)


def _identity(body: Mapping[str, Any], default_namespace: str) -> tuple[str, str, str, str]:
    api_version = body.get("apiVersion")
    kind = body.get("kind")
    metadata = body.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    name = metadata.get("name")
    namespace = metadata.get("namespace")
    return (
        api_version if isinstance(api_version, str) else "",
        kind if isinstance(kind, str) else "",
        namespace if isinstance(namespace, str) and namespace else default_namespace,
        name if isinstance(name, str) else "",
    )


def _at_path(body: Mapping[str, Any], path: Sequence[str]) -> Mapping[str, Any] | None:
    node: Any = body
    for part in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(part)
    return node if isinstance(node, Mapping) else None


def _short_ref(key: SourceKey, namespace: str) -> str:
    return f"{key.kind}/{key.name}" if key.namespace == namespace else f"{key.kind}/{key.namespace}/{key.name}"


def collect_sources(objects: Sequence[KubeObject], options: Options) -> tuple[dict[SourceKey, ConfigSource], list[Finding]]:
    """Every ConfigMap and Secret in the objects, in stored form; invalid ones become error findings.

    A ConfigMap/Secret defined twice keeps its last definition, as ``kubectl
    apply`` of the bundle would leave it (duplicates are reported by
    :func:`duplicate_findings`).
    """
    sources: dict[SourceKey, ConfigSource] = {}
    findings: list[Finding] = []
    for obj in objects:
        api_version, kind, namespace, name = _identity(obj.body, options.namespace)
        if api_version != "v1" or kind not in ("ConfigMap", "Secret") or not name:
            continue
        try:
            source = config_source(kind, namespace, name, obj.body)  # type: ignore[arg-type]
        except SourceError as err:
            findings.append(
                Finding(Severity.ERROR, err.message, f"{kind}/{namespace}/{name}", err.field, obj.file, obj.line, obj.document)
            )
            continue
        sources.pop(source.key, None)  # re-insert: the last definition wins, in its position
        sources[source.key] = source
    return sources, findings


def _where(obj: KubeObject) -> str:
    return ":".join(str(p) for p in (obj.file or "input", obj.document, obj.line))


def duplicate_findings(objects: Sequence[KubeObject], options: Options) -> list[Finding]:
    """A warning for each object defined again in the bundle (same API group, kind, namespace and name).

    ``kubectl apply`` applies both and the last one wins; for a ConfigMap or
    Secret the hash uses that last one too. Namespaces default as everywhere
    else (``options.namespace``); cluster-scoped kinds share that default, which
    is harmless because they can only collide with themselves.
    """
    first: dict[tuple[str, str, str, str], KubeObject] = {}
    findings: list[Finding] = []
    for obj in objects:
        api_version, kind, namespace, name = _identity(obj.body, options.namespace)
        if not kind or not name:
            continue
        group, _ = split_api_version(api_version)
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


def _template_references(
    template: Mapping[str, Any], path: tuple[str, ...], workload_annotations: Mapping[str, str], namespace: str, options: Options
) -> list[Reference]:
    spec = template.get("spec")
    spec = spec if isinstance(spec, Mapping) else {}
    spec_field = ".".join((*path, "spec"))
    if options.profile == "wave":
        from .wave import wave_references

        return wave_references(spec, workload_annotations, namespace, spec_field)
    return pod_spec_references(spec, namespace, spec_field) + extra_references(workload_annotations, namespace)


def _pod_needs(template: Mapping[str, Any], path: tuple[str, ...], namespace: str, options: Options) -> dict[str, Reference]:
    """The pod's own references by field, where the profile's differ in the keys a pod needs.

    wave reads plain volumes whole (it ignores their ``items``), but the
    kubelet still needs every key those ``items`` name to mount them.
    """
    if options.profile != "wave":
        return {}
    spec = template.get("spec")
    refs = pod_spec_references(spec if isinstance(spec, Mapping) else {}, namespace, ".".join((*path, "spec")))
    return {r.field: r for r in refs if r.keys is not None}


def _resolve(
    refs: Sequence[Reference], sources: Mapping[SourceKey, ConfigSource], needs: Mapping[str, Reference] | None = None
) -> list[ResolvedReference]:
    resolved = []
    for ref in refs:
        source = sources.get(ref.source)
        absent: frozenset[str] = frozenset()
        if source is None:
            state: RefState = "optional-absent" if ref.optional else "missing"
        else:
            need = (needs or {}).get(ref.field, ref)
            if need.keys is not None and need.source == ref.source:  # only a keyed reference can lack a key
                absent = absent_required_keys(need, source.key_names())
            # An ignored object is kept out of the hash, not out of the pod: a key it lacks still stops the pod.
            state = "ignored" if source.ignored else "key-missing" if absent else "present"
        resolved.append(ResolvedReference(ref, state, absent))
    return resolved


def _template_plan(
    template: Mapping[str, Any],
    path: tuple[str, ...],
    workload_annotations: Mapping[str, str],
    namespace: str,
    sources: Mapping[SourceKey, ConfigSource],
    options: Options,
) -> TemplatePlan:
    refs = _template_references(template, path, workload_annotations, namespace, options)
    resolved = _resolve(refs, sources, _pod_needs(template, path, namespace, options))
    current = {k: v for k, v in metadata_annotations(template).items() if k in options.owned_annotations}
    # A missing key changes nothing in the hash: the keys that are there are hashed as before.
    present = [r.reference for r in resolved if r.state in HASHED_STATES]
    visible = merge_visible_keys(present)
    desired: dict[str, str | None] = {}
    if options.profile == "wave":
        from .wave import wave_enabled, wave_hash

        # wave hashes every enabled workload, references or not, and knows
        # nothing of wavegen.io/ignore: give it every reference as wave sees it.
        if visible or wave_enabled(workload_annotations):
            desired[options.hash_annotation] = wave_hash(refs, sources)
            visible = visible or {}
        else:
            desired[options.hash_annotation] = None
    elif not visible:
        desired = {k: None for k in options.owned_annotations}
    else:
        desired[HASH_ANNOTATION] = config_hash(((sources[k], keys) for k, keys in visible.items()), options.hmac_key)
        unhashed = sorted(
            {_short_ref(r.reference.source, namespace) for r in resolved if r.state in ("missing", "optional-absent")}
        )
        desired[UNHASHED_ANNOTATION] = ",".join(unhashed) if unhashed else None
    return TemplatePlan(path, resolved, current, desired, sorted(visible))


def _selection(annotations: Mapping[str, str], options: Options) -> tuple[WorkloadStatus | None, str]:
    if annotations.get(IGNORE_ANNOTATION, "").lower() == "true":
        return "ignored", f'{IGNORE_ANNOTATION} is "true"'
    if options.opt_in:
        if options.profile == "wave":
            from .wave import WAVE_ENABLE_ANNOTATION, wave_enabled

            wanted = wave_enabled(annotations)
            key = WAVE_ENABLE_ANNOTATION
        else:
            wanted = annotations.get(ENABLED_ANNOTATION, "").lower() == "true"
            key = ENABLED_ANNOTATION
        if not wanted:
            return "not-opted-in", f'--opt-in is set and {key} is not "true"'
    return None, ""


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
        from .wave import wave_missing_required

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
    api_version, kind, namespace, name = _identity(obj.body, options.namespace)
    group, _ = split_api_version(api_version)
    annotations = metadata_annotations(obj.body)
    location = {"file": obj.file, "document": obj.document, "line": obj.line}
    workload_kind = options.workloads.lookup(group, kind)
    if workload_kind is None:
        reason = NON_ROLLING_KINDS.get((group, kind))
        if reason is None:
            return None
        spec_path: tuple[str, ...] = ("spec", "template") if kind == "Job" else ()
        template = _at_path(obj.body, spec_path) if spec_path else obj.body
        templates = []
        if template is not None:
            refs = _template_references(template, spec_path, annotations, namespace, options)
            templates.append(TemplatePlan(spec_path, _resolve(refs, sources), {}, {}, []))
        return WorkloadPlan(obj.uid, api_version, kind, namespace, name, "not-rolling", reason, templates, **location)  # type: ignore[arg-type]
    status, reason = _selection(annotations, options)
    templates = []
    for path in workload_kind.template_paths:
        template = _at_path(obj.body, path)
        if template is None:
            continue
        plan = _template_plan(template, path, annotations, namespace, sources, options)
        if status is not None:
            plan.desired = {}
        templates.append(plan)
    if status is None:
        if not templates:
            status, reason = "no-template", "no pod template at " + " or ".join(".".join(p) for p in workload_kind.template_paths)
        elif all(all(v is None for v in t.desired.values()) for t in templates):
            status, reason = "no-references", "references no ConfigMap or Secret in the bundle"
        else:
            status, reason = "annotated", ""
    return WorkloadPlan(obj.uid, api_version, kind, namespace, name, status, reason, templates, **location)  # type: ignore[arg-type]


def plan(objects: Sequence[KubeObject], options: Options) -> Plan:
    """The whole decision for a bundle: sources, each workload's annotations, findings."""
    sources, findings = collect_sources(objects, options)
    findings.extend(duplicate_findings(objects, options))
    workloads = []
    for obj in objects:
        workload = plan_workload(obj, sources, options)
        if workload is not None:
            workloads.append(workload)
            findings.extend(_missing_findings(workload, sources, options))
    return Plan(sources, workloads, findings)
