"""Compares the plans of two bundles: which workloads roll, which do not although their config changed, and why."""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .model import ConfigSource, SourceKey, TypedScalar
from .plan import KubeObject, Plan, Profile, RefState, WorkloadPlan

WorkloadKey = tuple[str, str, str]  # (kind, namespace, name): a workload's identity across bundles


class _WorkloadIdentity:
    """``key`` and ``display`` for the workload records below, which all carry kind, namespace and name."""

    __slots__ = ()
    kind: str
    namespace: str
    name: str

    @property
    def key(self) -> WorkloadKey:
        return (self.kind, self.namespace, self.name)

    @property
    def display(self) -> str:
        return f"{self.kind}/{self.namespace}/{self.name}"


CauseKind = Literal[
    "changed",  # same ConfigMap/Secret, keys the workload sees were added, removed or changed
    "unseen",  # same ConfigMap/Secret, only keys the workload cannot see changed
    "ignored",  # the ConfigMap/Secret changed but carries wavegen.io/ignore
    "renamed",  # the reference now names another object of the same kind and namespace
    "moved",  # the reference now names an object of the same kind and name in another namespace
    "appeared",  # a referenced object that was absent (optional or missing) is now in the bundle
    "vanished",  # a referenced object that was in the bundle is now absent
    "referenced",  # a new reference
    "unreferenced",  # a reference that is gone
]
SourceChangeKind = Literal["added", "removed", "changed"]

# States in which the object is in the bundle and its data is known.
_PRESENT: frozenset[RefState] = frozenset(("present", "key-missing", "ignored"))
# When a source is referenced several times, the most telling state wins.
_STATE_RANK: Mapping[RefState, int] = {"key-missing": 4, "present": 3, "ignored": 2, "optional-absent": 1, "missing": 0}


@dataclass(frozen=True, slots=True)
class KeyDelta:
    """Key names added, removed and changed (stored bytes differ); never values."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed)

    @property
    def names(self) -> frozenset[str]:
        return frozenset((*self.added, *self.removed, *self.changed))


@dataclass(frozen=True, slots=True)
class Cause:
    """Why one ConfigMap/Secret matters to one workload between base and head.

    ``source`` is the head-side object (the base-side one for ``vanished`` and
    ``unreferenced``); ``previous`` the base-side object of a rename or move.
    ``keys`` is what the workload sees change; ``unseen`` the keys that changed
    in the object but that the workload's references cannot see;
    ``missing_keys`` the keys its non-optional references need that the
    head-side object lacks (its pods cannot start).
    """

    change: CauseKind
    source: SourceKey
    previous: SourceKey | None
    keys: KeyDelta
    unseen: tuple[str, ...]
    state_before: RefState | None
    state_after: RefState | None
    missing_keys: tuple[str, ...] = ()

    @property
    def visible(self) -> bool:
        """Whether this cause changes what the workload can see (and so, normally, its hash)."""
        return self.change not in ("unseen", "ignored")


@dataclass(frozen=True, slots=True)
class WorkloadChange(_WorkloadIdentity):
    """A workload present on both sides (possibly in another namespace) and what changed for it."""

    api_version: str
    kind: str
    namespace: str
    name: str
    rolls: bool
    template_changed: bool
    causes: tuple[Cause, ...]
    reason: str = ""  # why it does not roll although config it references changed
    previous_namespace: str | None = None
    status_before: str = ""  # WorkloadPlan.status on each side, e.g. "not-opted-in" -> "annotated"
    status_after: str = ""
    file: str = ""
    line: int = 0


@dataclass(frozen=True, slots=True)
class WorkloadRef(_WorkloadIdentity):
    """A workload present on one side only, with the ConfigMaps/Secrets it references there."""

    api_version: str
    kind: str
    namespace: str
    name: str
    sources: tuple[SourceKey, ...]
    file: str = ""
    line: int = 0


@dataclass(frozen=True, slots=True)
class SourceDelta:
    """A ConfigMap/Secret added to, removed from, or changed in the bundle (key names only)."""

    key: SourceKey
    change: SourceChangeKind
    keys: KeyDelta
    referenced_by: tuple[WorkloadKey, ...]


@dataclass(slots=True)
class RestartPlan:
    """The outcome of comparing two bundles' plans."""

    rolling: list[WorkloadChange] = field(default_factory=list)
    not_rolling: list[WorkloadChange] = field(default_factory=list)
    moved: list[WorkloadChange] = field(default_factory=list)
    added: list[WorkloadRef] = field(default_factory=list)
    removed: list[WorkloadRef] = field(default_factory=list)
    sources: list[SourceDelta] = field(default_factory=list)

    @property
    def would_roll(self) -> bool:
        """True when a workload that exists on both sides would restart its pods."""
        return bool(self.rolling)

    @property
    def empty(self) -> bool:
        return not (self.rolling or self.not_rolling or self.moved or self.added or self.removed or self.sources)


