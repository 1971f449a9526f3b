"""Renders a restart plan as text, JSON (docs/plan.schema.json) or Markdown with Mermaid; never Secret values."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any

from ..core.diff import Cause, KeyDelta, RestartPlan, SourceDelta, WorkloadChange, WorkloadRef, configmap_value_diff
from ..core.model import Finding, SourceKey
from .report import finding_json

if TYPE_CHECKING:
    from ..core.plan import Options
    from ..inputs.sides import Side

SCHEMA_VERSION = 1
MAX_GRAPH_WORKLOADS = 60  # GitHub refuses to render very large Mermaid graphs
MAX_LABEL_KEYS = 4

_STATE_WORDS = {
    "present": "in the bundle",
    "key-missing": "in the bundle without a key it needs",
    "ignored": "marked wavegen.io/ignore",
    "optional-absent": "optional and absent",
    "missing": "missing from the bundle",
    None: "not referenced",
}


@dataclass(frozen=True, slots=True)
class ValueDiff:
    """A ConfigMap's value changes (never built for Secrets)."""

    before: SourceKey | None
    after: SourceKey | None
    text: str


# --------------------------------------------------------------------------- words


def source_name(key: SourceKey, namespace: str | None = None) -> str:
    """``name`` when the source is in the workload's namespace, else ``namespace/name``."""
    return key.name if key.namespace == namespace else f"{key.namespace}/{key.name}"


def _code(text: str) -> str:
    # Kubernetes names and keys hold no backticks or pipes, but bundles are input: keep tables intact anyway.
    return "`" + text.replace("`", "'").replace("|", "\\|").replace("\n", " ") + "`"


def _plain(text: str) -> str:
    return text


def _keys_phrase(delta: KeyDelta, quote: Any = _plain) -> str:
    parts = []
    for verb, keys in (("changed", delta.changed), ("added", delta.added), ("removed", delta.removed)):
        if keys:
            parts.append(f"{verb} {', '.join(quote(k) for k in keys)}")
    return "; ".join(parts)


def _both_hashed(cause: Cause) -> bool:
    # present <-> key-missing: the missing keys are said on their own below.
    return {cause.state_before, cause.state_after} <= {"present", "key-missing"}


def cause_text(cause: Cause, namespace: str, markdown: bool = False) -> str:
    """One line saying what happened to one ConfigMap/Secret, from one workload's point of view."""
    quote = _code if markdown else _plain
    name = f"{cause.source.kind} {quote(source_name(cause.source, namespace))}"
    keys = _keys_phrase(cause.keys, quote)
    unseen = ", ".join(quote(k) for k in cause.unseen)
    if cause.change in ("renamed", "moved") and cause.previous is not None:
        what = "renamed" if cause.change == "renamed" else "moved to another namespace"
        old, new = quote(source_name(cause.previous, namespace)), quote(source_name(cause.source, namespace))
        text = f"{cause.source.kind} {old} → {new} ({what})"
        text += f": {keys}" if keys else ": same data"
    elif cause.change == "changed":
        text = f"{name}: {keys}" if keys else f"{name}: now {_STATE_WORDS[cause.state_after]}"
        if cause.state_before != cause.state_after and keys and not _both_hashed(cause):
            text += f" (was {_STATE_WORDS[cause.state_before]}, now {_STATE_WORDS[cause.state_after]})"
    elif cause.change == "unseen":
        text = f"{name}: changed keys it cannot see: {unseen}"
        unseen = ""
    elif cause.change == "ignored":
        text = f"{name} is marked wavegen.io/ignore; changed {unseen}"
        unseen = ""
    elif cause.change == "appeared":
        text = f"{name} appeared (was {_STATE_WORDS[cause.state_before]})"
        text += f": {keys}" if keys else ""
    elif cause.change == "vanished":
        text = f"{name} is gone (now {_STATE_WORDS[cause.state_after]})"
    elif cause.change == "referenced":
        text = f"now references {name}"
        if cause.state_after != "present":
            text += f" ({_STATE_WORDS[cause.state_after]})"
        elif keys:
            text += f": {keys}"
    else:
        text = f"no longer references {name}"
    if unseen:
        text += f" (also changed, not visible to it: {unseen})"
    if cause.missing_keys:
        text += f"; lacks required key(s) {', '.join(quote(k) for k in cause.missing_keys)}: its pods cannot start"
    return text


