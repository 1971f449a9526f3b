"""The Argo CD plugin under real Argo CD: synced Applications roll exactly when their config changes.

Real processes only: etcd, kube-apiserver and kube-controller-manager (so rollouts
are counted as ReplicaSets), Redis, a git daemon, and Argo CD's repo-server,
cmp-server (running ``plugins/argocd/plugin.yaml`` as shipped) and application
controller, at the version ``hack/tools.sh`` pins.
"""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.integration.test_container import Image, image  # noqa: F401  (the image fixture: built once per session)
from tests.support.argocd import ArgoCD, GitServer, RedisServer, argocd_crds, wavegen_command
from tests.support.controlplane import ControlPlane
from tests.support.tools import FIXTURES, in_ci, run, tool

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]

APPS = FIXTURES / "argocd"
HELM_APP, KUSTOMIZE_APP = "shop-helm", "shop-kustomize"


@pytest.fixture(scope="module")
def git(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GitServer]:
    with GitServer(tmp_path_factory.mktemp("git")) as server:
        for source, target in (("chart", "helm"), ("kustomize", "kustomize"), ("chart", "strict"), ("chart", "params")):
            shutil.copytree(APPS / source, server.repo / target)
        server.commit({"README.md": "Applications for wavegen's Argo CD test.\n"}, "the applications")
        yield server


@pytest.fixture(scope="module")
def argocd(controller_manager: ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ArgoCD]:
    binary = tool("argocd")
    if not argocd_crds().is_dir():
        message = f"Argo CD's CRDs are missing at {argocd_crds()} (hack/tools.sh argocd keeps the module source)"
        pytest.fail(message) if in_ci() else pytest.skip(message)
    workdir = tmp_path_factory.mktemp("argocd")
    sidecar_tools = {"helm": tool("helm3"), "kustomize": tool("kustomize"), "wavegen": wavegen_command()}
    with RedisServer(tool("redis-server"), workdir / "redis") as redis:
        server = ArgoCD(controller_manager, binary, workdir, redis, sidecar_tools)
        server.install()
        try:
            yield server.start()
        finally:
            server.stop()


# ---- what the cluster holds -------------------------------------------------------------


