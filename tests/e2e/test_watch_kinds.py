"""`wavegen watch` end to end beyond Deployments: --namespace-selector, Argo Rollouts (the real CRD) and a bare ReplicaSet."""

from __future__ import annotations

import os
import secrets
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Watcher
from tests.e2e.test_watch import (
    LIVE,
    LIVE_REFS,
    SECRET_VALUE,
    assert_no_secret_leak,
    bundle,
    deployment,
    eventually_rollouts,
    rollouts,
    set_secret,
    template_annotations,
    transform,
)
from tests.support.controlplane import ControlPlane
from tests.support.tools import REPO_ROOT, in_ci, tools_dir
from tests.support.workloads import opted_in as opted_in_workload
from tests.support.workloads import reads_external_secret

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

WatchFactory = Callable[..., Watcher]
ARGO_ROLLOUTS_CRD_SCRIPT = REPO_ROOT / "hack" / "argo-rollouts-crd.sh"


def wait_until(what: str, check: Callable[[], bool], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def opted_in(kind: str, api_version: str, ns: str, extra_spec: dict[str, Any] | None = None) -> dict[str, Any]:
    """An opted-in workload whose pod template reads Secret 'external' (not in any bundle: the controller's business)."""
    return opted_in_workload(ns, reads_external_secret(), kind=kind, api_version=api_version, extra_spec=extra_spec)


def get(cp: ControlPlane, resource: str, ns: str) -> dict[str, Any]:
    result: dict[str, Any] = cp.kubectl_json("get", resource, "web", "-n", ns)
    return result


def test_namespace_selector_adopts_a_labelled_namespace_without_rollout(
    controller_manager: ControlPlane, namespace: str, watch: WatchFactory
) -> None:
    cp, ns = controller_manager, namespace
    label = f"wavegen-e2e-{secrets.token_hex(3)}"
    set_secret(cp, ns, SECRET_VALUE + "-1")
    cp.apply(transform(bundle(ns, "hello"), ns))
    w = watch([f"--namespace-selector={label}=on", "--window=1"])
    w.wait_idle(settle=2)
    assert LIVE_REFS not in (deployment(cp, ns)["metadata"].get("annotations") or {}), "not selected yet"

    cp.kubectl("label", "namespace", ns, f"{label}=on")
    wait_until("adoption", lambda: LIVE_REFS in (deployment(cp, ns)["metadata"].get("annotations") or {}))
    w.wait_idle(settle=2)
    assert rollouts(cp, ns) == 1, "joining the selection must not roll"
    assert LIVE not in template_annotations(cp, ns)

    set_secret(cp, ns, SECRET_VALUE + "-2")
    eventually_rollouts(cp, ns, 2)
    w.wait_idle(settle=2)
    assert rollouts(cp, ns) == 2
    assert w.metrics()["wavegen_rollouts_total"] == 1
    assert_no_secret_leak(w, cp, ns)


def rollout_crd() -> Path:
    """argoproj/argo-rollouts' published Rollout CRD, fetched through the Go module proxy by hack/argo-rollouts-crd.sh."""
    cached = sorted((tools_dir() / "argo-rollouts").glob("*/rollout-crd.yaml"))
    if cached:
        return cached[-1]
    if in_ci() or os.environ.get("WAVEGEN_FETCH_ARGO_CRD"):
        out = subprocess.run([str(ARGO_ROLLOUTS_CRD_SCRIPT)], capture_output=True, text=True, timeout=600)
        if out.returncode == 0:
            return Path(out.stdout.strip())
        pytest.fail(f"hack/argo-rollouts-crd.sh failed:\n{out.stderr}", pytrace=False)
    pytest.skip("the Argo Rollouts CRD is not cached; run hack/argo-rollouts-crd.sh")


def test_argo_rollout_is_patched_once_per_change(controller_manager: ControlPlane, namespace: str, watch: WatchFactory) -> None:
    cp, ns = controller_manager, namespace
    crd = rollout_crd()
    cp.kubectl("apply", "--server-side", "--force-conflicts", "-f", str(crd))

    def established() -> bool:
        conditions = (cp.kubectl_json("get", "crd", "rollouts.argoproj.io").get("status") or {}).get("conditions") or []
        return any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions)

    wait_until("the Rollout CRD to be established", established, timeout=60)
    set_secret(cp, ns, SECRET_VALUE + "-1")
    cp.apply(opted_in("Rollout", "argoproj.io/v1alpha1", ns, {"strategy": {"canary": {}}}))
    w = watch([f"--namespaces={ns}", "--window=1", "--kinds=Rollout"])
    w.wait_idle(settle=2)
    rollout = get(cp, "rollouts.argoproj.io", ns)
    assert rollout["metadata"]["annotations"][LIVE_REFS] == "Secret/external"  # adopted, template untouched
    generation = rollout["metadata"]["generation"]

    set_secret(cp, ns, SECRET_VALUE + "-2")
    wait_until("the roll", lambda: w.metrics().get("wavegen_rollouts_total", 0) >= 1)
    w.wait_idle(settle=3)
    rollout = get(cp, "rollouts.argoproj.io", ns)
    assert rollout["metadata"]["generation"] == generation + 1, "exactly one change to the Rollout's spec"
    assert LIVE in rollout["spec"]["template"]["metadata"]["annotations"]
    m = w.metrics()
    assert m['wavegen_patches_total{action="roll"}'] == 1 and m["wavegen_rollouts_total"] == 1
    assert_no_secret_leak_in(w, rollout)


def test_bare_replicaset_is_patched_once_per_change(
    controller_manager: ControlPlane, namespace: str, watch: WatchFactory
) -> None:
    cp, ns = controller_manager, namespace
    set_secret(cp, ns, SECRET_VALUE + "-1")
    cp.apply(opted_in("ReplicaSet", "apps/v1", ns))
    w = watch([f"--namespaces={ns}", "--window=1", "--kinds=ReplicaSet"])
    w.wait_idle(settle=2)
    rs = get(cp, "replicaset", ns)
    assert rs["metadata"]["annotations"][LIVE_REFS] == "Secret/external"
    generation = rs["metadata"]["generation"]

    # No Deployment controller makes a new ReplicaSet: count the template changes instead.
    set_secret(cp, ns, SECRET_VALUE + "-2")
    wait_until("the roll", lambda: w.metrics().get("wavegen_rollouts_total", 0) >= 1)
    w.wait_idle(settle=3)
    rs = get(cp, "replicaset", ns)
    assert rs["metadata"]["generation"] == generation + 1
    assert LIVE in rs["spec"]["template"]["metadata"]["annotations"]
    m = w.metrics()
    assert m['wavegen_patches_total{action="roll"}'] == 1 and m["wavegen_rollouts_total"] == 1
    assert_no_secret_leak_in(w, rs)


def assert_no_secret_leak_in(w: Watcher, obj: dict[str, Any]) -> None:
    import base64
    import json

    seen = [w.text(), json.dumps(obj)]
    for suffix in ("-1", "-2"):
        value = SECRET_VALUE + suffix
        for needle in (value, base64.b64encode(value.encode()).decode()):
            assert all(needle not in text for text in seen), needle
