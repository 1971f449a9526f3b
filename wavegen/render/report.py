"""Renders plans and findings for people and machines: text, JSON, Mermaid, CI annotations."""

# No `from __future__ import annotations`: a transform with findings imports this module after the
# preloaded ones, and would import __future__ for it alone (about 80 us; see cli/main.py).
import os
import sys
from _collections_abc import Iterable, Mapping, Sequence

from ..core.model import Finding, SourceKey
from ..core.plan import Plan, ResolvedReference, WorkloadPlan
from ..core.refs import merge_visible_keys
from ..errors import location_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_STATUS_TEXT = {
    "annotated": "annotated",
    "no-references": "not annotated",
    "ignored": "ignored",
    "not-opted-in": "not opted in",
    "not-rolling": "left alone",
    "no-template": "no pod template",
}


def _keys_text(keys: frozenset[str] | None) -> str:
    return "all keys" if keys is None else ", ".join(sorted(keys)) or "no keys"


def _state_text(resolved: ResolvedReference) -> str:
    if not resolved.missing_keys:
        return resolved.state
    missing = f"key missing ({', '.join(sorted(resolved.missing_keys))})"
    return missing if resolved.state == "key-missing" else f"{resolved.state}, {missing}"


def explain_text(plan: Plan) -> str:
    lines: list[str] = []
    for workload in plan.workloads:
        where = f"{workload.file}, document {workload.document}" if workload.file else f"document {workload.document}"
        status = _STATUS_TEXT[workload.status]
        reason = f": {workload.reason}" if workload.reason else ""
        lines.append(f"{workload.display} ({where}): {status}{reason}")
        for template in workload.templates:
            digest = template.config_hash
            path = ".".join(template.path) or "(pod)"
            if digest:
                state = "changes" if template.changed else "up to date"
                lines.append(f"  template {path}: hash {digest} ({state})")
            else:
                lines.append(f"  template {path}")
            if not template.references:
                lines.append("    no ConfigMap or Secret references")
            for resolved in template.references:
                ref = resolved.reference
                src = ref.source
                lines.append(
                    f"    {src.kind} {src.namespace}/{src.name} [{_keys_text(ref.keys)}] via {ref.field}: {_state_text(resolved)}"
                )
    if not plan.workloads:
        lines.append("no workloads")
    return "\n".join(lines) + "\n"


def workload_json(workload: WorkloadPlan) -> "dict[str, Any]":
    return {
        "apiVersion": workload.api_version,
        "kind": workload.kind,
        "namespace": workload.namespace,
        "name": workload.name,
        "status": workload.status,
        "reason": workload.reason,
        "changed": workload.changed,
        "file": workload.file,
        "document": workload.document,
        "line": workload.line,
        "templates": [
            {
                "path": ".".join(t.path),
                "hash": t.config_hash,
                "changed": t.changed,
                "annotations": dict(sorted(t.desired.items())),
                "references": [
                    {
                        "kind": r.reference.source.kind,
                        "namespace": r.reference.source.namespace,
                        "name": r.reference.source.name,
                        "keys": None if r.reference.keys is None else sorted(r.reference.keys),
                        "optional": r.reference.optional,
                        "field": r.reference.field,
                        "state": r.state,
                        "missingKeys": sorted(r.missing_keys),
                    }
                    for r in t.references
                ],
            }
            for t in workload.templates
        ],
    }


def finding_json(finding: Finding) -> "dict[str, Any]":
    return {
        "severity": finding.severity.value,
        "message": finding.message,
        "resource": finding.resource,
        "field": finding.field,
        "file": finding.file,
        "document": finding.document,
        "line": finding.line,
        "template": finding.template,
    }


def explain_json(plan: Plan) -> str:
    data = {
        "workloads": [workload_json(w) for w in plan.workloads],
        "findings": [finding_json(f) for f in plan.findings],
    }
    import json  # here: the transform path imports this module for its findings, never for JSON

    return json.dumps(data, indent=2, sort_keys=False) + "\n"


def _mermaid_id(prefix: str, text: str) -> str:
    import re  # only Mermaid graphs need it: a transform with findings loads this module too

    return prefix + re.sub(r"[^A-Za-z0-9_]", "_", text)


def mermaid_graph(plan: Plan, workloads: Sequence[WorkloadPlan] | None = None) -> str:
    """A Mermaid flowchart: ConfigMaps/Secrets on the left, the workloads that see them on the right."""
    chosen = plan.workloads if workloads is None else workloads
    lines = ["graph LR"]
    declared: set[str] = set()
    for workload in chosen:
        wid = _mermaid_id("w_", workload.display)
        if wid not in declared:
            declared.add(wid)
            lines.append(f'  {wid}["{workload.kind} {workload.namespace}/{workload.name}"]')
        resolved_refs = [r for t in workload.templates for r in t.references]
        states: dict[SourceKey, str] = {r.reference.source: r.state for r in resolved_refs}
        lacking: dict[SourceKey, set[str]] = {}
        for r in resolved_refs:
            lacking.setdefault(r.reference.source, set()).update(r.missing_keys)
        edges = merge_visible_keys([r.reference for r in resolved_refs])
        for key in sorted(edges):
            sid = _mermaid_id("s_", str(key))
            if sid not in declared:
                declared.add(sid)
                shape = (
                    f'[("{key.kind} {key.namespace}/{key.name}")]'
                    if key.kind == "Secret"
                    else f'["{key.kind} {key.namespace}/{key.name}"]'
                )
                lines.append(f"  {sid}{shape}")
            seen = edges[key]
            label = "all keys" if seen is None else ", ".join(sorted(seen))
            arrow = "-.->" if states[key] != "present" else "-->"
            if lacking[key]:
                # A crossed edge: the workload needs keys this object lacks; its pods cannot start.
                label += "; key missing: " + ", ".join(sorted(lacking[key]))
                arrow = "--x"
            lines.append(f'  {sid} {arrow}|"{label}"| {wid}')
    return "\n".join(lines) + "\n"


def finding_line(finding: Finding, github: bool = False) -> str:
    """One line per finding; GitHub workflow-command syntax when running in Actions."""
    if github:
        level = {"error": "error", "warning": "warning"}.get(finding.severity.value, "notice")
        params = []
        if finding.file:
            params.append(f"file={finding.file}")
        if finding.line:
            params.append(f"line={finding.line}")
        message = finding.message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
        return f"::{level} {','.join(params)}::{message}" if params else f"::{level}::{message}"
    prefix = location_text(finding.file, finding.document, finding.line, finding.template)
    return f"wavegen: {finding.severity.value}: {prefix + ': ' if prefix else ''}{finding.message}"


def in_github_actions(environ: Mapping[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    return env.get("GITHUB_ACTIONS") == "true"


def report_findings(findings: Iterable[Finding], *, side: str = "") -> None:
    """One line per finding on stderr (GitHub annotations inside Actions); ``side`` names the bundle in `plan`."""
    github = in_github_actions()
    suffix = f" ({side})" if side and not github else ""
    for finding in findings:
        print(f"{finding_line(finding, github)}{suffix}", file=sys.stderr)