def replica_sets(cp: ControlPlane, namespace: str) -> int:
    """ReplicaSets in ``namespace`` once every Deployment's controller has caught up with its spec."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        deployments = cp.kubectl_json("get", "deployments", "-n", namespace)["items"]
        if deployments and all(d.get("status", {}).get("observedGeneration") == d["metadata"]["generation"] for d in deployments):
            return len(cp.kubectl_json("get", "replicasets", "-n", namespace)["items"])
        time.sleep(0.5)
    raise AssertionError(f"kube-controller-manager did not observe the Deployments in {namespace}")


def live(cp: ControlPlane, kind: str, name: str, namespace: str) -> dict[str, Any]:
    found: dict[str, Any] = cp.kubectl_json("get", kind, name, "-n", namespace)
    return found


def template_annotations(cp: ControlPlane, name: str, namespace: str) -> dict[str, str]:
    deployment = live(cp, "deployment", name, namespace)
    annotations: dict[str, str] = deployment["spec"]["template"]["metadata"].get("annotations", {})
    return annotations


def edit(git: GitServer, path: str, old: str, new: str) -> str:
    text = git.read(path)
    assert text.count(old) == 1, f"{path}: {old!r} appears {text.count(old)} times"
    return text.replace(old, new)


def sync_all(argocd: ArgoCD, revision: str, *apps: str) -> None:
    argocd.refresh(*apps)
    for app in apps:
        argocd.wait_synced(app, revision)


# ---- the user's flow --------------------------------------------------------------------

# (what the commit does, {path: (old, new)}, ReplicaSets after it): one change per commit,
# made the Helm way (values.yaml) and the kustomize way (the object's file).
STEPS: list[tuple[str, dict[str, tuple[str, str]], int]] = [
    (
        "a commit that changes nothing rendered",
        {
            "helm/values.yaml": ("port: 80\n", "port: 80  # reviewed\n"),
            "kustomize/kustomization.yaml": ("  - deployment.yaml\n", "  - deployment.yaml  # reviewed\n"),
        },
        1,
    ),
    (
        "a ConfigMap value",
        {
            "helm/values.yaml": ("logLevel: info", "logLevel: warn"),
            "kustomize/configmap.yaml": ('LOG_LEVEL: "info"', 'LOG_LEVEL: "warn"'),
        },
        2,
    ),
    (
        "a ConfigMap label only",
        {"helm/values.yaml": ("tier: web", "tier: frontend"), "kustomize/configmap.yaml": ("tier: web", "tier: frontend")},
        2,
    ),
    (
        "a Secret value",
        {
            "helm/values.yaml": ("dbPassword: hunter2", "dbPassword: hunter3"),
            "kustomize/secret.yaml": ("aHVudGVyMg==", "aHVudGVyMw=="),
        },
        3,
    ),
    (
        "a Service port",
        {
            "helm/values.yaml": ("port: 80  # reviewed", "port: 8080  # reviewed"),
            "kustomize/service.yaml": ("port: 80\n", "port: 8080\n"),
        },
        3,
    ),
]


def test_applications_roll_exactly_when_their_config_changes(argocd: ArgoCD, git: GitServer) -> None:
    cp = argocd.cp
    head = git.git("rev-parse", "HEAD")
    argocd.create_application(HELM_APP, git.url, "helm", HELM_APP)
    argocd.create_application(KUSTOMIZE_APP, git.url, "kustomize", KUSTOMIZE_APP)
    sync_all(argocd, head, HELM_APP, KUSTOMIZE_APP)
    table = [("create and sync", replica_sets(cp, HELM_APP), replica_sets(cp, KUSTOMIZE_APP))]
    assert template_annotations(cp, f"{HELM_APP}-web", HELM_APP).get("wavegen.io/config-hash")
    assert template_annotations(cp, "shop-web", KUSTOMIZE_APP).get("wavegen.io/config-hash")
    for what, edits, _ in STEPS:
        head = git.commit({path: edit(git, path, old, new) for path, (old, new) in edits.items()}, what)
        sync_all(argocd, head, HELM_APP, KUSTOMIZE_APP)
        table.append((what, replica_sets(cp, HELM_APP), replica_sets(cp, KUSTOMIZE_APP)))
    expected = [("create and sync", 1, 1)] + [(what, count, count) for what, _, count in STEPS]
    assert table == expected
    # the last commit did reach the cluster: the Service port changed, with no rollout
    assert live(cp, "service", HELM_APP, HELM_APP)["spec"]["ports"][0]["port"] == 8080
    assert live(cp, "service", "shop", KUSTOMIZE_APP)["spec"]["ports"][0]["port"] == 8080


def offline_hash(
    git: GitServer, path: str, release: str, namespace: str, tmp_path: Path, *values_files: str, profile: str = "wavegen"
) -> str:
    """The hash annotation wavegen gives, on the host, to what helm renders of ``path`` at HEAD."""
    chart = git.repo / path
    values = [arg for name in values_files for arg in ("--values", str(chart / name))]
    helm_home = {
        "HELM_CACHE_HOME": str(tmp_path / "c"),
        "HELM_CONFIG_HOME": str(tmp_path / "f"),
        "HELM_DATA_HOME": str(tmp_path / "d"),
    }
    rendered = run([tool("helm3"), "template", release, str(chart), "--namespace", namespace, *values], env=helm_home).stdout
    offline = run([wavegen_command(), "transform", "-", "--namespace", namespace, "--profile", profile], input=rendered).stdout
    deployment = next(d for d in yaml.safe_load_all(offline) if d and d["kind"] == "Deployment")
    annotations: dict[str, str] = deployment["spec"]["template"]["metadata"]["annotations"]
    return next(value for key, value in annotations.items() if key.endswith("/config-hash"))


# ---- parameters ---------------------------------------------------------------------------


def test_parameters_change_the_output_as_documented(argocd: ArgoCD, git: GitServer, tmp_path: Path) -> None:
    cp = argocd.cp
    parameters = [
        {"name": "values-files", "array": ["values-a.yaml", "values-b.yaml"]},
        {"name": "release-name", "string": "custom"},
        {"name": "profile", "string": "wave"},
    ]
    argocd.create_application("params", git.url, "params", "params", parameters)
    argocd.refresh("params")
    argocd.wait_synced("params", git.git("rev-parse", "HEAD"))
    # release-name names the objects; the values files apply in order (b's port wins over a's)
    config = live(cp, "configmap", "custom-config", "params")
    assert config["data"] == {"LOG_LEVEL": "debug"}
    assert live(cp, "service", "custom", "params")["spec"]["ports"][0]["port"] == 82
    # profile wave: wave's annotation, with the hash wavegen gives the same render offline
    annotations = template_annotations(cp, "custom-web", "params")
    assert "wavegen.io/config-hash" not in annotations
    expected = offline_hash(git, "params", "custom", "params", tmp_path, "values-a.yaml", "values-b.yaml", profile="wave")
    assert annotations["wave.pusher.com/config-hash"] == expected


# ---- errors reach the user, and nothing is applied -----------------------------------------


def test_errors_fail_the_sync_and_apply_nothing(argocd: ArgoCD, git: GitServer) -> None:
    cp = argocd.cp
    argocd.create_application("strict", git.url, "strict", "strict", [{"name": "missing", "string": "error"}])
    argocd.refresh("strict")
    argocd.wait_synced("strict", git.git("rev-parse", "HEAD"))
    assert replica_sets(cp, "strict") == 1

    # missing: error, and a commit that removes a key the Deployment requires
    template = "strict/templates/configmap.yaml"
    head = git.commit(
        {template: edit(git, template, "  LOG_LEVEL: {{ .Values.logLevel | quote }}\n", "  LEVEL: x\n")}, "drop LOG_LEVEL"
    )
    argocd.refresh("strict")
    message = argocd.wait_condition("strict", head, r"needs key 'LOG_LEVEL'")
    finding = r"shop/templates/deployment\.yaml \(rendered document \d+, line \d+\): Deployment/strict/strict-web needs key"
    assert re.search(finding, message), message
    assert argocd.application("strict")["status"]["sync"]["status"] != "Synced"
    assert live(cp, "configmap", "strict-config", "strict")["data"] == {"LOG_LEVEL": "info"}
    assert replica_sets(cp, "strict") == 1

    # a chart that does not render: helm's own message, and no empty manifest list pruning everything
    broken = "strict/templates/broken.yaml"
    head = git.commit({broken: "kind: ConfigMap\nname: {{ .Values.oops \n"}, "a broken template")
    argocd.refresh("strict")
    message = argocd.wait_condition("strict", head, r"broken\.yaml")
    assert "parse error" in message, message
    for kind, name in (
        ("configmap", "strict-config"),
        ("secret", "strict-db"),
        ("service", "strict"),
        ("deployment", "strict-web"),
    ):
        assert live(cp, kind, name, "strict")["metadata"]["name"] == name  # nothing was pruned
    assert replica_sets(cp, "strict") == 1


# ---- the sidecar as shipped ------------------------------------------------------------------


def cmp_server_uids() -> set[str]:
    """The user ids of the processes running the sidecar's argocd-cmp-server."""
    uids = set()
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "cmdline").read_bytes().split(b"\0")[0] == b"/var/run/argocd/argocd-cmp-server":
                uids.add(next(line.split()[1] for line in (entry / "status").read_text().splitlines() if line.startswith("Uid:")))
        except OSError:
            continue
    return uids


