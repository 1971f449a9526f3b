"""`wavegen watch` against a real kube-apiserver + kube-controller-manager, counting ReplicaSets as rollouts."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from tests.e2e.conftest import Watcher
from tests.support.controlplane import ControlPlane
from tests.support.workloads import opted_in

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

LIVE = "wavegen.io/live-hash"
LIVE_REFS = "wavegen.io/live-refs"
LIVE_MISSING = "wavegen.io/live-missing"
CONFIG_HASH = "wavegen.io/config-hash"
UNHASHED = "wavegen.io/unhashed-refs"
SECRET_VALUE = "hunter2-do-not-log"

WatchFactory = Callable[..., Watcher]


# ---- helpers ----------------------------------------------------------------------


def bundle(ns: str, value: str, *, external: bool = True, late: bool = False) -> str:
    """A rendered bundle: ConfigMap 'bundled' and an opted-in Deployment 'web' that also reads sources not in it."""
    env_from: list[dict[str, Any]] = [{"configMapRef": {"name": "bundled"}}]
    if external:
        env_from.append({"secretRef": {"name": "external"}})
    if late:
        env_from.append({"configMapRef": {"name": "late"}})
    docs = [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bundled", "namespace": ns}, "data": {"greeting": value}},
        opted_in(ns, {"containers": [{"name": "app", "image": "registry.invalid/app:1", "envFrom": env_from}]}),
    ]
    return "---\n".join(yaml.safe_dump(d, sort_keys=False) for d in docs)


def transform(text: str, ns: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "wavegen", "transform", "-n", ns, "--missing", "ignore"],
        input=text, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return proc.stdout


def set_secret(cp: ControlPlane, ns: str, value: str, name: str = "external") -> None:
    cp.apply(
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": ns}, "stringData": {"password": value}}
    )


def set_configmap(cp: ControlPlane, ns: str, name: str, value: str) -> None:
    cp.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns}, "data": {"k": value}})


def deployment(cp: ControlPlane, ns: str, name: str = "web") -> dict[str, Any]:
    result: dict[str, Any] = cp.kubectl_json("get", "deployment", name, "-n", ns)
    return result


def rollouts(cp: ControlPlane, ns: str, name: str = "web", timeout: float = 30) -> int:
    """ReplicaSets owned by the Deployment, once the controller manager has observed its latest generation."""
    deadline = time.monotonic() + timeout
    while True:
        dep = deployment(cp, ns, name)
        if dep.get("status", {}).get("observedGeneration", 0) >= dep["metadata"]["generation"]:
            break
        if time.monotonic() > deadline:
            raise AssertionError(f"deployment {ns}/{name} never observed generation {dep['metadata']['generation']}")
        time.sleep(0.2)
    uid = dep["metadata"]["uid"]
    items = cp.kubectl_json("get", "replicasets", "-n", ns)["items"]
    return sum(1 for rs in items if any(o.get("uid") == uid for o in rs["metadata"].get("ownerReferences") or []))


def eventually_rollouts(cp: ControlPlane, ns: str, expected: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    count = rollouts(cp, ns)
    while count < expected and time.monotonic() < deadline:
        time.sleep(0.3)
        count = rollouts(cp, ns)
    assert count == expected, f"expected {expected} ReplicaSets, saw {count}"


def template_annotations(cp: ControlPlane, ns: str) -> dict[str, str]:
    result: dict[str, str] = deployment(cp, ns)["spec"]["template"]["metadata"].get("annotations") or {}
    return result


def events_for(cp: ControlPlane, ns: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = cp.kubectl_json("get", "events.events.k8s.io", "-n", ns)["items"]
    return [e for e in items if e.get("reportingController") == "wavegen.io/watch"]


def assert_no_secret_leak(w: Watcher, cp: ControlPlane, ns: str) -> None:
    """No Secret value, raw or base64, in the controller's logs, its Events or the workload it patched."""
    import base64

    seen = [w.text(), json.dumps(events_for(cp, ns)), json.dumps(deployment(cp, ns))]
    for suffix in ("-1", "-2", "-3", ""):
        value = SECRET_VALUE + suffix
        for needle in (value, base64.b64encode(value.encode()).decode()):
            assert all(needle not in text for text in seen), needle


