"""The Argo CD plugin's discover, init and generate commands run with real helm 3/4 and kustomize."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.tools import FIXTURES, REPO_ROOT, run, tool

pytestmark = pytest.mark.integration

PLUGIN_DIR = REPO_ROOT / "plugins" / "argocd"
HASH = "wavegen.io/config-hash"


def spec() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((PLUGIN_DIR / "plugin.yaml").read_text())["spec"]
    return data


def argv(command: dict[str, Any]) -> list[str]:
    return [*command["command"], *command.get("args", [])]


def tools_path(tmp_path: Path, helm: str = "helm3") -> Path:
    """A bin directory holding exactly what the sidecar has: helm, kustomize, wavegen."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    wavegen = Path(sys.executable).parent / "wavegen"
    for name, target in (("helm", tool(helm)), ("kustomize", tool("kustomize")), ("wavegen", str(wavegen))):
        link = bin_dir / name
        if link.exists() or link.is_symlink():
            link.unlink()
        link.symlink_to(target)
    return bin_dir


def plugin_env(tmp_path: Path, bin_dir: Path, **extra: str) -> dict[str, str]:
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "HOME": str(tmp_path / "home"),
        "HELM_CACHE_HOME": str(tmp_path / "helm" / "cache"),
        "HELM_CONFIG_HOME": str(tmp_path / "helm" / "config"),
        "HELM_DATA_HOME": str(tmp_path / "helm" / "data"),
        "ARGOCD_APP_NAME": "shop",
        "ARGOCD_APP_NAMESPACE": "shop-prod",
        "ARGOCD_APP_REVISION": "0123456789abcdef",
        "ARGOCD_APP_SOURCE_PATH": ".",
        "KUBE_VERSION": "1.31.0",
    }
    env.update(extra)
    return env


def run_plugin(command: dict[str, Any], cwd: Path, env: dict[str, str], check: bool = True) -> Any:
    # the CMP server runs the command with exactly the sidecar's environment, not the test's
    import subprocess

    proc = subprocess.run(argv(command), cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False)
    if check:
        assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def docs_of(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if d]


def one(docs: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    (found,) = [d for d in docs if d["kind"] == kind]
    return found


@pytest.mark.parametrize("helm", ["helm3", "helm4"])
def test_generate_renders_helm_chart_and_annotates(helm: str, tmp_path: Path) -> None:
    chart = tmp_path / "app"
    shutil.copytree(FIXTURES / "charts" / "app", chart)
    (chart / "values-prod.yaml").write_text("config:\n  LOG_LEVEL: warn\n")
    env = plugin_env(tmp_path, tools_path(tmp_path, helm))
    run_plugin(spec()["init"], chart, env)
    out = run_plugin(spec()["generate"], chart, env).stdout
    docs = docs_of(out)
    deployment = one(docs, "Deployment")
    assert deployment["metadata"]["name"] == "shop-app"  # release name is the Application name
    digest = deployment["spec"]["template"]["metadata"]["annotations"][HASH]
    assert len(digest) == 64
    # the hash is the one the CLI computes for the same render in the app namespace
    rendered = run(
        [tool(helm), "template", "shop", str(chart), "--namespace", "shop-prod", "--kube-version", "1.31.0"], env=env
    ).stdout
    expected = run([str(Path(sys.executable).parent / "wavegen"), "transform", "-", "-n", "shop-prod"], input=rendered).stdout
    assert out == expected

    # a values-files parameter changes the ConfigMap, and so the hash
    with_values = run_plugin(spec()["generate"], chart, {**env, "PARAM_VALUES_FILES_0": "values-prod.yaml"}).stdout
    changed = one(docs_of(with_values), "Deployment")["spec"]["template"]["metadata"]["annotations"][HASH]
    assert one(docs_of(with_values), "ConfigMap")["data"]["LOG_LEVEL"] == "warn"
    assert changed != digest
    # secret values never reach stderr
    assert "not-a-real-password" not in run_plugin(spec()["generate"], chart, env).stderr


def test_generate_builds_kustomization_and_annotates(tmp_path: Path) -> None:
    work = tmp_path / "kustomize"
    shutil.copytree(FIXTURES / "kustomize", work)
    env = plugin_env(tmp_path, tools_path(tmp_path))
    out = run_plugin(spec()["generate"], work / "overlay", env).stdout
    docs = docs_of(out)
    deployment = one(docs, "Deployment")
    assert deployment["metadata"]["name"] == "staging-web"
    assert len(deployment["spec"]["template"]["metadata"]["annotations"][HASH]) == 64
    built = run([tool("kustomize"), "build", str(work / "overlay")]).stdout
    assert out == run([str(Path(sys.executable).parent / "wavegen"), "transform", "-", "-n", "shop-prod"], input=built).stdout


def test_generate_profile_parameter_selects_wave_annotation(tmp_path: Path) -> None:
    work = tmp_path / "kustomize"
    shutil.copytree(FIXTURES / "kustomize", work)
    env = plugin_env(tmp_path, tools_path(tmp_path), PARAM_PROFILE="wave")
    annotations = one(docs_of(run_plugin(spec()["generate"], work / "base", env).stdout), "Deployment")["spec"]["template"][
        "metadata"
    ]["annotations"]
    assert HASH not in annotations
    assert any("wave" in key for key in annotations), annotations


def test_generate_fails_loudly_instead_of_emitting_nothing(tmp_path: Path) -> None:
    chart = tmp_path / "broken"
    shutil.copytree(FIXTURES / "charts" / "app", chart)
    (chart / "templates" / "broken.yaml").write_text("{{ .Values.nope.missing }}\n")
    env = plugin_env(tmp_path, tools_path(tmp_path))
    proc = run_plugin(spec()["generate"], chart, env, check=False)
    assert proc.returncode != 0
    assert proc.stdout == ""
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = run_plugin(spec()["generate"], empty, env, check=False)
    assert proc.returncode != 0 and "no Chart.yaml or kustomization.yaml" in proc.stderr


def test_discover_matches_charts_and_kustomizations_only(tmp_path: Path) -> None:
    env = plugin_env(tmp_path, tools_path(tmp_path))
    find = spec()["discover"]["find"]
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "deployment.yaml").write_text("kind: Deployment\n")
    for directory, matches in ((FIXTURES / "charts" / "app", True), (FIXTURES / "kustomize" / "overlay", True), (plain, False)):
        proc = run_plugin(find, directory, env)
        assert bool(proc.stdout.strip()) is matches, directory