def _workload_note(change: WorkloadChange) -> list[str]:
    """Reasons a workload rolls that are not a ConfigMap/Secret."""
    notes = []
    if change.template_changed:
        notes.append("pod template changed (not config)")
    if not change.causes and not change.template_changed and change.status_before != change.status_after:
        notes.append(f"wavegen annotations change ({change.status_before} → {change.status_after})")
    elif not change.causes and not change.template_changed and change.rolls:
        notes.append("wavegen annotations change")
    return notes


def value_diffs(result: RestartPlan, base: Side, head: Side) -> list[ValueDiff]:
    """Unified diffs of changed ConfigMap values: every changed ConfigMap, and every renamed/moved pair."""
    pairs: list[tuple[SourceKey | None, SourceKey | None]] = []
    for delta in result.sources:
        if delta.key.kind == "ConfigMap" and delta.change == "changed":
            pairs.append((delta.key, delta.key))
    for change in (*result.rolling, *result.not_rolling, *result.moved):
        for cause in change.causes:
            if cause.source.kind == "ConfigMap" and cause.previous is not None:
                pairs.append((cause.previous, cause.source))
    out = []
    seen: set[tuple[SourceKey | None, SourceKey | None]] = set()
    for before, after in pairs:
        if (before, after) in seen:
            continue
        seen.add((before, after))
        old = base.plan.sources.get(before) if before else None
        new = head.plan.sources.get(after) if after else None
        text = configmap_value_diff(old, new)
        if text:
            out.append(ValueDiff(before, after, text))
    return out


# --------------------------------------------------------------------------- text


class _Paint:
    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, text: str, code: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.enabled else text


def render_text(result: RestartPlan, base: Side, head: Side, show_values: bool = False, colour: bool = False) -> str:
    paint = _Paint(colour)
    lines = [f"wavegen plan: {base.label} ({len(base.inputs)} file(s)) → {head.label} ({len(head.inputs)} file(s))", ""]

    def section(title: str, code: str, changes: Sequence[WorkloadChange]) -> None:
        if not changes:
            return
        lines.append(paint(f"{title} ({len(changes)}):", code))
        for change in changes:
            moved = f" (from namespace {change.previous_namespace})" if change.previous_namespace else ""
            lines.append(f"  {paint(change.display, '1')}{moved}")
            for note in _workload_note(change):
                lines.append(f"    {note}")
            for cause in change.causes:
                lines.append(f"    {cause_text(cause, change.namespace)}")
            if change.reason:
                lines.append(f"    {paint('does not roll: ' + change.reason, '2')}")
        lines.append("")

    def refs(title: str, code: str, items: Sequence[WorkloadRef]) -> None:
        if not items:
            return
        lines.append(paint(f"{title} ({len(items)}):", code))
        for item in items:
            uses = ", ".join(f"{s.kind} {source_name(s, item.namespace)}" for s in item.sources)
            lines.append(f"  {item.display}" + (f" (uses {uses})" if uses else ""))
        lines.append("")

    section("Will roll", "33", result.rolling)
    section("Will not roll although referenced config changed", "36", result.not_rolling)
    section("Moved to another namespace (recreated there)", "35", result.moved)
    refs("Added", "32", result.added)
    refs("Removed", "31", result.removed)
    if show_values:
        diffs = value_diffs(result, base, head)
        if diffs:
            lines.append(paint("ConfigMap value changes (Secret values are never shown):", "1"))
            for diff in diffs:
                for line in diff.text.splitlines():
                    code = (
                        "32"
                        if line.startswith("+") and not line.startswith("+++")
                        else ("31" if line.startswith("-") and not line.startswith("---") else "")
                    )
                    lines.append("  " + (paint(line, code) if code else line))
            lines.append("")
    lines.append(summary_line(result))
    return "\n".join(lines) + "\n"