def setup_external(cp: ControlPlane, ns: str, watch: WatchFactory, *extra: str, window: float = 1.0) -> Watcher:
    """Bundle with an external Secret: applied, adopted (no rollout); returns the running watcher."""
    set_secret(cp, ns, SECRET_VALUE + "-1")
    cp.apply(transform(bundle(ns, "hello"), ns))
    w = watch([f"--namespaces={ns}", f"--window={window}", *extra])
    w.wait_idle(settle=window + 1)
    assert rollouts(cp, ns) == 1
    return w


# ---- coexistence with the offline transformer and GitOps ---------------------------


def test_offline_bundle_is_left_alone_and_bundle_change_rolls_once(
    controller_manager: ControlPlane, namespace: str, watch: WatchFactory
) -> None:
    cp, ns = controller_manager, namespace
    cp.apply(transform(bundle(ns, "hello", external=False), ns))
    w = watch([f"--namespaces={ns}", "--window=1"])
    w.wait_idle(settle=2)
    assert rollouts(cp, ns) == 1
    dep = deployment(cp, ns)
    assert LIVE not in template_annotations(cp, ns) and LIVE not in (dep["metadata"].get("annotations") or {})
    before = template_annotations(cp, ns)[CONFIG_HASH]

    # A ConfigMap change in the bundle ships with its new offline hash: the bundle rolls, the controller stays out.
    cp.apply(transform(bundle(ns, "bonjour", external=False), ns))
    eventually_rollouts(cp, ns, 2)
    w.wait_idle(settle=2)
    assert rollouts(cp, ns) == 2
    assert template_annotations(cp, ns)[CONFIG_HASH] != before
    assert w.metrics().get("wavegen_patches_total", 0) == 0


def test_live_change_rolls_once_and_gitops_resync_keeps_it(
    controller_manager: ControlPlane, namespace: str, watch: WatchFactory
) -> None:
    cp, ns = controller_manager, namespace
    w = setup_external(cp, ns, watch)
    dep = deployment(cp, ns)
    assert template_annotations(cp, ns)[UNHASHED] == "Secret/external"
    assert dep["metadata"]["annotations"][LIVE_REFS] == "Secret/external"  # adopted on metadata: no rollout
    assert LIVE not in template_annotations(cp, ns)

    set_secret(cp, ns, SECRET_VALUE + "-2")
    eventually_rollouts(cp, ns, 2)
    w.wait_idle(settle=2)
    assert rollouts(cp, ns) == 2
    live = template_annotations(cp, ns)[LIVE]
    assert w.metrics()["wavegen_rollouts_total"] == 1
    notes = [e.get("note", "") for e in events_for(cp, ns)]
    assert any(f"Secret {ns}/external" in n for n in notes), (notes, w.tail())
    assert_no_secret_leak(w, cp, ns)

    # GitOps sync of the unchanged bundle, client-side then server-side apply: nothing reverts, nothing rolls.
    text = transform(bundle(ns, "hello"), ns)
    cp.apply(text)
    cp.kubectl("apply", "--server-side", "--field-manager=gitops", "-f", "-", input=text)
    w.wait_idle(settle=2)
    assert rollouts(cp, ns) == 2
    assert template_annotations(cp, ns)[LIVE] == live
    assert w.metrics()["wavegen_rollouts_total"] == 1


def test_restart_is_silent_and_changes_while_down_roll_once(
    controller_manager: ControlPlane, namespace: str, watch: WatchFactory
) -> None:
    cp, ns = controller_manager, namespace
    w = setup_external(cp, ns, watch)
    set_secret(cp, ns, SECRET_VALUE + "-2")
    eventually_rollouts(cp, ns, 2)
    w.stop()

    w.start()
    w.wait_idle(settle=2)
    assert rollouts(cp, ns) == 2
    assert w.metrics().get("wavegen_patches_total", 0) == 0, "a restart must write nothing"
    w.stop()

    set_secret(cp, ns, SECRET_VALUE + "-3")
    w.start()
    eventually_rollouts(cp, ns, 3)
    w.wait_idle(settle=2)
    assert rollouts(cp, ns) == 3
    assert w.metrics()["wavegen_rollouts_total"] == 1


