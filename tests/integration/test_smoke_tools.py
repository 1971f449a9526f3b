"""Smoke tests: every tool from hack/tools.sh is the real program and does its job.

kustomize builds (with an exec KRM function), Helm 3 and Helm 4 render the
fixture charts, act runs a local workflow without Docker, the API server
accepts every golden output with a server-side dry-run apply, and the
controller manager rolls a Deployment whose pod template changed.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.argocd import RedisServer
from tests.support.controlplane import ControlPlane
from tests.support.tools import FIXTURES, REPO_ROOT, TOOLS, ToolError, act_command, act_env, run, tool

pytestmark = pytest.mark.integration

KUSTOMIZE_FIXTURES = FIXTURES / "kustomize"
CHARTS = FIXTURES / "charts"
HELMS = ("helm3", "helm4")


# ---- helpers ------------------------------------------------------------------


def docs_of(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if d]


def by_kind(docs: Iterable[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [d for d in docs if d.get("kind") == kind]


def one(docs: Iterable[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = by_kind(docs, kind)
    assert len(found) == 1, f"expected one {kind}, got {[d['metadata']['name'] for d in found]}"
    return found[0]


def eventually(check: Callable[[], Any], what: str, timeout: float = 60, interval: float = 0.5) -> Any:
    """Poll ``check`` until it returns something truthy; fail with ``what`` on timeout."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(interval)
    pytest.fail(f"timed out after {timeout}s waiting for {what} (last: {last!r})")


def helm_env(tmp_path: Path) -> dict[str, str]:
    """Keep helm's config, cache and data out of the user's home."""
    return {
        "HELM_CONFIG_HOME": str(tmp_path / "helm-config"),
        "HELM_CACHE_HOME": str(tmp_path / "helm-cache"),
        "HELM_DATA_HOME": str(tmp_path / "helm-data"),
    }


def kustomize_build(path: Path, *extra: str) -> str:
    return run([tool("kustomize"), "build", *extra, str(path)]).stdout


def helm_template(helm: str, chart: str, tmp_path: Path, *extra: str) -> str:
    return run(
        [tool(helm), "template", "smoke", str(CHARTS / chart), *extra],
        env=helm_env(tmp_path),
    ).stdout


