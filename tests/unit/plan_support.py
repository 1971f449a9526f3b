"""Helpers shared by the `wavegen plan` tests: a compact, reviewable projection of the JSON output."""

from __future__ import annotations

from typing import Any


def _source(ref: dict[str, Any] | None) -> str | None:
    return None if ref is None else f"{ref['kind']}/{ref['namespace']}/{ref['name']}"


def _cause(cause: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"change": cause["change"], "source": _source(cause)}
    if cause["previous"] is not None:
        out["previous"] = _source(cause["previous"])
    keys = {k: v for k, v in cause["keys"].items() if v}
    if keys:
        out["keys"] = keys
    if cause["unseenKeys"]:
        out["unseenKeys"] = cause["unseenKeys"]
    if cause.get("missingKeys"):
        out["missingKeys"] = cause["missingKeys"]
    return out


def _change(change: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"causes": [_cause(c) for c in change["causes"]]}
    if change["templateChanged"]:
        out["templateChanged"] = True
    if change["previousNamespace"] is not None:
        out["previousNamespace"] = change["previousNamespace"]
    return out


def project(data: dict[str, Any]) -> dict[str, Any]:
    """What expected.json pins down: workloads by identity with their causes, and sources by change."""

    def ident(w: dict[str, Any]) -> str:
        return f"{w['kind']}/{w['namespace']}/{w['name']}"

    return {
        "wouldRoll": data["wouldRoll"],
        "rolling": {ident(c): _change(c) for c in data["rolling"]},
        "notRolling": {ident(c): _change(c) for c in data["notRolling"]},
        "moved": {ident(c): _change(c) for c in data["moved"]},
        "added": sorted(ident(w) for w in data["added"]),
        "removed": sorted(ident(w) for w in data["removed"]),
        "sources": {_source(s): s["change"] for s in data["sources"]},
        # Pinned only where there are any, so older cases need no edit.
        **(
            {"findings": [f"{f['side']} {f['severity']} {f['line']}: {f['message']}" for f in data["findings"]]}
            if data["findings"]
            else {}
        ),
    }