def test_burst_within_window_rolls_once(controller_manager: ControlPlane, namespace: str, watch: WatchFactory) -> None:
    cp, ns = controller_manager, namespace
    w = setup_external(cp, ns, watch, window=3.0)
    for i in range(5):
        set_secret(cp, ns, f"{SECRET_VALUE}-burst-{i}")
    eventually_rollouts(cp, ns, 2)
    w.wait_idle(settle=4)
    assert rollouts(cp, ns) == 2
    m = w.metrics()
    assert m["wavegen_rollouts_total"] == 1
    assert m['wavegen_changes_seen_total{kind="Secret"}'] >= 5


def test_late_reference_adopts_without_rollout_and_a_recreated_one_is_compared(
    controller_manager: ControlPlane, namespace: str, watch: WatchFactory
) -> None:
    cp, ns = controller_manager, namespace
    set_secret(cp, ns, SECRET_VALUE)
    cp.apply(transform(bundle(ns, "hello", late=True), ns))
    w = watch([f"--namespaces={ns}", "--window=1"])
    w.wait_idle(settle=2)
    assert rollouts(cp, ns) == 1
    assert template_annotations(cp, ns)[UNHASHED] == "ConfigMap/late,Secret/external"
    assert deployment(cp, ns)["metadata"]["annotations"][LIVE_MISSING] == "ConfigMap/late"

    # It arrives: the pods could not start without it and read it now, so no rollout; the record is updated.
    set_configmap(cp, ns, "late", "v1")
    w.wait_idle(settle=2)
    assert rollouts(cp, ns) == 1
    assert LIVE_MISSING not in deployment(cp, ns)["metadata"]["annotations"]

    # Deleted: rolling would start pods that cannot start, so the controller holds.
    cp.kubectl("delete", "configmap", "late", "-n", ns)
    w.wait_idle(settle=2)
    assert rollouts(cp, ns) == 1
    assert w.metrics()["wavegen_holds_total"] >= 1
    assert any(e.get("reason") == "MissingConfig" for e in events_for(cp, ns))
    # Back with the same data: compared with the record, same hash, nothing to do.
    set_configmap(cp, ns, "late", "v1")
    w.wait_idle(settle=2)
    assert rollouts(cp, ns) == 1
    # Deleted and recreated with other data: it existed before, so this is a real change: one rollout.
    cp.kubectl("delete", "configmap", "late", "-n", ns)
    w.wait_idle(settle=2)
    set_configmap(cp, ns, "late", "v2")
    eventually_rollouts(cp, ns, 2)
    w.wait_idle(settle=2)
    assert rollouts(cp, ns) == 2
    assert w.metrics()["wavegen_rollouts_total"] == 1


def test_dry_run_writes_nothing(controller_manager: ControlPlane, namespace: str, watch: WatchFactory) -> None:
    cp, ns = controller_manager, namespace
    set_secret(cp, ns, SECRET_VALUE)
    cp.apply(transform(bundle(ns, "hello"), ns))
    w = watch([f"--namespaces={ns}", "--window=0", "--dry-run"])
    w.wait_idle(settle=1)
    assert LIVE_REFS not in (deployment(cp, ns)["metadata"].get("annotations") or {})
    assert w.metrics()['wavegen_dry_run_decisions_total{action="adopt"}'] == 1
    assert any(r.get("msg") == "dry run: would patch" for r in w.records())


# ---- install manifests: exactly that RBAC, as that ServiceAccount --------------------