def pod_spec(workload: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = workload["spec"]["template"]["spec"]
    return spec


# ---- the helper itself --------------------------------------------------------------


def test_missing_tool_fails_in_ci(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("WAVEGEN_TOOLS_DIR", str(tmp_path))
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="required tool missing: kustomize"):
        tool("kustomize")


def test_missing_tool_skips_outside_ci(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("WAVEGEN_TOOLS_DIR", str(tmp_path))
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="kustomize"):
        tool("kustomize")


# ---- every tool is the pinned, real binary ---------------------------------------------------

VERSION_ARGS = {
    "kustomize": ["version"],
    "helm3": ["version", "--short"],
    "helm4": ["version", "--short"],
    "kubectl": ["version", "--client"],
    "act": ["--version"],
    "etcd": ["--version"],
    "kube-apiserver": ["--version"],
    "kube-controller-manager": ["--version"],
    "registry": ["--version"],
    "cosign": ["version"],
    "syft": ["version"],
    "argocd": ["version", "--client", "--short"],
}
PIN_VARIABLE = {
    "kustomize": "KUSTOMIZE_VERSION",
    "helm3": "HELM3_VERSION",
    "helm4": "HELM4_VERSION",
    "kubectl": "KUBERNETES_VERSION",
    "act": "ACT_VERSION",
    "etcd": "ETCD_VERSION",
    "kube-apiserver": "KUBERNETES_VERSION",
    "kube-controller-manager": "KUBERNETES_VERSION",
    "registry": "REGISTRY_VERSION",
    "cosign": "COSIGN_VERSION",
    "syft": "SYFT_VERSION",
    "argocd": "ARGOCD_VERSION",
}
#: Debian's package, not built here: its version is the distribution's.
UNPINNED = ("redis-server",)


def pins() -> dict[str, str]:
    """The ``NAME_VERSION=vX.Y.Z`` pins of hack/tools.sh."""
    found = re.findall(
        r"^([A-Z0-9_]+_VERSION)=(v[0-9][^\s#]*)",
        (REPO_ROOT / "hack" / "tools.sh").read_text(),
        re.MULTILINE,
    )
    return dict(found)


@pytest.mark.parametrize("name", [name for name in TOOLS if name not in UNPINNED])
def test_tool_reports_its_pinned_version(name: str) -> None:
    pin = pins()[PIN_VARIABLE[name]]
    out = run([tool(name), *VERSION_ARGS[name]]).stdout
    # etcd and act print the version without the leading "v"
    assert re.search(rf"\bv?{re.escape(pin.removeprefix('v'))}\b", out), f"{name}: expected {pin}, got:\n{out}"


def test_tools_script_pins_every_tool() -> None:
    script = (REPO_ROOT / "hack" / "tools.sh").read_text()
    for name in TOOLS:
        assert name in script
    versions = pins()
    assert versions["KUSTOMIZE_VERSION"].startswith("v5.")
    assert versions["HELM3_VERSION"].startswith("v3.")
    assert versions["HELM4_VERSION"].startswith("v4.")
    assert versions["KUBERNETES_VERSION"].startswith("v1.")
    assert set(PIN_VARIABLE.values()) <= set(versions)
    assert set(PIN_VARIABLE) | set(UNPINNED) == set(TOOLS)
    assert "https://" not in "\n".join(line for line in script.splitlines() if not line.lstrip().startswith("#")), (
        "hack/tools.sh must not download prebuilt binaries"
    )


# ---- kustomize --------------------------------------------------------------------------------


def test_kustomize_builds_overlay() -> None:
    docs = docs_of(kustomize_build(KUSTOMIZE_FIXTURES / "overlay"))
    assert {d["metadata"]["namespace"] for d in docs} == {"wavegen-smoke-staging"}
    deployment = one(docs, "Deployment")
    assert deployment["metadata"]["name"] == "staging-web"
    configmaps = {d["metadata"]["name"]: d for d in by_kind(docs, "ConfigMap")}
    assert "staging-app-config" in configmaps
    generated = [n for n in configmaps if n.startswith("staging-app-env-")]
    assert len(generated) == 1, configmaps.keys()  # hash-suffixed by the generator
    assert configmaps[generated[0]]["data"] == {"FEATURE_X": "on", "REGION": "eu-west"}
    spec = pod_spec(deployment)
    container = spec["containers"][0]
    # kustomize rewrote every reference to the renamed ConfigMaps
    assert container["envFrom"][0]["configMapRef"]["name"] == generated[0]
    assert container["env"][0]["valueFrom"]["configMapKeyRef"]["name"] == "staging-app-config"
    assert spec["volumes"][0]["configMap"]["name"] == "staging-app-config"


def test_kustomize_runs_exec_function(tmp_path: Path) -> None:
    work = tmp_path / "kustomize"
    shutil.copytree(KUSTOMIZE_FIXTURES, work)
    script = work / "exec" / "set-replicas.sh"
    script.chmod(0o755)
    # without the flags kustomize refuses to run the function
    refused = run([tool("kustomize"), "build", str(work / "exec")], check=False)
    assert refused.returncode != 0
    docs = docs_of(kustomize_build(work / "exec", "--enable-alpha-plugins", "--enable-exec"))
    assert one(docs, "Deployment")["spec"]["replicas"] == 3
    assert not by_kind(docs, "SetReplicas")


# ---- helm 3 and helm 4 ---------------------------------------------------------------------


@pytest.mark.parametrize("helm", HELMS)
def test_helm_templates_app_chart(helm: str, tmp_path: Path) -> None:
    docs = docs_of(
        helm_template(
            helm,
            "app",
            tmp_path,
            "--namespace",
            "apps",
            "--set",
            "config.LOG_LEVEL=debug",
        )
    )
    assert {d["kind"] for d in docs} == {"ConfigMap", "Secret", "Deployment"}
    configmap, secret, deployment = (
        one(docs, "ConfigMap"),
        one(docs, "Secret"),
        one(docs, "Deployment"),
    )
    assert configmap["metadata"]["name"] == "smoke-app-config"
    assert configmap["data"]["LOG_LEVEL"] == "debug"
    assert secret["metadata"]["name"] == "smoke-app-secret"
    spec = pod_spec(deployment)
    container = spec["containers"][0]
    assert container["env"][0]["valueFrom"]["configMapKeyRef"]["name"] == "smoke-app-config"
    assert container["env"][1]["valueFrom"]["secretKeyRef"]["name"] == "smoke-app-secret"
    assert [next(iter(e.values()))["name"] for e in container["envFrom"] if "prefix" not in e] == ["smoke-app-config"]
    assert {v["name"] for v in spec["volumes"]} == {"config", "secret", "bundle"}
    assert spec["initContainers"][0]["envFrom"][0]["configMapRef"]["name"] == "smoke-app-config"


@pytest.mark.parametrize("helm", HELMS)
def test_helm_templates_hook_chart(helm: str, tmp_path: Path) -> None:
    docs = docs_of(helm_template(helm, "hooks", tmp_path))
    job = one(docs, "Job")
    assert job["metadata"]["annotations"]["helm.sh/hook"] == "pre-install"
    assert pod_spec(job)["containers"][0]["envFrom"][0]["configMapRef"]["name"] == "smoke-migration"
    assert one(docs, "Deployment")["metadata"]["name"] == "smoke-app"
    skipped = docs_of(helm_template(helm, "hooks", tmp_path, "--no-hooks"))
    assert not by_kind(skipped, "Job")


@pytest.mark.parametrize("helm", HELMS)
def test_helm_major_version(helm: str, tmp_path: Path) -> None:
    out = run([tool(helm), "version", "--short"], env=helm_env(tmp_path)).stdout
    assert out.startswith("v" + helm[-1] + "."), out


# ---- act ------------------------------------------------------------------------------------------

WORKFLOW = """\
name: smoke
on: push
jobs:
  hello:
    runs-on: ubuntu-latest
    steps:
      - name: say
        run: echo "wavegen-act-says $((6 * 7))"
      - name: env
        run: test -n "$GITHUB_WORKSPACE" && echo "workspace ok"
"""


def test_act_runs_local_workflow(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / ".github" / "workflows" / "x.yml").write_text(WORKFLOW)
    home = tmp_path / "home"
    (home / ".config" / "act").mkdir(parents=True)
    # an actrc keeps act from asking which image to use on its first run
    actrc = "-P ubuntu-latest=-self-hosted\n"
    (home / ".actrc").write_text(actrc)
    (home / ".config" / "act" / "actrc").write_text(actrc)
    git = shutil.which("git")
    if git is None:
        pytest.fail("git is required for the act smoke test")
    genv = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "HOME": str(home),
    }
    run([git, "init", "-q", "-b", "main"], cwd=repo, env=genv)
    run([git, "add", "."], cwd=repo, env=genv)
    run([git, "commit", "-q", "-m", "init"], cwd=repo, env=genv)
    proc = run(
        act_command(".github/workflows/x.yml"),
        cwd=repo,
        env=act_env(genv, home, tmp_path / "cache"),
        timeout=180,
        check=False,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "wavegen-act-says 42" in out, out
    assert "workspace ok" in out, out
    assert "Job succeeded" in out, out


# ---- the API server accepts golden outputs ------------------------------------------------------


# Golden outputs no API server can accept, on purpose: duplicate-workload names one Deployment
# under apps/v1 and apps/v1beta2 (same group, so a duplicate; v1beta2 is no longer served) and a
# custom kind without its CRD (a different group, so not a duplicate).
NOT_APPLICABLE = frozenset({"duplicate-workload/expected.yaml"})
# Golden outputs whose data PyYAML (YAML 1.1), which groups documents here, reads apart from
# kubectl (go-yaml): re-dumped they would say something else (`12:30` becomes 750). Such data
# goes to a real API server unchanged in tests/e2e/test_stored_hash.py.
READ_APART = frozenset({"go-yaml-strings/expected.yaml"})


def _golden_outputs() -> list[str]:
    found = sorted(str(p.relative_to(FIXTURES)) for p in FIXTURES.glob("**/expected.yaml"))
    assert set(found) >= NOT_APPLICABLE | READ_APART, "a listed fixture is gone: drop it from the list"
    return [p for p in found if p not in NOT_APPLICABLE | READ_APART]


def _render(source: str, tmp_path: Path) -> str:
    kind, _, what = source.partition(":")
    if kind == "kustomize":
        return kustomize_build(KUSTOMIZE_FIXTURES / what)
    if kind in HELMS:
        return helm_template(kind, what, tmp_path)
    return (FIXTURES / what).read_text()


def server_side_dry_run(cp: ControlPlane, text: str, default_namespace: str) -> list[str]:
    """Dry-run apply every object of ``text``; return the namespaces this created."""
    docs = docs_of(text)
    assert docs, "nothing to apply"
    flat: list[dict[str, Any]] = []
    for d in docs:
        flat.extend((d.get("items") or []) if str(d.get("kind", "")).endswith("List") else [d])
    created: list[str] = []
    wanted = {d["metadata"]["name"] for d in flat if d.get("kind") == "Namespace"}
    wanted |= {d["metadata"]["namespace"] for d in flat if d.get("metadata", {}).get("namespace")}
    for ns in sorted(wanted):
        if cp.kubectl("get", "namespace", ns, check=False).returncode != 0:
            created.append(ns)
        cp.create_namespace(ns)
    # CRDs must exist for their custom resources to validate
    for crd in (d for d in flat if d.get("kind") == "CustomResourceDefinition"):
        cp.apply(crd, "--server-side", "--field-manager=wavegen-smoke")
        cp.kubectl(
            "wait",
            "--for=condition=Established",
            f"crd/{crd['metadata']['name']}",
            "--timeout=60s",
        )
    groups: dict[str, list[dict[str, Any]]] = {}
    for d in flat:
        ns = d.get("metadata", {}).get("namespace") or default_namespace
        groups.setdefault(ns, []).append(d)
    for ns, group in groups.items():
        cp.kubectl(
            "apply",
            "--server-side",
            "--dry-run=server",
            "--field-manager=wavegen-smoke",
            "-n",
            ns,
            "-f",
            "-",
            input=yaml.safe_dump_all(group, sort_keys=False),
        )
    return created


DRY_RUN_SOURCES = [
    "kustomize:overlay",
    "kustomize:base",
    "helm3:app",
    "helm4:app",
    "helm3:hooks",
    *(f"golden:{p}" for p in _golden_outputs()),
]


@pytest.mark.parametrize("source", DRY_RUN_SOURCES)
def test_server_side_dry_run_apply(source: str, control_plane: ControlPlane, namespace: str, tmp_path: Path) -> None:
    text = _render(source, tmp_path)
    created = server_side_dry_run(control_plane, text, namespace)
    try:
        # a dry run stores nothing
        listed = control_plane.kubectl_json("get", "deployments,configmaps", "-n", namespace)
        assert not [i for i in listed["items"] if i["metadata"]["name"] != "kube-root-ca.crt"]
    finally:
        for ns in created:
            control_plane.kubectl("delete", "namespace", ns, "--wait=false", check=False)


def test_server_side_dry_run_rejects_invalid(control_plane: ControlPlane, namespace: str) -> None:
    bad = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "bad"},
        "spec": {
            "selector": {"matchLabels": {"app": "a"}},
            "template": {
                "metadata": {"labels": {"app": "b"}},
                "spec": {"containers": [{"name": "c", "image": "registry.example/c:1"}]},
            },
        },
    }
    with pytest.raises(ToolError, match="does not match"):
        server_side_dry_run(control_plane, json.dumps(bad), namespace)