def summary_line(result: RestartPlan) -> str:
    if result.empty:
        return "No workload will roll: no ConfigMap, Secret or workload changed."
    parts = [f"{len(result.rolling)} workload(s) will roll" if result.rolling else "no workload will roll"]
    for count, words in (
        (len(result.not_rolling), "will not roll although their config changed"),
        (len(result.moved), "moved namespace"),
        (len(result.added), "added"),
        (len(result.removed), "removed"),
    ):
        if count:
            parts.append(f"{count} {words}")
    changed_sources = len(result.sources)
    if changed_sources:
        parts.append(f"{changed_sources} ConfigMap/Secret change(s)")
    text = ", ".join(parts)
    return text[0].upper() + text[1:] + "."


# --------------------------------------------------------------------------- JSON


def _ref_json(key: SourceKey | None) -> dict[str, str] | None:
    return None if key is None else {"kind": key.kind, "namespace": key.namespace, "name": key.name}


def _delta_json(delta: KeyDelta) -> dict[str, list[str]]:
    return {"added": list(delta.added), "removed": list(delta.removed), "changed": list(delta.changed)}


def _cause_json(cause: Cause) -> dict[str, Any]:
    return {
        "change": cause.change,
        "kind": cause.source.kind,
        "namespace": cause.source.namespace,
        "name": cause.source.name,
        "previous": _ref_json(cause.previous),
        "keys": _delta_json(cause.keys),
        "unseenKeys": list(cause.unseen),
        "stateBefore": cause.state_before,
        "stateAfter": cause.state_after,
        "missingKeys": list(cause.missing_keys),
    }


def _change_json(change: WorkloadChange) -> dict[str, Any]:
    return {
        "apiVersion": change.api_version,
        "kind": change.kind,
        "namespace": change.namespace,
        "name": change.name,
        "previousNamespace": change.previous_namespace,
        "rolls": change.rolls,
        "templateChanged": change.template_changed,
        "statusBefore": change.status_before,
        "statusAfter": change.status_after,
        "reason": change.reason,
        "file": change.file,
        "line": change.line,
        "causes": [_cause_json(c) for c in change.causes],
    }


def _workload_ref_json(ref: WorkloadRef) -> dict[str, Any]:
    return {
        "apiVersion": ref.api_version,
        "kind": ref.kind,
        "namespace": ref.namespace,
        "name": ref.name,
        "file": ref.file,
        "line": ref.line,
        "sources": [_ref_json(s) for s in ref.sources],
    }


def _source_json(delta: SourceDelta) -> dict[str, Any]:
    return {
        "kind": delta.key.kind,
        "namespace": delta.key.namespace,
        "name": delta.key.name,
        "change": delta.change,
        "keys": _delta_json(delta.keys),
        "referencedBy": [{"kind": k, "namespace": ns, "name": n} for k, ns, n in delta.referenced_by],
    }