@pytest.mark.parametrize("scope", ["namespace", "cluster"])
def test_rendered_rbac_is_enough(controller_manager: ControlPlane, namespace: str, watch: WatchFactory, scope: str) -> None:
    cp, ns = controller_manager, namespace
    ctl_ns = f"{ns}-ctl"[:63]
    name = f"wavegen-{scope}"
    cp.kubectl("create", "namespace", ctl_ns)
    try:
        rendered = subprocess.run(
            [sys.executable, "-m", "wavegen", "manifests", "-n", ctl_ns, "--name", name, "--scope", scope, "--replicas", "2",
             "--", f"--namespaces={ns}", "--window=1"],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        docs = [d for d in yaml.safe_load_all(rendered) if d]
        kinds = [d["kind"] for d in docs]
        assert "PodDisruptionBudget" in kinds and ("ClusterRole" in kinds) == (scope == "cluster")
        cp.apply(rendered)
        args = next(d for d in docs if d["kind"] == "Deployment")["spec"]["template"]["spec"]["containers"][0]["args"]
        assert args[0] == "watch"
        kubeconfig = cp.service_account_kubeconfig(ctl_ns, name)

        set_secret(cp, ns, SECRET_VALUE + "-1")
        cp.apply(transform(bundle(ns, "hello"), ns))
        w = watch(args[1:], kubeconfig=kubeconfig)
        w.wait_idle(settle=2)
        set_secret(cp, ns, SECRET_VALUE + "-2")
        eventually_rollouts(cp, ns, 2)
        w.wait_idle(settle=2)
        assert rollouts(cp, ns) == 2
        # A refused request is logged with its status (and the API server's reason "Forbidden");
        # a bare "403" would also match a random port in the command line or the server address.
        refused = [r for r in w.records() if 403 in (r.get("status"), r.get("code"))]
        assert not refused and "Forbidden" not in w.text(), w.tail()
        assert w.metrics().get("wavegen_errors_total", 0) == 0, w.tail()
        assert events_for(cp, ns), "the Event must be created with the rendered RBAC"
        lease = cp.kubectl_json("get", "lease", name, "-n", ctl_ns)
        assert lease["spec"]["holderIdentity"]
        assert_no_secret_leak(w, cp, ns)
    finally:
        cp.kubectl("delete", "namespace", ctl_ns, "--wait=false", check=False)
        if scope == "cluster":
            cp.kubectl("delete", "clusterrole,clusterrolebinding", name, "--ignore-not-found", check=False)


# ---- high availability and a restarting API server ---------------------------------


def test_leader_election_standby_does_nothing(controller_manager: ControlPlane, namespace: str, watch: WatchFactory) -> None:
    cp, ns = controller_manager, namespace
    set_secret(cp, ns, SECRET_VALUE + "-1")
    cp.apply(transform(bundle(ns, "hello"), ns))
    ha = [f"--namespaces={ns}", "--window=1", "--leader-elect", f"--lease-namespace={ns}",
          "--lease-duration=6", "--renew-deadline=4", "--retry-period=1"]  # fmt: skip
    first = watch(ha)
    first.wait_idle(settle=1)
    second = watch(ha)
    time.sleep(2)
    assert first.metrics()["wavegen_is_leader"] == 1 and second.metrics()["wavegen_is_leader"] == 0
    set_secret(cp, ns, SECRET_VALUE + "-2")
    eventually_rollouts(cp, ns, 2)
    first.wait_idle(settle=2)
    assert rollouts(cp, ns) == 2
    assert second.metrics().get("wavegen_patches_total", 0) == 0

    assert first.stop() == 0  # releases the lease: the standby takes over without waiting for expiry
    deadline = time.monotonic() + 20
    while second.metrics().get("wavegen_is_leader") != 1 and time.monotonic() < deadline:
        time.sleep(0.3)
    second.wait_idle(settle=2)
    assert rollouts(cp, ns) == 2, "a new leader must not roll anything"
    set_secret(cp, ns, SECRET_VALUE + "-3")
    eventually_rollouts(cp, ns, 3)
    second.wait_idle(settle=2)
    assert rollouts(cp, ns) == 3


def test_survives_apiserver_restart(controller_manager: ControlPlane, namespace: str, watch: WatchFactory) -> None:
    cp, ns = controller_manager, namespace
    w = setup_external(cp, ns, watch)
    cp.restart_apiserver(downtime=2)
    set_secret(cp, ns, SECRET_VALUE + "-2")
    eventually_rollouts(cp, ns, 2, timeout=60)
    w.wait_idle(settle=2)
    assert rollouts(cp, ns) == 2
    m = w.metrics()
    assert m["wavegen_watch_restarts_total"] >= 1
    assert m["wavegen_rollouts_total"] == 1
    assert w.proc is not None and w.proc.poll() is None
