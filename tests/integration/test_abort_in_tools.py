"""When wavegen fails inside helm (post-renderer) or kustomize (exec KRM function), the install/build aborts with its message."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.adapters_support import env_with_wavegen, install_helm4_plugin, wavegen_bin_dir
from tests.support.tools import run, tool

pytestmark = pytest.mark.integration

CANARY = "c2VjcmV0LWNhbmFyeS0xMjM0"  # base64 of a value that must never be echoed
BAD_SECRET = f"""apiVersion: v1
kind: Secret
metadata:
  name: broken
data:
  good: {CANARY}
  bad: "not base64!"
"""
DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
      - name: web
        image: nginx
        envFrom:
        - secretRef:
            name: broken
"""


def _chart(tmp_path: Path) -> Path:
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: broken\nversion: 0.1.0\n")
    (chart / "templates" / "secret.yaml").write_text(BAD_SECRET)
    (chart / "templates" / "deployment.yaml").write_text(DEPLOYMENT)
    return chart


def _assert_wavegen_message(proc: object) -> None:
    stderr = getattr(proc, "stderr", "")
    assert getattr(proc, "returncode", 0) != 0, "the tool must fail when wavegen fails"
    assert "not valid base64" in stderr, stderr
    assert "data.bad" in stderr, stderr
    assert CANARY not in stderr and CANARY not in getattr(proc, "stdout", "")
    assert "kind: Deployment" not in getattr(proc, "stdout", ""), "no manifests may come out of a failed render"


def test_helm3_post_renderer_failure_aborts(tmp_path: Path) -> None:
    chart = _chart(tmp_path)
    shim = wavegen_bin_dir(tmp_path) / "wavegen"
    proc = run(
        [tool("helm3"), "template", "rel", str(chart), "--post-renderer", str(shim), "--post-renderer-args", "post-render"],
        env=env_with_wavegen(tmp_path),
        check=False,
    )
    _assert_wavegen_message(proc)


@pytest.mark.xfail(
    strict=True,
    reason='Helm 4 aborts but drops the postrenderer/v1 plugin\'s stderr (its --debug log shows stderr=""); '
    "wavegen's message is not shown. Owner: plugins/helm + post_render.py",
)
def test_helm4_plugin_failure_aborts(tmp_path: Path) -> None:
    chart = _chart(tmp_path)
    install_helm4_plugin(tmp_path)
    proc = run(
        [tool("helm4"), "template", "rel", str(chart), "--post-renderer", "wavegen"],
        env=env_with_wavegen(tmp_path),
        check=False,
    )
    _assert_wavegen_message(proc)


def test_kustomize_exec_function_failure_aborts(tmp_path: Path) -> None:
    work = tmp_path / "k"
    work.mkdir()
    (work / "secret.yaml").write_text(BAD_SECRET)
    (work / "deployment.yaml").write_text(DEPLOYMENT)
    shim = wavegen_bin_dir(tmp_path) / "wavegen"
    (work / "wavegen.yaml").write_text(
        "apiVersion: wavegen.io/v1alpha1\nkind: ConfigHash\nmetadata:\n  name: wavegen\n  annotations:\n"
        f"    config.kubernetes.io/function: |\n      exec:\n        path: {shim}\n        args: [krm]\n"
    )
    (work / "kustomization.yaml").write_text("resources: [secret.yaml, deployment.yaml]\ntransformers: [wavegen.yaml]\n")
    proc = run(
        [tool("kustomize"), "build", "--enable-alpha-plugins", "--enable-exec", str(work)],
        env=env_with_wavegen(tmp_path),
        check=False,
    )
    _assert_wavegen_message(proc)