def test_component_patches_repo_server(tmp_path: Path) -> None:
    """The shipped kustomize Component adds the sidecar and the plugin ConfigMap to an Argo CD install."""
    install = tmp_path / "argocd"
    install.mkdir()
    shutil.copytree(PLUGIN_DIR, tmp_path / "wavegen-argocd")
    (install / "repo-server.yaml").write_text(
        yaml.safe_dump(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "argocd-repo-server"},
                "spec": {
                    "selector": {"matchLabels": {"app": "repo"}},
                    "template": {
                        "metadata": {"labels": {"app": "repo"}},
                        "spec": {
                            "containers": [{"name": "argocd-repo-server", "image": "quay.io/argoproj/argocd:v3.6.1"}],
                            "volumes": [{"name": "var-files", "emptyDir": {}}, {"name": "plugins", "emptyDir": {}}],
                        },
                    },
                },
            }
        )
    )
    (install / "kustomization.yaml").write_text(
        "resources: [repo-server.yaml]\ncomponents: [../wavegen-argocd]\nnamespace: argocd\n"
    )
    docs = docs_of(run([tool("kustomize"), "build", str(install)]).stdout)
    configmap = one(docs, "ConfigMap")
    assert configmap["metadata"]["name"].startswith("wavegen-cmp-plugin-")
    assert yaml.safe_load(configmap["data"]["plugin.yaml"])["kind"] == "ConfigManagementPlugin"
    pod = one(docs, "Deployment")["spec"]["template"]["spec"]
    assert sorted(c["name"] for c in pod["containers"]) == ["argocd-repo-server", "wavegen"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["wavegen-cmp-plugin"]["configMap"]["name"] == configmap["metadata"]["name"]
    assert {"var-files", "plugins", "wavegen-tools", "wavegen-tmp"} <= set(volumes)
    # wavegen itself rolls the repo-server when the plugin config changes
    out = run(
        [str(Path(sys.executable).parent / "wavegen"), "transform", "-", "-n", "argocd"], input=yaml.safe_dump_all(docs)
    ).stdout
    assert HASH in one(docs_of(out), "Deployment")["spec"]["template"]["metadata"]["annotations"]
    sidecar = next(c for c in pod["containers"] if c["name"] == "wavegen")
    assert os.path.basename(sidecar["command"][0]) == "argocd-cmp-server"
