"""Watch-mode decisions: which references the bundle left uncovered, their live hash, and whether to roll."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .hashing import config_hash
from .model import ConfigSource, Reference, SourceKey
from .plan import UNHASHED_ANNOTATION, Options, _at_path, _identity, _selection, _short_ref, _template_references
from .refs import merge_visible_keys
from .sources import metadata_annotations
from .workloads import split_api_version

# Written on the pod template only when the controller rolls the workload.
LIVE_HASH_ANNOTATION = "wavegen.io/live-hash"
# Written on the workload's own metadata (never the template, so writing it never rolls):
# the controller's record of the live hash and of the references it covers.
LIVE_REFS_ANNOTATION = "wavegen.io/live-refs"

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
    return ",".join(sorted(_short_ref(k, namespace) for k in keys))


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
    missing: tuple[SourceKey, ...] = ()
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
    api_version, kind, namespace, _ = _identity(body, options.namespace)
    group, _ = split_api_version(api_version)
    workload_kind = options.workloads.lookup(group, kind)
    if workload_kind is None:
        return f"{kind} is not a rolling workload kind", []
    annotations = metadata_annotations(body)
    status, reason = _selection(annotations, options)
    if status is not None:
        return reason, []
    out: list[tuple[tuple[str, ...], list[Reference]]] = []
    for path in workload_kind.template_paths:
        template = _at_path(body, path)
        if template is None:
            continue
        refs = _template_references(template, path, annotations, namespace, options)
        template_annotations = metadata_annotations(template)
        if options.hash_annotation in template_annotations:
            unhashed = parse_ref_list(template_annotations.get(UNHASHED_ANNOTATION, ""), namespace)
            refs = [r for r in refs if r.source in unhashed]
        out.append((path, refs))
    return None, out


def live_decision(body: Mapping[str, Any], sources: Mapping[SourceKey, ConfigSource], options: Options) -> LiveDecision:
    """Decide from state alone (never from events) whether to adopt, roll, hold, clear or leave a workload.

    - no uncovered reference: nothing to do (a stale record is cleared, without a rollout);
    - no record yet, or the uncovered references changed (the workload itself changed):
      adopt, recording the current live hash on the workload's metadata only (no rollout);
    - record equals the live hash: nothing (restart-safe, zero writes at steady state);
    - a required uncovered reference is missing: hold (rolling would start pods that cannot start);
    - otherwise roll: write the live hash on every pod template and the record.
    """
    reason, templates = uncovered_references(body, options)
    _, _, namespace, _ = _identity(body, options.namespace)
    meta = metadata_annotations(body)
    has_record = LIVE_HASH_ANNOTATION in meta or LIVE_REFS_ANNOTATION in meta
    clear_patch = {"metadata": {"annotations": {LIVE_HASH_ANNOTATION: None, LIVE_REFS_ANNOTATION: None}}}
    if reason is not None:
        return LiveDecision("skip", reason)
    refs = [r for _, template_refs in templates for r in template_refs]
    uncovered = frozenset(r.source for r in refs)
    if not uncovered:
        if has_record:
            return LiveDecision("clear", "the bundle covers every reference now", patch=clear_patch)
        return LiveDecision("none", "every reference is covered by the bundle")
    present = [r for r in refs if r.source in sources and not sources[r.source].ignored]
    missing = tuple(sorted({r.source for r in refs if r.source not in sources and not r.optional}))
    visible = merge_visible_keys(present)
    value = config_hash(((sources[k], keys) for k, keys in visible.items()), options.hmac_key)
    refs_text = format_ref_list(uncovered, namespace)
    record = meta.get(LIVE_HASH_ANNOTATION)
    if record is None:
        for path, _ in templates:
            template = _at_path(body, path)
            record = metadata_annotations(template).get(LIVE_HASH_ANNOTATION) if template is not None else None
            if record is not None:
                break
    record_refs = meta.get(LIVE_REFS_ANNOTATION)
    adopt_patch = {"metadata": {"annotations": {LIVE_HASH_ANNOTATION: value, LIVE_REFS_ANNOTATION: refs_text}}}
    if record is None:
        return LiveDecision(
            "adopt", "first seen: recording the live hash without a rollout", uncovered, value, refs_text, missing, adopt_patch
        )
    if record_refs is not None and record_refs != refs_text:
        return LiveDecision(
            "adopt",
            "the workload's uncovered references changed: re-recording without a rollout",
            uncovered,
            value,
            refs_text,
            missing,
            adopt_patch,
        )
    if record == value:
        return LiveDecision("none", "live hash unchanged", uncovered, value, refs_text, missing)
    if missing:
        return LiveDecision("hold", "a required reference is missing: waiting, not rolling", uncovered, value, refs_text, missing)
    patch: dict[str, Any] = {"metadata": {"annotations": {LIVE_HASH_ANNOTATION: value, LIVE_REFS_ANNOTATION: refs_text}}}
    for path, _ in templates:
        _merge(patch, _nest(path, {"metadata": {"annotations": {LIVE_HASH_ANNOTATION: value}}}))
    return LiveDecision("roll", "live configuration changed", uncovered, value, refs_text, missing, patch)