# ---- the controller manager rolls a changed pod template -----------------------------------------


def replica_sets(cp: ControlPlane, namespace: str, app: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = cp.kubectl_json("get", "replicasets", "-n", namespace, "-l", f"app={app}")["items"]
    return items


def test_pod_template_annotation_change_creates_new_replicaset(controller_manager: ControlPlane, namespace: str) -> None:
    cp = controller_manager
    key = "wavegen.test/config-hash"
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "roll", "namespace": namespace},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "roll"}},
            "template": {
                "metadata": {"labels": {"app": "roll"}, "annotations": {key: "aaa"}},
                "spec": {"containers": [{"name": "c", "image": "registry.example/roll:1"}]},
            },
        },
    }
    cp.apply(deployment)
    first = eventually(lambda: replica_sets(cp, namespace, "roll"), "the first ReplicaSet")
    assert len(first) == 1
    assert first[0]["spec"]["template"]["metadata"]["annotations"][key] == "aaa"

    patch = {"spec": {"template": {"metadata": {"annotations": {key: "bbb"}}}}}
    cp.kubectl(
        "patch",
        "deployment",
        "roll",
        "-n",
        namespace,
        "--type=merge",
        "-p",
        json.dumps(patch),
    )

    def two_or_more() -> list[dict[str, Any]] | None:
        found = replica_sets(cp, namespace, "roll")
        return found if len(found) >= 2 else None

    both = eventually(two_or_more, "a second ReplicaSet")
    assert len(both) == 2
    hashes = {rs["spec"]["template"]["metadata"]["annotations"][key] for rs in both}
    assert hashes == {"aaa", "bbb"}
    assert len({rs["metadata"]["labels"]["pod-template-hash"] for rs in both}) == 2
    # pods are created (and stay Pending: there is no kubelet)
    pods = eventually(
        lambda: cp.kubectl_json("get", "pods", "-n", namespace, "-l", "app=roll")["items"],
        "pods of the Deployment",
    )
    assert all(p["status"].get("phase") == "Pending" for p in pods)