def plan_json(
    result: RestartPlan | None,
    base: Side,
    head: Side,
    options: Options,
    findings: Iterable[tuple[str, Finding]],
    show_values: bool = False,
) -> dict[str, Any]:
    """The JSON document described by docs/plan.schema.json (``result`` None when a side has errors)."""
    empty = RestartPlan()
    plan = result if result is not None else empty
    data: dict[str, Any] = {
        "schemaVersion": SCHEMA_VERSION,
        "profile": options.profile,
        "hashAnnotation": options.hash_annotation,
        "base": {"label": base.label, "files": [d.name for d in base.inputs]},
        "head": {"label": head.label, "files": [d.name for d in head.inputs]},
        "complete": result is not None,
        "wouldRoll": plan.would_roll,
        "summary": {
            "rolling": len(plan.rolling),
            "notRolling": len(plan.not_rolling),
            "moved": len(plan.moved),
            "added": len(plan.added),
            "removed": len(plan.removed),
            "sourcesChanged": len(plan.sources),
        },
        "rolling": [_change_json(c) for c in plan.rolling],
        "notRolling": [_change_json(c) for c in plan.not_rolling],
        "moved": [_change_json(c) for c in plan.moved],
        "added": [_workload_ref_json(w) for w in plan.added],
        "removed": [_workload_ref_json(w) for w in plan.removed],
        "sources": [_source_json(s) for s in plan.sources],
        "findings": [{**finding_json(f), "side": side} for side, f in findings],
    }
    if show_values and result is not None:
        data["valueDiffs"] = [
            {"before": _ref_json(d.before), "after": _ref_json(d.after), "diff": d.text} for d in value_diffs(result, base, head)
        ]
    return data


def render_json(
    result: RestartPlan | None,
    base: Side,
    head: Side,
    options: Options,
    findings: Iterable[tuple[str, Finding]],
    show_values: bool = False,
) -> str:
    return json.dumps(plan_json(result, base, head, options, findings, show_values), indent=2) + "\n"


# --------------------------------------------------------------------------- Mermaid and Markdown


def _mermaid_id(prefix: str, text: str) -> str:
    return prefix + re.sub(r"[^A-Za-z0-9_]", "_", text)


def _mermaid_text(text: str) -> str:
    # Inside a quoted Mermaid label only the double quote needs an entity.
    return text.replace('"', "#quot;")


def _few(keys: Sequence[str]) -> str:
    shown = ", ".join(keys[:MAX_LABEL_KEYS])
    return shown + (f" +{len(keys) - MAX_LABEL_KEYS} more" if len(keys) > MAX_LABEL_KEYS else "")


def _edge_label(cause: Cause) -> str:
    if cause.missing_keys:
        return f"{_base_edge_label(cause)}; key missing: {_few(list(cause.missing_keys))}"
    return _base_edge_label(cause)


def _base_edge_label(cause: Cause) -> str:
    if cause.change in ("unseen", "ignored"):
        return f"{cause.change}: {_few(cause.unseen)}"
    if cause.change in ("renamed", "moved", "appeared", "vanished", "referenced", "unreferenced"):
        keys = sorted(cause.keys.names)
        return cause.change + (f": {_few(keys)}" if keys else "")
    return _few(sorted(cause.keys.names)) or cause.change


def mermaid_restart_graph(result: RestartPlan) -> str:
    """The affected part of the dependency graph: changed ConfigMaps/Secrets → the workloads they reach."""
    lines = ["graph LR"]
    declared: set[str] = set()

    def source_node(key: SourceKey) -> str:
        sid = _mermaid_id("s_", str(key))
        if sid not in declared:
            declared.add(sid)
            label = _mermaid_text(f"{key.kind} {key.namespace}/{key.name}")
            # Secrets drawn as cylinders, as in `wavegen explain --format mermaid`.
            lines.append(f'  {sid}[("{label}")]' if key.kind == "Secret" else f'  {sid}["{label}"]')
        return sid

    groups = (("roll", result.rolling), ("hold", result.not_rolling), ("move", result.moved))
    shown = 0
    total = sum(len(changes) for _, changes in groups)
    for css, changes in groups:
        for change in changes:
            if shown >= MAX_GRAPH_WORKLOADS:
                break
            shown += 1
            wid = _mermaid_id("w_", change.display)
            title = f"{change.kind} {change.namespace}/{change.name}"
            if change.template_changed:
                title += " (pod template changed)"
            lines.append(f'  {wid}["{_mermaid_text(title)}"]:::{css}')
            for cause in change.causes:
                sid = source_node(cause.source)
                if cause.previous is not None:
                    pid = source_node(cause.previous)
                    lines.append(f'  {pid} -.->|"{cause.change}"| {sid}')
                arrow = "-->" if change.rolls and cause.visible else "-.->"
                if cause.change in ("vanished", "unreferenced"):
                    arrow = "-.-x"
                lines.append(f'  {sid} {arrow}|"{_mermaid_text(_edge_label(cause))}"| {wid}')
    if total > shown:
        lines.append(f'  more["… and {total - shown} more workload(s)"]')
    lines.append("  classDef roll fill:#fff3cd,stroke:#d39e00,color:#000")
    lines.append("  classDef hold fill:#e8f4fd,stroke:#5a9bd5,color:#000,stroke-dasharray:4 3")
    lines.append("  classDef move fill:#f3e8fd,stroke:#8e5ad5,color:#000")
    return "\n".join(lines) + "\n"


