"""Watch-mode decisions: which references the bundle left uncovered, their live hash, and whether to roll."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .hashing import KeyDigests, config_hash_from_digests
from .model import Reference, SourceKey
from .plan import UNHASHED_ANNOTATION, Options
from .podtemplate import at_path, object_identity, selection, short_ref, template_references
from .refs import absent_required_keys, merge_visible_keys
from .sources import metadata_annotations
from .workloads import split_api_version

# Written on the pod template only when the controller rolls the workload.
LIVE_HASH_ANNOTATION = "wavegen.io/live-hash"
# Written on the workload's own metadata (never the template, so writing it never rolls):
# the controller's record of the live hash and of the references it covers.
LIVE_REFS_ANNOTATION = "wavegen.io/live-refs"
# Also on the workload's metadata: the required references (or keys) that were missing when the record was
# made. Pods cannot start without them, so when they appear the pods read their current content: no rollout.
LIVE_MISSING_ANNOTATION = "wavegen.io/live-missing"

LiveAction = Literal["none", "skip", "adopt", "roll", "hold", "clear"]


def parse_ref_list(value: str, namespace: str) -> frozenset[SourceKey]:
    """Parse ``Kind/name`` or ``Kind/namespace/name`` entries, comma separated (``wavegen.io/unhashed-refs``)."""
    keys: set[SourceKey] = set()
    for entry in value.split(","):
        parts = [p.strip() for p in entry.strip().split("/")]
        if len(parts) == 2 and parts[0] in ("ConfigMap", "Secret") and parts[1]:
            keys.add(SourceKey(parts[0], namespace, parts[1]))  # type: ignore[arg-type]
        elif len(parts) == 3 and parts[0] in ("ConfigMap", "Secret") and parts[1] and parts[2]:
            keys.add(SourceKey(parts[0], parts[1], parts[2]))  # type: ignore[arg-type]
    return frozenset(keys)


def format_ref_list(keys: frozenset[SourceKey] | set[SourceKey], namespace: str) -> str:
    """The inverse of :func:`parse_ref_list`, sorted, in the form ``wavegen.io/unhashed-refs`` uses."""
    return ",".join(sorted(short_ref(k, namespace) for k in keys))


@dataclass(frozen=True, slots=True)
class MissingItem:
    """A required uncovered reference a pod cannot start without: a whole object, or one key (``key``) of it."""

    source: SourceKey
    key: str | None = None

    def text(self, namespace: str) -> str:
        """``Kind/name`` or ``Kind/name:key`` (``Kind/namespace/name`` outside ``namespace``); keys cannot hold ':' or ','."""
        short = short_ref(self.source, namespace)
        return short if self.key is None else f"{short}:{self.key}"

    def __str__(self) -> str:
        where = f"{self.source.kind} {self.source.namespace}/{self.source.name}"
        return where if self.key is None else f"{where} key {self.key}"


def format_missing(items: frozenset[MissingItem] | set[MissingItem], namespace: str) -> str:
    """The ``wavegen.io/live-missing`` value: sorted, comma separated."""
    return ",".join(sorted(i.text(namespace) for i in items))


def parse_missing(value: str, namespace: str) -> frozenset[MissingItem]:
    """The inverse of :func:`format_missing`; unreadable entries are skipped."""
    out: set[MissingItem] = set()
    for entry in value.split(","):
        ref, sep, key = entry.strip().partition(":")
        for source in parse_ref_list(ref, namespace):
            out.add(MissingItem(source, key.strip() if sep and key.strip() else None))
    return frozenset(out)


@dataclass(frozen=True, slots=True)
class LiveDecision:
    """What the controller should do for one workload, given the live state.

    ``patch`` is a JSON merge patch body (without a resourceVersion
    precondition) or None when nothing is written.
    """

    action: LiveAction
    reason: str
    uncovered: frozenset[SourceKey] = frozenset()
    value: str | None = None
    refs: str = ""
    missing: tuple[MissingItem, ...] = ()
    patch: dict[str, Any] | None = field(default=None)


def _nest(path: tuple[str, ...], leaf: dict[str, Any]) -> dict[str, Any]:
    node = leaf
    for part in reversed(path):
        node = {part: node}
    return node


def _merge(into: dict[str, Any], other: Mapping[str, Any]) -> None:
    for key, value in other.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


def uncovered_references(
    body: Mapping[str, Any], options: Options
) -> tuple[str | None, list[tuple[tuple[str, ...], list[Reference]]]]:
    """(reason the workload is not handled or None, [(template path, references the bundle did not cover)]).

    A template carrying the profile's hash annotation was hashed offline: its
    references are covered except those listed in ``wavegen.io/unhashed-refs``.
    A template without it is not covered at all.
    """
    api_version, kind, namespace, _ = object_identity(body, options.namespace)
    group, _ = split_api_version(api_version)
    workload_kind = options.workloads.lookup(group, kind)
    if workload_kind is None:
        return f"{kind} is not a rolling workload kind", []
    annotations = metadata_annotations(body)
    status, reason = selection(annotations, options.opt_in, options.profile)
    if status is not None:
        return reason, []
    out: list[tuple[tuple[str, ...], list[Reference]]] = []
    for path in workload_kind.template_paths:
        template = at_path(body, path)
        if template is None:
            continue
        refs = template_references(template, path, annotations, namespace, options.profile)
        template_annotations = metadata_annotations(template)
        if options.hash_annotation in template_annotations:
            unhashed = parse_ref_list(template_annotations.get(UNHASHED_ANNOTATION, ""), namespace)
            refs = [r for r in refs if r.source in unhashed]
        out.append((path, refs))
    return None, out


def missing_items(refs: list[Reference], sources: Mapping[SourceKey, KeyDigests]) -> frozenset[MissingItem]:
    """Required objects that do not exist, and required keys (``absent_required_keys``, as offline) they lack."""
    out: set[MissingItem] = set()
    for ref in refs:
        source = sources.get(ref.source)
        if source is None:
            if not ref.optional:
                out.add(MissingItem(ref.source))
        elif not source.ignored:
            out.update(MissingItem(ref.source, k) for k in absent_required_keys(ref, source.digests))
    return frozenset(out)


def _recorded_hash(body: Mapping[str, Any], templates: list[tuple[tuple[str, ...], list[Reference]]]) -> str | None:
    record = metadata_annotations(body).get(LIVE_HASH_ANNOTATION)
    for path, _ in templates if record is None else ():
        template = at_path(body, path)
        record = metadata_annotations(template).get(LIVE_HASH_ANNOTATION) if template is not None else None
        if record is not None:
            break
    return record


def live_decision(body: Mapping[str, Any], sources: Mapping[SourceKey, KeyDigests], options: Options) -> LiveDecision:
    """Decide from state alone (never from events) whether to adopt, roll, hold, clear or leave a workload.

    - no uncovered reference: nothing to do (a stale record is cleared, without a rollout);
    - no record yet, or the uncovered references changed (the workload itself changed):
      adopt, recording the live hash and what required config is missing, on the workload's metadata only;
    - the record says required config was missing: the pods never started, so when nothing is missing any
      more they start with the current content: re-adopt without a rollout (hold while still missing);
    - record equals the live hash: nothing (restart-safe, zero writes at steady state);
    - a required uncovered reference or key is missing: hold (rolling would start pods that cannot start);
    - otherwise roll: write the live hash on every pod template and the record.
    """
    reason, templates = uncovered_references(body, options)
    _, _, namespace, _ = object_identity(body, options.namespace)
    meta = metadata_annotations(body)
    has_record = LIVE_HASH_ANNOTATION in meta or LIVE_REFS_ANNOTATION in meta or LIVE_MISSING_ANNOTATION in meta
    record_keys = (LIVE_HASH_ANNOTATION, LIVE_REFS_ANNOTATION, LIVE_MISSING_ANNOTATION)
    if reason is not None:
        return LiveDecision("skip", reason)
    refs = [r for _, template_refs in templates for r in template_refs]
    uncovered = frozenset(r.source for r in refs)
    if not uncovered:
        if has_record:
            clear_patch = {"metadata": {"annotations": dict.fromkeys(record_keys)}}
            return LiveDecision("clear", "the bundle covers every reference now", patch=clear_patch)
        return LiveDecision("none", "every reference is covered by the bundle")
    present = [r for r in refs if r.source in sources and not sources[r.source].ignored]
    missing_set = missing_items(refs, sources)
    missing = tuple(sorted(missing_set, key=lambda m: (m.source, m.key or "")))
    visible = merge_visible_keys(present)
    value = config_hash_from_digests(((sources[k], keys) for k, keys in visible.items()), options.hmac_key)
    refs_text = format_ref_list(uncovered, namespace)
    record = _recorded_hash(body, templates)
    record_refs = meta.get(LIVE_REFS_ANNOTATION)
    record_missing = parse_missing(meta.get(LIVE_MISSING_ANNOTATION, ""), namespace)
    adopt_patch = {
        "metadata": {
            "annotations": {
                LIVE_HASH_ANNOTATION: value,
                LIVE_REFS_ANNOTATION: refs_text,
                LIVE_MISSING_ANNOTATION: format_missing(missing_set, namespace) or None,
            }
        }
    }

    def decision(action: LiveAction, why: str, patch: dict[str, Any] | None = None) -> LiveDecision:
        return LiveDecision(action, why, uncovered, value, refs_text, missing, patch)

    if record is None:
        why = "first seen: recording the live hash without a rollout"
        return decision("adopt", why + (" (required config missing)" if missing else ""), adopt_patch)
    if record_refs is not None and record_refs != refs_text:
        return decision("adopt", "the workload's uncovered references changed: re-recording without a rollout", adopt_patch)
    if record_missing:
        if missing:
            return decision("hold", "required config missing since adoption: the pods cannot start yet")
        return decision(
            "adopt", "required config missing at adoption arrived: the pods start with it, re-recording without a rollout",
            adopt_patch,
        )  # fmt: skip
    if record == value:
        return decision("none", "live hash unchanged")
    if missing:
        return decision("hold", "a required reference is missing: waiting, not rolling")
    patch: dict[str, Any] = {"metadata": {"annotations": {LIVE_HASH_ANNOTATION: value, LIVE_REFS_ANNOTATION: refs_text}}}
    for path, _ in templates:
        _merge(patch, _nest(path, {"metadata": {"annotations": {LIVE_HASH_ANNOTATION: value}}}))
    return decision("roll", "live configuration changed", patch)
