"""Missing keys and duplicate objects under the real kustomize (exec KRM function) and helm 3/4 (post-renderers)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from tests.integration.adapters_support import (
    docs_of,
    env_with_wavegen,
    install_helm4_plugin,
    kustomize_build,
    one,
    template_hash,
    wavegen,
    wavegen_bin_dir,
)
from tests.support.tools import run, tool

pytestmark = pytest.mark.integration

CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: app
data:
  a: "1"
"""

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: web:1
          env:
            - name: B
              valueFrom:
                configMapKeyRef: {name: app, key: b}
"""
KEY_MESSAGE = "Deployment/default/web needs key 'b' of ConfigMap default/app, which lacks it in the bundle"


def _kustomization(tmp_path: Path, missing: str, *resources: tuple[str, str]) -> Path:
    work = tmp_path / f"k-{missing}"
    work.mkdir()
    for name, text in resources:
        (work / name).write_text(text)
    (work / "wavegen.yaml").write_text(
        "apiVersion: wavegen.io/v1alpha1\nkind: ConfigHash\nmetadata:\n  name: wavegen\n  annotations:\n"
        f"    config.kubernetes.io/function: |\n      exec:\n        path: {wavegen_bin_dir(tmp_path) / 'wavegen'}\n"
        f"        args: [krm]\nspec:\n  missing: {missing}\n"
    )
    names = ", ".join(name for name, _ in resources)
    (work / "kustomization.yaml").write_text(f"resources: [{names}]\ntransformers: [wavegen.yaml]\n")
    return work


def test_kustomize_missing_key_warns_or_fails_the_build(tmp_path: Path) -> None:
    files = (("configmap.yaml", CONFIGMAP), ("deployment.yaml", DEPLOYMENT))
    ok = kustomize_build(_kustomization(tmp_path, "warn", *files), tmp_path)
    assert KEY_MESSAGE in ok.stderr
    digest = template_hash(one(docs_of(ok.stdout), "Deployment"))
    # The hash is what transform computes, missing key or not.
    check = wavegen("transform", "--check", "-", input=ok.stdout, check=False)
    assert check.returncode == 0 and digest, check.stderr
    failed = kustomize_build(_kustomization(tmp_path, "error", *files), tmp_path, check=False)
    assert failed.returncode != 0 and KEY_MESSAGE in failed.stderr
    relaxed = DEPLOYMENT.replace("key: b}", "key: b, optional: true}")
    relaxed_files = (("configmap.yaml", CONFIGMAP), ("deployment.yaml", relaxed))
    quiet = kustomize_build(_kustomization(tmp_path, "ignore", *relaxed_files), tmp_path)
    assert "needs key" not in quiet.stderr


def _chart(tmp_path: Path, *templates: tuple[str, str]) -> Path:
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: keys\nversion: 0.1.0\n")
    for name, text in templates:
        (chart / "templates" / name).write_text(text)
    return chart


def _helm(helm: str, chart: Path, tmp_path: Path, *wavegen_args: str) -> subprocess.CompletedProcess[str]:
    env = env_with_wavegen(tmp_path)
    if helm == "helm4":
        if not (tmp_path / "helm-data" / "plugins").is_dir():
            install_helm4_plugin(tmp_path)
        args = ["--post-renderer", "wavegen", *(f"--post-renderer-args={a}" for a in wavegen_args)]
    else:
        args = [
            "--post-renderer",
            str(wavegen_bin_dir(tmp_path) / "wavegen"),
            "--post-renderer-args",
            "post-render",
            *(f"--post-renderer-args={a}" for a in wavegen_args),
        ]
    return run([tool(helm), "template", "rel", str(chart), "--namespace", "default", *args], env=env, check=False)


@pytest.mark.parametrize("helm", ["helm3", "helm4"])
def test_helm_post_renderer_missing_key(helm: str, tmp_path: Path) -> None:
    chart = _chart(tmp_path, ("configmap.yaml", CONFIGMAP), ("deployment.yaml", DEPLOYMENT))
    warned = _helm(helm, chart, tmp_path, "--namespace=default")
    assert warned.returncode == 0, warned.stderr
    assert template_hash(one(docs_of(warned.stdout), "Deployment"))
    failed = _helm(helm, chart, tmp_path, "--namespace=default", "--missing=error")
    assert failed.returncode != 0
    # helm 4 reports a failing postrenderer/v1 plugin without its stderr (even under --debug: stderr="").
    assert KEY_MESSAGE in failed.stderr if helm == "helm3" else "wavegen" in failed.stderr


@pytest.mark.parametrize("helm", ["helm3", "helm4"])
def test_helm_post_renderer_duplicate_configmap_hashes_the_last(helm: str, tmp_path: Path) -> None:
    """Two templates render the same ConfigMap; the hash is that of the last one in helm's output, as kubectl applies it."""
    other = CONFIGMAP.replace('a: "1"', 'a: "2"\n  b: "3"')
    chart = _chart(tmp_path, ("a-configmap.yaml", CONFIGMAP), ("b-configmap.yaml", other), ("deployment.yaml", DEPLOYMENT))
    both = _helm(helm, chart, tmp_path, "--namespace=default")
    assert both.returncode == 0, both.stderr
    # helm shows a post-renderer's stderr only when it fails; the warning itself is tested through transform.
    configmaps = [d for d in docs_of(both.stdout) if d["kind"] == "ConfigMap"]
    assert len(configmaps) == 2 and configmaps[0]["data"] != configmaps[1]["data"]
    alone = wavegen("transform", "-", input=yaml.safe_dump(configmaps[-1]) + "---\n" + DEPLOYMENT)
    first = wavegen("transform", "-", input=yaml.safe_dump(configmaps[0]) + "---\n" + DEPLOYMENT)
    digest = template_hash(one(docs_of(both.stdout), "Deployment"))
    assert digest == template_hash(one(docs_of(alone.stdout), "Deployment"))
    assert digest != template_hash(one(docs_of(first.stdout), "Deployment"))