@dataclass(frozen=True, slots=True)
class _View:
    """How a workload sees one source: best reference state, visible keys (None = all), fields naming it,
    and the required keys the source lacks."""

    state: RefState
    keys: frozenset[str] | None
    fields: frozenset[str]
    missing: frozenset[str] = frozenset()


def _stored(source: ConfigSource | None) -> dict[str, bytes]:
    return source.visible_items(None) if source is not None else {}


def key_delta(before: Mapping[str, bytes], after: Mapping[str, bytes]) -> KeyDelta:
    """Keys added, removed, and changed between two key -> stored-bytes mappings."""
    return KeyDelta(
        added=tuple(sorted(set(after) - set(before))),
        removed=tuple(sorted(set(before) - set(after))),
        changed=tuple(sorted(k for k in set(before) & set(after) if before[k] != after[k])),
    )


def _views(workload: WorkloadPlan) -> dict[SourceKey, _View]:
    """Every source a workload references, over all its templates, merged per source."""
    views: dict[SourceKey, _View] = {}
    for template in workload.templates:
        for resolved in template.references:
            ref = resolved.reference
            old = views.get(ref.source)
            if old is None:
                views[ref.source] = _View(resolved.state, ref.keys, frozenset((ref.field,)), resolved.missing_keys)
                continue
            state = resolved.state if _STATE_RANK[resolved.state] > _STATE_RANK[old.state] else old.state
            keys = None if old.keys is None or ref.keys is None else old.keys | ref.keys
            views[ref.source] = _View(state, keys, old.fields | {ref.field}, old.missing | resolved.missing_keys)
    return views


def _effective_annotations(workload: WorkloadPlan) -> dict[tuple[str, ...], dict[str, str]]:
    """The owned annotations each pod template carries once the plan is applied."""
    out: dict[tuple[str, ...], dict[str, str]] = {}
    for template in workload.templates:
        merged: dict[str, str | None] = {**template.current, **template.desired}
        out[template.path] = {k: v for k, v in merged.items() if v is not None}
    return out


def _seen(view: _View | None, source: ConfigSource | None, honour_ignore: bool) -> dict[str, bytes]:
    if view is None or view.state not in _PRESENT or (honour_ignore and view.state == "ignored"):
        return {}
    items = _stored(source)
    return items if view.keys is None else {k: v for k, v in items.items() if k in view.keys}


def _compare(
    change: CauseKind | None,
    before_key: SourceKey | None,
    after_key: SourceKey | None,
    before: _View | None,
    after: _View | None,
    base: Plan,
    head: Plan,
    honour_ignore: bool,
) -> Cause | None:
    """One cause for a pair of references (either side may be absent), or None when nothing changed."""
    base_source = base.sources.get(before_key) if before_key else None
    head_source = head.sources.get(after_key) if after_key else None
    seen = key_delta(_seen(before, base_source, honour_ignore), _seen(after, head_source, honour_ignore))
    whole = key_delta(_stored(base_source), _stored(head_source))
    state_before = before.state if before else None
    state_after = after.state if after else None
    unseen: tuple[str, ...] = ()
    if before_key == after_key and before is not None and after is not None:
        if honour_ignore and state_before == state_after == "ignored":
            unseen = tuple(sorted(whole.names))
        elif before.keys is not None and after.keys is not None:
            unseen = tuple(sorted(whole.names - before.keys - after.keys))
    missing = tuple(sorted(after.missing)) if after is not None else ()
    missing_changed = before is not None and after is not None and before.missing != after.missing
    if change is None:
        if state_before not in _PRESENT and state_after in _PRESENT:
            change = "appeared"
        elif state_before in _PRESENT and state_after not in _PRESENT:
            change = "vanished"
        elif honour_ignore and state_before == state_after == "ignored":
            if not unseen:
                return None
            change = "ignored"
        elif seen or state_before != state_after or missing_changed:
            # Also a wavegen.io/ignore toggled on or off: what the workload sees is all added or all removed.
            change = "changed"
        elif unseen:
            change = "unseen"
        else:
            return None
    source = after_key if after_key is not None and change not in ("vanished", "unreferenced") else before_key
    assert source is not None
    previous = before_key if change in ("renamed", "moved") else None
    return Cause(change, source, previous, seen, unseen, state_before, state_after, missing)