def test_the_sidecar_as_shipped_generates_from_the_image(
    image: Image,  # noqa: F811
    controller_manager: ControlPlane,
    git: GitServer,
    tmp_path_factory: pytest.TempPathFactory,
    tmp_path: Path,
) -> None:
    """sidecar-patch.yaml's container, run by buildah from the wavegen image, serves the plugin to a real repo-server."""
    cp = controller_manager
    workdir = tmp_path_factory.mktemp("argocd-sidecar")
    sidecar_tools = {"helm": tool("helm3"), "kustomize": tool("kustomize"), "wavegen": wavegen_command()}
    with RedisServer(tool("redis-server"), workdir / "redis") as redis:
        server = ArgoCD(cp, tool("argocd"), workdir, redis, sidecar_tools, namespace="argocd-sidecar", sidecar_image=image.name)
        server.install()
        try:
            server.start()  # waits for the sidecar's socket
            assert cmp_server_uids() == {"999"}
            server.create_application("sidecar", git.url, "helm", "sidecar")
            server.refresh("sidecar")
            server.wait_synced("sidecar", git.git("rev-parse", "HEAD"))
            assert replica_sets(cp, "sidecar") == 1
            annotations = template_annotations(cp, "sidecar-web", "sidecar")
            assert annotations["wavegen.io/config-hash"] == offline_hash(git, "helm", "sidecar", "sidecar", tmp_path)
        finally:
            server.stop()
