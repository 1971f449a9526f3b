"""Helpers shared by the KRM, helm and adapter-parity integration tests: a wavegen on PATH, YAML parsing."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from tests.support.tools import FIXTURES, REPO_ROOT, run, tool

HASH = "wavegen.io/config-hash"
KUSTOMIZE_FIXTURES = FIXTURES / "kustomize"
CHARTS = FIXTURES / "charts"
HELM_PLUGIN = REPO_ROOT / "plugins" / "helm" / "wavegen"
KRM_ENTRY = REPO_ROOT / "plugins" / "kustomize" / "wavegen-krm"
# What orchestrators add to items and remove again; never wavegen's business.
ORCHESTRATOR_PREFIXES = ("config.kubernetes.io/", "internal.config.kubernetes.io/", "kustomize.config.k8s.io/")
ORCHESTRATOR_KEYS = ("config.k8s.io/id", "postrenderer.helm.sh/postrender-filename")


def wavegen_bin_dir(tmp_path: Path) -> Path:
    """A directory holding a ``wavegen`` command that runs this checkout with this interpreter."""
    bin_dir = tmp_path / "wavegen-bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "wavegen"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m wavegen "$@"\n')
    shim.chmod(0o755)
    return bin_dir


def env_with_wavegen(tmp_path: Path) -> dict[str, str]:
    """PATH with wavegen first, and helm's homes inside tmp_path."""
    return {
        "PATH": f"{wavegen_bin_dir(tmp_path)}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(REPO_ROOT),
        "HELM_CONFIG_HOME": str(tmp_path / "helm-config"),
        "HELM_CACHE_HOME": str(tmp_path / "helm-cache"),
        "HELM_DATA_HOME": str(tmp_path / "helm-data"),
    }


def wavegen(*args: str, input: str | None = None, check: bool = True) -> Any:
    return run([sys.executable, "-m", "wavegen", *args], input=input, check=check, env={"PYTHONPATH": str(REPO_ROOT)})


def docs_of(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if d]


def one(docs: Iterable[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = [d for d in docs if d.get("kind") == kind]
    assert len(found) == 1, [d["metadata"]["name"] for d in found]
    return found[0]


def template_hash(workload: dict[str, Any]) -> str | None:
    annotations = (workload["spec"]["template"].get("metadata") or {}).get("annotations") or {}
    value = annotations.get(HASH)
    return None if value is None else str(value)


def normalized(docs: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Objects sorted by identity, with the annotations each envelope adds (and removes again) dropped."""
    out = []
    for doc in docs:
        metadata = doc.get("metadata") or {}
        annotations = {
            k: v
            for k, v in (metadata.get("annotations") or {}).items()
            if not k.startswith(ORCHESTRATOR_PREFIXES) and k not in ORCHESTRATOR_KEYS
        }
        if annotations:
            metadata["annotations"] = annotations
        else:
            metadata.pop("annotations", None)
        out.append(doc)
    return sorted(out, key=lambda d: (d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"]))


def copy_kustomize_tree(tmp_path: Path) -> Path:
    """fixtures/kustomize and plugins/kustomize copied with the layout the fixtures' relative exec paths expect."""
    root = tmp_path / "repo"
    shutil.copytree(KUSTOMIZE_FIXTURES, root / "fixtures" / "kustomize")
    shutil.copytree(KRM_ENTRY.parent, root / "plugins" / "kustomize")
    return root / "fixtures" / "kustomize"


def kustomize_build(path: Path, tmp_path: Path, check: bool = True) -> Any:
    return run(
        [tool("kustomize"), "build", "--enable-alpha-plugins", "--enable-exec", str(path)],
        env=env_with_wavegen(tmp_path),
        check=check,
    )


def helm_template(helm: str, chart: str, tmp_path: Path, *extra: str) -> str:
    return str(run([tool(helm), "template", "rel", str(CHARTS / chart), *extra], env=env_with_wavegen(tmp_path)).stdout)


def install_helm4_plugin(tmp_path: Path) -> None:
    run([tool("helm4"), "plugin", "install", str(HELM_PLUGIN)], env=env_with_wavegen(tmp_path))