def _pair_references(
    before: Mapping[SourceKey, _View], after: Mapping[SourceKey, _View]
) -> list[tuple[CauseKind | None, SourceKey | None, SourceKey | None]]:
    """Pairs base-side and head-side references: same object, a move, a rename, or unmatched."""
    pairs: list[tuple[CauseKind | None, SourceKey | None, SourceKey | None]] = [
        (None, k, k) for k in sorted(set(before) & set(after))
    ]
    gone = sorted(set(before) - set(after))
    new = sorted(set(after) - set(before))

    def take(match: str) -> None:
        for old in list(gone):
            candidates = [n for n in new if n.kind == old.kind and _matches(match, old, n, before[old], after[n])]
            if len(candidates) == 1:
                pairs.append(("moved" if old.namespace != candidates[0].namespace else "renamed", old, candidates[0]))
                gone.remove(old)
                new.remove(candidates[0])

    take("namespace")  # same name, other namespace
    take("field")  # the same place in the pod spec now names another object
    if len(gone) == 1 and len(new) == 1 and gone[0].kind == new[0].kind and gone[0].namespace == new[0].namespace:
        take("only")
    pairs.extend(("unreferenced", k, None) for k in gone)
    pairs.extend(("referenced", None, k) for k in new)
    return pairs


def _matches(how: str, old: SourceKey, new: SourceKey, before: _View, after: _View) -> bool:
    if how == "namespace":
        return old.name == new.name and old.namespace != new.namespace
    if how == "field":
        return old.namespace == new.namespace and bool(before.fields & after.fields)
    return True


def _not_rolling_reason(workload: WorkloadPlan, causes: Sequence[Cause]) -> str:
    if workload.status != "annotated" and workload.reason:
        return workload.reason
    if workload.status == "no-references":
        return "it references no ConfigMap or Secret in the bundle"
    reasons = []
    if any(c.change == "unseen" for c in causes):
        reasons.append("the changed keys are not visible to it (items or env key references narrow what it sees)")
    if any(c.change == "ignored" for c in causes):
        reasons.append("the changed object is marked wavegen.io/ignore")
    return "; ".join(reasons) or "its config hash does not change"


def _referenced_sources(workload: WorkloadPlan) -> tuple[SourceKey, ...]:
    return tuple(sorted(_views(workload)))


def _by_key(workloads: Iterable[WorkloadPlan]) -> dict[WorkloadKey, WorkloadPlan]:
    out: dict[WorkloadKey, WorkloadPlan] = {}
    for workload in workloads:
        # A duplicate is a warning the plan already reports; the last one stands, as kubectl apply leaves it.
        out[(workload.kind, workload.namespace, workload.name)] = workload
    return out


def _workload_change(
    base_w: WorkloadPlan,
    head_w: WorkloadPlan,
    base: Plan,
    head: Plan,
    template_changed: bool,
    honour_ignore: bool,
) -> WorkloadChange:
    before, after = _views(base_w), _views(head_w)
    # Jobs, bare Pods and ReplicationControllers do not roll whatever changes in their template.
    template_changed = template_changed and head_w.status != "not-rolling"
    causes = []
    for change, old, new in _pair_references(before, after):
        cause = _compare(
            change, old, new, before.get(old) if old else None, after.get(new) if new else None, base, head, honour_ignore
        )
        if cause is not None:
            causes.append(cause)
    causes.sort(key=lambda c: (c.source, c.previous or c.source))
    rolls = _effective_annotations(base_w) != _effective_annotations(head_w) or template_changed
    reason = "" if rolls or not causes else _not_rolling_reason(head_w, causes)
    moved_from = base_w.namespace if base_w.namespace != head_w.namespace else None
    return WorkloadChange(
        head_w.api_version,
        head_w.kind,
        head_w.namespace,
        head_w.name,
        rolls,
        template_changed,
        tuple(causes),
        reason,
        moved_from,
        base_w.status,
        head_w.status,
        head_w.file,
        head_w.line,
    )