# ---- authentication and RBAC: a ServiceAccount can be given exactly what it needs ---------------


def test_service_account_kubeconfig_is_bound_by_rbac(control_plane: ControlPlane, namespace: str) -> None:
    cp = control_plane
    kubeconfig = cp.service_account_kubeconfig(namespace, "watcher", create=True)
    whoami = cp.kubectl_json("auth", "whoami", kubeconfig=kubeconfig)
    assert whoami["status"]["userInfo"]["username"] == f"system:serviceaccount:{namespace}:watcher"
    denied = cp.kubectl("get", "configmaps", "-n", namespace, kubeconfig=kubeconfig, check=False)
    assert denied.returncode != 0 and "forbidden" in denied.stderr.lower(), denied.stderr
    cp.kubectl(
        "create",
        "role",
        "read-cm",
        "--verb=get,list,watch",
        "--resource=configmaps",
        "-n",
        namespace,
    )
    cp.kubectl(
        "create",
        "rolebinding",
        "read-cm",
        "--role=read-cm",
        f"--serviceaccount={namespace}:watcher",
        "-n",
        namespace,
    )
    eventually(
        lambda: cp.kubectl("get", "configmaps", "-n", namespace, kubeconfig=kubeconfig, check=False).returncode == 0,
        "RBAC to allow the ServiceAccount",
        timeout=20,
    )
    still_denied = cp.kubectl("get", "secrets", "-n", namespace, kubeconfig=kubeconfig, check=False)
    assert still_denied.returncode != 0


# ---- restarting the API server keeps the data and the session going -----------------------------


def test_restart_apiserver_keeps_state(control_plane: ControlPlane, namespace: str) -> None:
    cp = control_plane
    cp.kubectl("create", "configmap", "survivor", "-n", namespace, "--from-literal=k=v")
    seconds = cp.restart_apiserver()
    assert seconds < 90
    got = cp.kubectl_json("get", "configmap", "survivor", "-n", namespace)
    assert got["data"] == {"k": "v"}


def test_redis_server_answers_on_loopback(tmp_path: Path) -> None:
    with RedisServer(tool("redis-server"), tmp_path) as redis:
        assert redis.command("PING") == b"+PONG\r\n"
        assert redis.command("SET", "wavegen", "1") == b"+OK\r\n"
