"""Every adapter calls the same core: the same objects through CLI, KRM, helm 3, helm 4 and the Action agree."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.integration.adapters_support import (
    docs_of,
    env_with_wavegen,
    helm_template,
    install_helm4_plugin,
    normalized,
    one,
    template_hash,
    wavegen,
    wavegen_bin_dir,
)
from tests.support.tools import REPO_ROOT, run, tool

pytestmark = pytest.mark.integration

NAMESPACE = "apps"


def via_cli(plain: str) -> list[dict[str, Any]]:
    return docs_of(wavegen("transform", "-n", NAMESPACE, "-", input=plain).stdout)


def via_krm(plain: str) -> list[dict[str, Any]]:
    resource_list = {
        "apiVersion": "config.kubernetes.io/v1",
        "kind": "ResourceList",
        "items": docs_of(plain),
        "functionConfig": {
            "apiVersion": "wavegen.io/v1alpha1",
            "kind": "ConfigHash",
            "metadata": {"name": "wavegen"},
            "spec": {"namespace": NAMESPACE},
        },
    }
    out = wavegen("krm", input=yaml.safe_dump(resource_list, sort_keys=False)).stdout
    result = yaml.safe_load(out)
    assert "results" not in result
    items: list[dict[str, Any]] = result["items"]
    return items


def via_kustomize(plain: str, tmp_path: Path) -> list[dict[str, Any]]:
    work = tmp_path / "kustomize"
    work.mkdir()
    (work / "rendered.yaml").write_text(plain)
    (work / "wavegen.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: wavegen\n  annotations:\n"
        "    config.kubernetes.io/function: |\n"
        f"      exec:\n        path: {REPO_ROOT / 'plugins' / 'kustomize' / 'wavegen-krm'}\n"
        f"data:\n  namespace: {NAMESPACE}\n"
    )
    (work / "kustomization.yaml").write_text("resources: [rendered.yaml]\ntransformers: [wavegen.yaml]\n")
    out = run(
        [tool("kustomize"), "build", "--enable-alpha-plugins", "--enable-exec", str(work)], env=env_with_wavegen(tmp_path)
    ).stdout
    return docs_of(out)


def via_helm3(chart: str, tmp_path: Path) -> list[dict[str, Any]]:
    return docs_of(
        helm_template(
            "helm3",
            chart,
            tmp_path,
            "--namespace",
            NAMESPACE,
            "--post-renderer",
            str(wavegen_bin_dir(tmp_path) / "wavegen"),
            "--post-renderer-args",
            "post-render",
            f"--post-renderer-args=--namespace={NAMESPACE}",
        )
    )


def via_helm4(chart: str, tmp_path: Path) -> list[dict[str, Any]]:
    install_helm4_plugin(tmp_path)
    return docs_of(
        helm_template(
            "helm4",
            chart,
            tmp_path,
            "--namespace",
            NAMESPACE,
            "--post-renderer",
            "wavegen",
            f"--post-renderer-args=--namespace={NAMESPACE}",
        )
    )


def via_action(plain: str, tmp_path: Path) -> list[dict[str, Any]]:
    """The command action.yml's "Run wavegen" step runs, with the environment it sets (act itself is tested elsewhere)."""
    work = tmp_path / "action"
    work.mkdir()
    manifest = work / "manifests.yaml"
    manifest.write_text(plain)
    outputs, summary = work / "github-output", work / "summary.md"
    outputs.touch()
    summary.touch()
    env = {
        "PYTHONPATH": str(REPO_ROOT),
        "WAVEGEN_INPUT_PATHS": str(manifest),
        "WAVEGEN_INPUT_MODE": "write",
        "WAVEGEN_INPUT_NAMESPACE": NAMESPACE,
        "WAVEGEN_INPUT_PROFILE": "",
        "WAVEGEN_INPUT_MISSING": "",
        "WAVEGEN_INPUT_ARGS": "",
        "WAVEGEN_INPUT_SUMMARY": "false",
        "WAVEGEN_INPUT_BASE": "",
        "GITHUB_OUTPUT": str(outputs),
        "GITHUB_STEP_SUMMARY": str(summary),
    }
    run([sys.executable, "-m", "wavegen.integrations.action"], cwd=work, env=env)
    return docs_of(manifest.read_text())


@pytest.mark.parametrize("chart", ["app", "hooks"])
def test_all_adapters_agree(chart: str, tmp_path: Path) -> None:
    plain = helm_template("helm3", chart, tmp_path, "--namespace", NAMESPACE)
    results = {
        "cli": via_cli(plain),
        "krm": via_krm(plain),
        "kustomize": via_kustomize(plain, tmp_path),
        "helm4": via_helm4(chart, tmp_path),
        # Helm 3 hands hooks to no post-renderer and appends them untouched; no rolling
        # workload of these charts reads a hook's ConfigMap, so the result is the same.
        "helm3": via_helm3(chart, tmp_path),
        "action": via_action(plain, tmp_path),
    }
    reference = normalized(results["cli"])
    assert template_hash(one(reference, "Deployment"))
    for name, docs in results.items():
        assert normalized(docs) == reference, f"{name} differs from the CLI:\n{json.dumps(normalized(docs), indent=1)[:3000]}"