def restart_plan(
    base: Plan,
    head: Plan,
    *,
    profile: Profile = "wavegen",
    base_templates: Mapping[WorkloadKey, str] | None = None,
    head_templates: Mapping[WorkloadKey, str] | None = None,
) -> RestartPlan:
    """Compare two plans of the same profile.

    A workload rolls when the wavegen-owned annotations its pod templates end
    up with differ between base and head, or, when template fingerprints are
    given (see :func:`template_fingerprints`), when its pod template changed
    otherwise. ``profile`` says whether ``wavegen.io/ignore`` is honoured
    (``wave`` knows nothing of it).
    """
    honour_ignore = profile == "wavegen"
    base_by, head_by = _by_key(base.workloads), _by_key(head.workloads)
    result = RestartPlan()

    only_base = sorted(set(base_by) - set(head_by))
    only_head = sorted(set(head_by) - set(base_by))
    moves: list[tuple[WorkloadKey, WorkloadKey]] = []
    for old in list(only_base):
        # A namespace move: the same kind and name disappears from one namespace and appears in exactly one other.
        candidates = [k for k in only_head if k[0] == old[0] and k[2] == old[2]]
        rivals = [k for k in only_base if k[0] == old[0] and k[2] == old[2]]
        if len(candidates) == 1 and len(rivals) == 1:
            moves.append((old, candidates[0]))
            only_base.remove(old)
            only_head.remove(candidates[0])

    def fingerprint_changed(old: WorkloadKey, new: WorkloadKey) -> bool:
        if base_templates is None or head_templates is None:
            return False
        return base_templates.get(old) != head_templates.get(new)

    for key in sorted(set(base_by) & set(head_by)):
        change = _workload_change(base_by[key], head_by[key], base, head, fingerprint_changed(key, key), honour_ignore)
        if change.rolls:
            result.rolling.append(change)
        elif change.causes:
            result.not_rolling.append(change)
    for old, new in moves:
        moved = _workload_change(base_by[old], head_by[new], base, head, fingerprint_changed(old, new), honour_ignore)
        result.moved.append(moved)
    for key in only_head:
        w = head_by[key]
        result.added.append(WorkloadRef(w.api_version, w.kind, w.namespace, w.name, _referenced_sources(w), w.file, w.line))
    for key in only_base:
        w = base_by[key]
        result.removed.append(WorkloadRef(w.api_version, w.kind, w.namespace, w.name, _referenced_sources(w), w.file, w.line))

    users: dict[SourceKey, set[WorkloadKey]] = {}
    for plan in (base, head):
        for workload in plan.workloads:
            for source in _views(workload):
                users.setdefault(source, set()).add((workload.kind, workload.namespace, workload.name))
    for source_key in sorted(set(base.sources) | set(head.sources)):
        old_source, new_source = base.sources.get(source_key), head.sources.get(source_key)
        kind: SourceChangeKind = "added" if old_source is None else "removed" if new_source is None else "changed"
        delta = key_delta(_stored(old_source), _stored(new_source))
        if kind == "changed" and not delta:
            continue
        result.sources.append(SourceDelta(source_key, kind, delta, tuple(sorted(users.get(source_key, ())))))
    return result


def _plain(value: Any) -> Any:
    if isinstance(value, TypedScalar):
        return {"!tag": value.tag, "text": value.text}
    return repr(value)


