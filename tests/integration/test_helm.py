"""wavegen as a post-renderer of the real Helm 3 (executable) and Helm 4 (postrenderer/v1 plugin)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

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
from tests.support.tools import run, tool

pytestmark = pytest.mark.integration

NAMESPACE = "apps"


def helm3_post_rendered(chart: str, tmp_path: Path, *extra: str) -> str:
    return helm_template(
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
        *extra,
    )


def helm4_post_rendered(chart: str, tmp_path: Path, *extra: str) -> str:
    install_helm4_plugin(tmp_path)
    return helm_template(
        "helm4",
        chart,
        tmp_path,
        "--namespace",
        NAMESPACE,
        "--post-renderer",
        "wavegen",
        f"--post-renderer-args=--namespace={NAMESPACE}",
        *extra,
    )


@pytest.mark.parametrize("chart", ["app", "hooks"])
def test_helm3_output_is_transform_of_plain_output(chart: str, tmp_path: Path) -> None:
    plain = helm_template("helm3", chart, tmp_path, "--namespace", NAMESPACE)
    rendered = helm3_post_rendered(chart, tmp_path)
    expected = wavegen("transform", "-n", NAMESPACE, "-", input=plain).stdout
    assert rendered == expected  # byte for byte: helm 3 passes our stream through
    docs = docs_of(rendered)
    assert template_hash(one(docs, "Deployment"))
    if chart == "hooks":
        job = one(docs, "Job")  # Helm 3 does not post-render hooks, but keeps them
        assert job["metadata"]["annotations"]["helm.sh/hook"] == "pre-install"


@pytest.mark.parametrize("chart", ["app", "hooks"])
def test_helm4_plugin_output_matches_transform(chart: str, tmp_path: Path) -> None:
    plain = helm_template("helm4", chart, tmp_path, "--namespace", NAMESPACE)
    rendered = helm4_post_rendered(chart, tmp_path)
    expected = wavegen("transform", "-n", NAMESPACE, "-", input=plain).stdout
    # Helm 4 re-serializes post-rendered manifests: compare objects, not bytes
    assert normalized(docs_of(rendered)) == normalized(docs_of(expected))
    docs = docs_of(rendered)
    assert template_hash(one(docs, "Deployment"))
    # its postrender-filename bookkeeping survived us: helm consumed and removed it
    assert "postrenderer.helm.sh" not in rendered
    assert "# Source: " in rendered
    if chart == "hooks":
        assert one(docs, "Job")["metadata"]["annotations"]["helm.sh/hook"] == "pre-install"


@pytest.mark.parametrize("helm", ["helm3", "helm4"])
def test_release_namespace_is_hashed(helm: str, tmp_path: Path) -> None:
    rendered = helm3_post_rendered("app", tmp_path) if helm == "helm3" else helm4_post_rendered("app", tmp_path)
    plain = helm_template(helm, "app", tmp_path)
    in_default = template_hash(one(docs_of(wavegen("transform", "-", input=plain).stdout), "Deployment"))
    in_apps = template_hash(one(docs_of(wavegen("transform", "-n", NAMESPACE, "-", input=plain).stdout), "Deployment"))
    assert in_default != in_apps  # the namespace is part of what is hashed
    assert template_hash(one(docs_of(rendered), "Deployment")) == in_apps


def test_helm_namespace_env_is_the_release_namespace(tmp_path: Path) -> None:
    """HELM_NAMESPACE sets helm's namespace and reaches the post-renderer too."""
    env = {**env_with_wavegen(tmp_path), "HELM_NAMESPACE": NAMESPACE}
    shim = str(wavegen_bin_dir(tmp_path) / "wavegen")
    out = run(
        [
            tool("helm3"),
            "template",
            "rel",
            str(Path(__file__).resolve().parents[2] / "fixtures" / "charts" / "app"),
            "--post-renderer",
            shim,
            "--post-renderer-args",
            "post-render",
        ],
        env=env,
    ).stdout
    assert out == helm3_post_rendered("app", tmp_path)


@pytest.mark.parametrize("helm", ["helm3", "helm4"])
def test_empty_chart_still_renders(helm: str, tmp_path: Path) -> None:
    chart = tmp_path / "empty"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: empty\nversion: 0.1.0\n")
    (chart / "templates" / "cm.yaml").write_text("{{- if .Values.enabled }}\nkind: ConfigMap\n{{- end }}\n")
    env = env_with_wavegen(tmp_path)
    if helm == "helm4":
        install_helm4_plugin(tmp_path)
        args = ["--post-renderer", "wavegen"]
    else:
        args = ["--post-renderer", str(wavegen_bin_dir(tmp_path) / "wavegen"), "--post-renderer-args", "post-render"]
    proc = run([tool(helm), "template", "rel", str(chart), *args], env=env, check=False)
    assert proc.returncode == 0, proc.stderr
    assert docs_of(proc.stdout) == []


def test_helm4_plugin_failure_fails_the_render(tmp_path: Path) -> None:
    install_helm4_plugin(tmp_path)
    proc = run(
        [
            tool("helm4"),
            "template",
            "rel",
            str(Path(__file__).resolve().parents[2] / "fixtures" / "charts" / "app"),
            "--post-renderer",
            "wavegen",
            "--post-renderer-args=--profile=nope",
        ],
        env=env_with_wavegen(tmp_path),
        check=False,
    )
    assert proc.returncode != 0
    assert "wavegen" in proc.stderr


def _chart_with_a_missing_key(tmp_path: Path) -> Path:
    chart = tmp_path / "chart"
    shutil.copytree(Path(__file__).resolve().parents[2] / "fixtures" / "charts" / "app", chart)
    (chart / "templates" / "reader.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: reader\nspec:\n"
        "  selector: {matchLabels: {app: reader}}\n  template:\n    metadata: {labels: {app: reader}}\n"
        "    spec:\n      containers:\n        - name: c\n          image: busybox\n          env:\n"
        "            - name: X\n              valueFrom:\n                configMapKeyRef:\n"
        '                  name: {{ include "app.fullname" . }}-config\n                  key: no-such-key\n'
    )
    return chart


@pytest.mark.parametrize("mode", ["helm3-post-renderer", "transform-stdin"])
def test_findings_name_the_helm_template(mode: str, tmp_path: Path) -> None:
    """A finding about rendered output names helm's `# Source:` template, not only a line of the render."""
    chart = _chart_with_a_missing_key(tmp_path)
    env = env_with_wavegen(tmp_path)
    if mode == "helm3-post-renderer":
        shim = str(wavegen_bin_dir(tmp_path) / "wavegen")
        # Helm 3 shows a post-renderer's stderr only when it fails, so make the finding an error.
        argv = [tool("helm3"), "template", "rel", str(chart), "--post-renderer", shim, "--post-renderer-args", "post-render"]
        stderr = run([*argv, "--post-renderer-args=--missing=error"], env=env, check=False).stderr
    else:
        plain = run([tool("helm3"), "template", "rel", str(chart)], env=env).stdout
        stderr = wavegen("transform", "-", input=plain).stderr
    line = next(line for line in stderr.splitlines() if "no-such-key" in line)
    severity = "error" if mode == "helm3-post-renderer" else "warning"
    assert re.search(rf"wavegen: {severity}: app/templates/reader\.yaml \(rendered document \d+, line \d+\): ", line), line