def _fence(text: str) -> str:
    """A code fence longer than any backtick run in the text, so values cannot close it."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _why(change: WorkloadChange) -> list[str]:
    return [*_workload_note(change), *(cause_text(c, change.namespace, markdown=True) for c in change.causes)]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(
    result: RestartPlan,
    base: Side,
    head: Side,
    options: Options,
    findings: Iterable[tuple[str, Finding]],
    show_values: bool = False,
) -> str:
    """Markdown for a GitHub step summary or a PR comment, from wavegen/render/templates/plan.md.j2."""
    import jinja2

    template_text = resources.files("wavegen").joinpath("render/templates/plan.md.j2").read_text(encoding="utf-8")
    env = jinja2.Environment(
        autoescape=False,  # Markdown, not HTML: every interpolated name goes through the code/cell filters
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["code"] = _code
    env.filters["cell"] = _cell

    def row(change: WorkloadChange) -> dict[str, Any]:
        return {
            "workload": f"{change.kind} {_code(change.namespace + '/' + change.name)}",
            "previous_namespace": change.previous_namespace,
            "why": _why(change),
            "reason": change.reason,
        }

    def ref_row(ref: WorkloadRef) -> dict[str, Any]:
        return {
            "workload": f"{ref.kind} {_code(ref.namespace + '/' + ref.name)}",
            "sources": [f"{s.kind} {_code(source_name(s, ref.namespace))}" for s in ref.sources],
        }

    diffs = value_diffs(result, base, head) if show_values else []
    context = {
        "base": base.label,
        "head": head.label,
        "profile": options.profile,
        "summary": summary_line(result),
        "would_roll": result.would_roll,
        "empty": result.empty,
        "rolling": [row(c) for c in result.rolling],
        "not_rolling": [row(c) for c in result.not_rolling],
        "moved": [row(c) for c in result.moved],
        "added": [ref_row(w) for w in result.added],
        "removed": [ref_row(w) for w in result.removed],
        "sources": [
            {
                "name": f"{s.key.kind} {_code(s.key.namespace + '/' + s.key.name)}",
                "change": s.change,
                "key_changes": _keys_phrase(s.keys, _code) or "—",
                "users": len(s.referenced_by),
            }
            for s in result.sources
        ],
        "graph": mermaid_restart_graph(result) if (result.rolling or result.not_rolling or result.moved) else "",
        "show_values": show_values,
        "diffs": [
            {
                "title": " → ".join(dict.fromkeys(_code(f"{k.namespace}/{k.name}") for k in (d.before, d.after) if k)),
                "fence": _fence(d.text),
                "text": d.text,
            }
            for d in diffs
        ],
        "findings": [
            {"side": side, "severity": f.severity.value, "where": f.file + (f":{f.line}" if f.line else ""), "message": f.message}
            for side, f in findings
        ],
    }
    return env.from_string(template_text).render(**context)