_FIELD_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def _blank_reference_names(template: Any, field_path: str, prefix: tuple[str, ...]) -> None:
    """Blank the name at a reference's field, so a renamed ConfigMap/Secret is a config change, not a template one."""
    parts: list[str | int] = [m.group(1) if m.group(1) is not None else int(m.group(2)) for m in _FIELD_PART.finditer(field_path)]
    if tuple(parts[: len(prefix)]) != prefix:
        return  # e.g. extra references declared in the workload's annotations, outside the template
    node = template
    for part in parts[len(prefix) :]:
        if isinstance(part, int):
            node = node[part] if isinstance(node, list) and part < len(node) else None
        else:
            node = node.get(part) if isinstance(node, dict) else None
    if isinstance(node, dict):
        for name_field in ("name", "secretName"):
            if name_field in node:
                node[name_field] = ""


def template_fingerprints(objects: Sequence[KubeObject], plan: Plan, owned: Sequence[str]) -> dict[WorkloadKey, str]:
    """A digest of each workload's pod templates, to notice changes that are not config.

    wavegen's own annotations and the names at ConfigMap/Secret references
    are left out (those are config changes, explained by causes). Only
    digests leave this function: templates may hold inline values that must
    not be printed.
    """
    bodies = {obj.uid: obj.body for obj in objects}
    out: dict[WorkloadKey, str] = {}
    for workload in plan.workloads:
        body = bodies.get(workload.uid)
        if body is None:
            continue
        parts = []
        for template in workload.templates:
            node: Any = body
            for part in template.path:
                node = node.get(part) if isinstance(node, Mapping) else None
            if not isinstance(node, Mapping):
                continue
            # A plain-JSON deep copy that can be edited without touching the parsed input.
            copy = json.loads(json.dumps(node, default=_plain))
            annotations = copy.get("metadata", {}).get("annotations") if isinstance(copy.get("metadata"), dict) else None
            if isinstance(annotations, dict):
                for key in owned:
                    annotations.pop(key, None)
                if not annotations:
                    copy["metadata"].pop("annotations")
            for resolved in template.references:
                _blank_reference_names(copy, resolved.reference.field, template.path)
            parts.append([list(template.path), copy])
        canonical = json.dumps(parts, sort_keys=True, separators=(",", ":"))
        # The last of duplicate workloads stands, as in _by_key.
        out[(workload.kind, workload.namespace, workload.name)] = hashlib.sha256(canonical.encode()).hexdigest()
    return out


def configmap_value_diff(before: ConfigSource | None, after: ConfigSource | None, context: int = 3) -> str:
    """A unified diff of a ConfigMap's changed values, key by key; refuses Secrets outright.

    Binary values (``binaryData`` or bytes that are not UTF-8) are summarised
    by size, not shown.
    """
    for source in (before, after):
        if source is not None and source.key.kind != "ConfigMap":
            raise ValueError("value diffs are only ever made for ConfigMaps")
    old, new = _stored(before), _stored(after)
    old_name = str(before.key) if before else "/dev/null"
    new_name = str(after.key) if after else "/dev/null"
    delta = key_delta(old, new)
    chunks: list[str] = []
    for key in sorted(delta.names):
        a, b = old.get(key), new.get(key)
        a_text, b_text = _text(a, before, key), _text(b, after, key)
        if a_text is None or b_text is None:
            sizes = " → ".join("absent" if v is None else f"{len(v)} bytes" for v in (a, b))
            chunks.append(f"binary value of key {key!r} changed ({sizes})\n")
            continue
        # Values are compared line by line as if each ended with a newline; a change in the final newline alone is said in words.
        old_lines = (a_text if a_text.endswith("\n") or not a_text else a_text + "\n").splitlines(keepends=True)
        new_lines = (b_text if b_text.endswith("\n") or not b_text else b_text + "\n").splitlines(keepends=True)
        if old_lines == new_lines:
            chunks.append(f"value of key {key!r} changed only in its final newline\n")
            continue
        chunks.append(
            "".join(
                difflib.unified_diff(
                    old_lines,
                    new_lines,
                    f"{old_name}:{key}" if a is not None else "/dev/null",
                    f"{new_name}:{key}" if b is not None else "/dev/null",
                    n=context,
                )
            )
        )
    return "".join(chunks)


def _text(value: bytes | None, source: ConfigSource | None, key: str) -> str | None:
    if value is None:
        return ""
    if source is not None and key in source.binary_data:
        return None
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return None
