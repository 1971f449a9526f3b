"""plugins/argocd/plugin.yaml follows Argo CD's documented ConfigManagementPlugin schema (transcribed below as data)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
PLUGIN = REPO_ROOT / "plugins" / "argocd" / "plugin.yaml"

# Argo CD's sidecar plugin config (operator manual "Config Management Plugins"
# and cmpserver/plugin/config.go), written as field -> type. A dict is a nested
# object, a one-element list is "list of that", a str names a scalar type.
COMMAND: dict[str, Any] = {"command": ["string"], "args": ["string"]}
STATIC_PARAMETER: dict[str, Any] = {
    "name": "string",
    "title": "string",
    "tooltip": "string",
    "required": "bool",
    "itemType": "string",
    "collectionType": "string",
    "string": "string",
    "array": ["string"],
    "map": {"*": "string"},
}
SCHEMA: dict[str, Any] = {
    "apiVersion": "string",
    "kind": "string",
    "metadata": {"name": "string", "namespace": "string", "labels": {"*": "string"}, "annotations": {"*": "string"}},
    "spec": {
        "version": "string",
        "init": COMMAND,
        "generate": COMMAND,
        "discover": {"fileName": "string", "find": {**COMMAND, "glob": "string"}},
        "allowConcurrency": "bool",
        "lockRepo": "bool",
        "parameters": {"static": [STATIC_PARAMETER], "dynamic": COMMAND},
        "preserveFileMode": "bool",
        "provideGitCreds": "bool",
    },
}
REQUIRED = [("apiVersion",), ("kind",), ("metadata", "name"), ("spec", "generate", "command")]
SCALARS: dict[str, type | tuple[type, ...]] = {"string": str, "bool": bool}


def check(value: Any, schema: Any, path: str = "") -> list[str]:
    """Every problem of ``value`` against ``schema``: unknown fields and wrong types."""
    if isinstance(schema, str):
        return [] if isinstance(value, SCALARS[schema]) else [f"{path}: expected {schema}, got {type(value).__name__}"]
    if isinstance(schema, list):
        if not isinstance(value, list):
            return [f"{path}: expected a list, got {type(value).__name__}"]
        return [p for i, item in enumerate(value) for p in check(item, schema[0], f"{path}[{i}]")]
    if not isinstance(value, dict):
        return [f"{path}: expected an object, got {type(value).__name__}"]
    problems: list[str] = []
    for key, item in value.items():
        where = f"{path}.{key}" if path else str(key)
        if key in schema:
            problems.extend(check(item, schema[key], where))
        elif "*" in schema:
            problems.extend(check(item, schema["*"], where))
        else:
            problems.append(f"{where}: unknown field")
    return problems


def validate(config: Any) -> list[str]:
    """Schema problems plus Argo CD's own load-time rules."""
    problems = check(config, SCHEMA)
    if problems:
        return problems
    for path in REQUIRED:
        node: Any = config
        for part in path:
            node = node.get(part) if isinstance(node, dict) else None
        if not node:
            problems.append(f"{'.'.join(path)}: required")
    if config.get("apiVersion") != "argoproj.io/v1alpha1":
        problems.append("apiVersion must be argoproj.io/v1alpha1")
    if config.get("kind") != "ConfigManagementPlugin":
        problems.append("kind must be ConfigManagementPlugin")
    discover = config.get("spec", {}).get("discover", {})
    find = discover.get("find", {})
    if not (discover.get("fileName") or find.get("glob") or find.get("command")):
        problems.append("spec.discover: one of fileName, find.glob or find.command is required")
    for parameter in config.get("spec", {}).get("parameters", {}).get("static", []):
        kind = parameter.get("collectionType") or "string"
        if kind not in ("string", "array", "map"):
            problems.append(f"parameter {parameter.get('name')}: collectionType {kind!r}")
        for other in {"string", "array", "map"} - {kind}:
            if other in parameter:
                problems.append(f"parameter {parameter.get('name')}: {other} default but collectionType {kind}")
    return problems


def load() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(PLUGIN.read_text())
    return data


def test_plugin_matches_documented_schema() -> None:
    assert validate(load()) == []


def test_plugin_name_and_version_give_the_documented_application_name() -> None:
    config = load()
    assert f"{config['metadata']['name']}-{config['spec']['version']}" == "wavegen-v1"
    assert config["spec"]["preserveFileMode"] is False
    generate = config["spec"]["generate"]
    assert generate["command"] == ["sh", "-c"] and len(generate["args"]) == 1
    script = generate["args"][0]
    assert 'wavegen transform - "$@"' in script
    assert "ARGOCD_APP_NAMESPACE" in script
    assert "eval" not in script


@pytest.mark.parametrize(
    ("mutate", "problem"),
    [
        (lambda c: c["spec"].update(generate={"command": "sh -c"}), "spec.generate.command: expected a list"),
        (lambda c: c["spec"].update(preserveFileMode="false"), "spec.preserveFileMode: expected bool"),
        (lambda c: c["spec"].update(discover={}), "one of fileName, find.glob or find.command"),
        (lambda c: c["spec"].update(generator={"command": ["x"]}), "spec.generator: unknown field"),
        (lambda c: c["spec"]["discover"]["find"].update(globs="*"), "spec.discover.find.globs: unknown field"),
        (lambda c: c.update(kind="Plugin"), "kind must be ConfigManagementPlugin"),
        (lambda c: c["spec"]["parameters"]["static"].append({"name": "x", "array": ["a"]}), "array default"),
    ],
)
def test_validator_catches_mistakes(mutate: Any, problem: str) -> None:
    config = load()
    mutate(config)
    problems = validate(config)
    assert any(problem in p for p in problems), problems


def test_sidecar_patch_runs_cmp_server_as_argocd_user() -> None:
    patch = yaml.safe_load((PLUGIN.parent / "sidecar-patch.yaml").read_text())
    assert patch["kind"] == "Deployment" and patch["metadata"]["name"] == "argocd-repo-server"
    (sidecar,) = patch["spec"]["template"]["spec"]["containers"]
    assert sidecar["command"] == ["/var/run/argocd/argocd-cmp-server"]
    assert sidecar["securityContext"]["runAsUser"] == 999
    mounts = {m["mountPath"]: m for m in sidecar["volumeMounts"]}
    assert mounts["/home/argocd/cmp-server/config/plugin.yaml"]["subPath"] == "plugin.yaml"
    assert {"/var/run/argocd", "/home/argocd/cmp-server/plugins", "/tmp"} <= set(mounts)
    assert ":latest" not in (PLUGIN.parent / "sidecar-patch.yaml").read_text()
