"""The chart installed by real helm 3 and helm 4 on a real API server: its RBAC is enough, upgrade, and a clean uninstall."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.test_watch import (
    SECRET_VALUE,
    WatchFactory,
    assert_no_secret_leak,
    bundle,
    eventually_rollouts,
    rollouts,
    set_secret,
    transform,
)
from tests.support.controlplane import ControlPlane
from tests.support.tools import REPO_ROOT, tool

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

CHART = REPO_ROOT / "charts" / "wavegen"
# What a release can leave behind, namespaced and cluster-wide.
NAMESPACED = "serviceaccounts,roles,rolebindings,deployments,services,poddisruptionbudgets,leases"
CLUSTER_WIDE = "clusterroles,clusterrolebindings"


def helm(helm_name: str, cp: ControlPlane, *args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [tool(helm_name), "--kubeconfig", str(cp.kubeconfig), *args], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def can_i(cp: ControlPlane, sa: str, verb: str, resource: str, ns: str) -> bool:
    proc = cp.kubectl("auth", "can-i", verb, resource, "-n", ns, f"--as={sa}", check=False)
    return proc.stdout.strip() == "yes"


def release_objects(cp: ControlPlane, release: str) -> list[str]:
    selector = f"app.kubernetes.io/instance={release}"
    found = cp.kubectl("get", NAMESPACED, "-A", "-l", selector, "-o", "name").stdout.split()
    found += cp.kubectl("get", CLUSTER_WIDE, "-l", selector, "-o", "name").stdout.split()
    return found


def controller_args(cp: ControlPlane, ns: str, name: str) -> list[str]:
    dep: dict[str, Any] = cp.kubectl_json("get", "deployment", name, "-n", ns)
    args: list[str] = dep["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[0] == "watch"
    return args[1:]


@pytest.mark.parametrize("helm_name", ["helm3", "helm4"])
def test_install_adopt_roll_upgrade_uninstall(
    helm_name: str, controller_manager: ControlPlane, namespace: str, watch: WatchFactory, tmp_path: Path
) -> None:
    cp, app_ns = controller_manager, namespace
    release = f"wg-{helm_name}"
    install_ns = f"{app_ns}-sys"[:63]
    values = tmp_path / "values.yaml"
    values.write_text(yaml.safe_dump({"watchNamespaces": [app_ns], "extraArgs": ["--window", "1"]}))
    try:
        helm(helm_name, cp, "install", release, str(CHART), "-n", install_ns, "--create-namespace", "-f", str(values))
        sa = f"system:serviceaccount:{install_ns}:{release}"
        assert can_i(cp, sa, "patch", "deployments", app_ns)
        assert can_i(cp, sa, "watch", "secrets", app_ns)
        for verb in ("create", "update", "patch", "delete", "get"):
            assert not can_i(cp, sa, verb, "secrets", app_ns), verb
        assert not can_i(cp, sa, "create", "pods", app_ns)
        assert not can_i(cp, sa, "create", "pods", install_ns)
        assert not can_i(cp, sa, "update", "leases", "default")

        # The controller as the chart configures it, run from the host as the chart's ServiceAccount.
        kubeconfig = cp.service_account_kubeconfig(install_ns, release)
        set_secret(cp, app_ns, SECRET_VALUE + "-1")
        cp.apply(transform(bundle(app_ns, "hello"), app_ns))
        w = watch(controller_args(cp, install_ns, release), kubeconfig=kubeconfig)
        w.wait_idle(settle=2)
        assert rollouts(cp, app_ns) == 1  # adopted without a rollout
        set_secret(cp, app_ns, SECRET_VALUE + "-2")
        eventually_rollouts(cp, app_ns, 2)
        w.wait_idle(settle=2)
        assert rollouts(cp, app_ns) == 2
        assert "Forbidden" not in w.text() and w.metrics().get("wavegen_errors_total", 0) == 0, w.tail()
        lease = cp.kubectl_json("get", "lease", release, "-n", install_ns)
        assert lease["spec"]["holderIdentity"]  # the chart's Lease, taken by the controller
        assert_no_secret_leak(w, cp, app_ns)

        helm(helm_name, cp, "upgrade", release, str(CHART), "-n", install_ns, "-f", str(values), "--set", "replicas=2")
        dep = cp.kubectl_json("get", "deployment", release, "-n", install_ns)
        assert dep["spec"]["replicas"] == 2
        cp.kubectl_json("get", "poddisruptionbudget", release, "-n", install_ns)
        lease = cp.kubectl_json("get", "lease", release, "-n", install_ns)
        assert lease["spec"]["holderIdentity"]  # the upgrade left the controller's hold alone
        w.stop()
    finally:
        subprocess.run(
            [tool(helm_name), "--kubeconfig", str(cp.kubeconfig), "uninstall", release, "-n", install_ns, "--wait"],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    assert release_objects(cp, release) == []
    assert cp.kubectl("get", "lease", release, "-n", install_ns, check=False).returncode != 0
    cp.kubectl("delete", "namespace", install_ns, "--wait=false", check=False)


ROLLS = 'wavegen_patches_total{action="roll"}'


def test_two_shards_roll_only_their_own_namespaces_and_hand_over_on_relabel(
    controller_manager: ControlPlane, namespace: str, watch: WatchFactory, tmp_path: Path
) -> None:
    cp = controller_manager
    ns_a, ns_b, install_ns = namespace, f"{namespace}-b"[:63], f"{namespace}-sys"[:63]
    release = "wg-shards"
    label = "wavegen-e2e/shard"
    values = tmp_path / "values.yaml"
    values.write_text(
        yaml.safe_dump(
            {
                "shards": [{"name": s, "namespaceSelector": f"{label}={s}"} for s in ("a", "b")],
                "extraArgs": ["--window", "1"],
            }
        )
    )
    cp.kubectl("create", "namespace", ns_b)
    try:
        helm("helm3", cp, "install", release, str(CHART), "-n", install_ns, "--create-namespace", "-f", str(values))
        cp.kubectl("label", "namespace", ns_a, f"{label}=a")
        cp.kubectl("label", "namespace", ns_b, f"{label}=b")
        for ns in (ns_a, ns_b):
            set_secret(cp, ns, SECRET_VALUE + "-1")
            cp.apply(transform(bundle(ns, "hello"), ns))
        kubeconfig = cp.service_account_kubeconfig(install_ns, release)
        shard = {s: watch(controller_args(cp, install_ns, f"{release}-{s}"), kubeconfig=kubeconfig) for s in ("a", "b")}
        for w in shard.values():
            w.wait_idle(settle=2)
        assert (rollouts(cp, ns_a), rollouts(cp, ns_b)) == (1, 1)

        set_secret(cp, ns_a, SECRET_VALUE + "-2")
        eventually_rollouts(cp, ns_a, 2)
        for w in shard.values():
            w.wait_idle(settle=2)
        assert (rollouts(cp, ns_a), rollouts(cp, ns_b)) == (2, 1)
        assert (shard["a"].metrics().get(ROLLS, 0), shard["b"].metrics().get(ROLLS, 0)) == (1, 0)

        set_secret(cp, ns_b, SECRET_VALUE + "-2")
        eventually_rollouts(cp, ns_b, 2)
        for w in shard.values():
            w.wait_idle(settle=2)
        assert (rollouts(cp, ns_a), rollouts(cp, ns_b)) == (2, 2)
        assert (shard["a"].metrics().get(ROLLS, 0), shard["b"].metrics().get(ROLLS, 0)) == (1, 1)

        # Namespace A moves to shard b: b takes it over without a rollout, a lets it go.
        cp.kubectl("label", "namespace", ns_a, f"{label}=b", "--overwrite")
        for w in shard.values():
            w.wait_idle(settle=3)
        assert (rollouts(cp, ns_a), rollouts(cp, ns_b)) == (2, 2)
        patches = {s: w.metrics().get("wavegen_patches_total", 0) for s, w in shard.items()}
        set_secret(cp, ns_a, SECRET_VALUE + "-3")
        eventually_rollouts(cp, ns_a, 3)
        for w in shard.values():
            w.wait_idle(settle=2)
        assert rollouts(cp, ns_a) == 3
        assert shard["a"].metrics().get("wavegen_patches_total", 0) == patches["a"]  # released
        assert shard["b"].metrics().get(ROLLS, 0) == 2  # taken over
        for w in shard.values():
            assert "Forbidden" not in w.text(), w.tail()
            w.stop()
        assert_no_secret_leak(shard["b"], cp, ns_a)
    finally:
        subprocess.run(
            [tool("helm3"), "--kubeconfig", str(cp.kubeconfig), "uninstall", release, "-n", install_ns, "--wait"],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        for ns in (ns_b, install_ns):
            cp.kubectl("delete", "namespace", ns, "--wait=false", check=False)
