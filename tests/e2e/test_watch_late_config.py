"""`wavegen watch` when required config arrives after its workload: no extra rollout (ReplicaSets counted by kcm)."""

from __future__ import annotations

import base64
import time
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from tests.e2e.conftest import Watcher
from tests.e2e.test_watch import (
    LIVE,
    LIVE_MISSING,
    SECRET_VALUE,
    assert_no_secret_leak,
    deployment,
    events_for,
    eventually_rollouts,
    rollouts,
    template_annotations,
    transform,
)
from tests.support.controlplane import ControlPlane
from tests.support.workloads import opted_in

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

WatchFactory = Callable[..., Watcher]


def web(ns: str, container: dict[str, Any], volumes: list[dict[str, Any]] | None = None) -> str:
    """A bundle: ConfigMap 'bundled' (covered by the offline hash) and an opted-in Deployment reading more than that."""
    container = {"name": "app", "image": "registry.invalid/app:1", **container}
    container.setdefault("envFrom", []).insert(0, {"configMapRef": {"name": "bundled"}})
    spec: dict[str, Any] = {"containers": [container]}
    if volumes:
        spec["volumes"] = volumes
    docs = [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bundled", "namespace": ns}, "data": {"a": "1"}},
        opted_in(ns, spec),
    ]
    return transform("---\n".join(yaml.safe_dump(d, sort_keys=False) for d in docs), ns)


def configmap(cp: ControlPlane, ns: str, name: str, data: dict[str, str]) -> None:
    cp.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns}, "data": data})


def secret(cp: ControlPlane, ns: str, name: str, data: dict[str, str]) -> None:
    encoded = {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}
    cp.apply({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": ns}, "data": encoded})


# variant -> (container fields, volumes, missing record, create the source with a value)
VARIANTS: dict[str, tuple[dict[str, Any], list[dict[str, Any]], str, Callable[[ControlPlane, str, str], None]]] = {
    "configmap-envFrom": (
        {"envFrom": [{"configMapRef": {"name": "late"}}]},
        [],
        "ConfigMap/late",
        lambda cp, ns, value: configmap(cp, ns, "late", {"k": value}),
    ),
    "secret-volume": (
        {"volumeMounts": [{"name": "creds", "mountPath": "/creds"}]},
        [{"name": "creds", "secret": {"secretName": "late"}}],
        "Secret/late",
        lambda cp, ns, value: secret(cp, ns, "late", {"password": value}),
    ),
    "env-secretKeyRef": (
        {"env": [{"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "late", "key": "password"}}}]},
        [],
        "Secret/late",
        lambda cp, ns, value: secret(cp, ns, "late", {"password": value}),
    ),
}


def wait_for_record(cp: ControlPlane, ns: str, key: str, timeout: float = 30) -> dict[str, str]:
    deadline = time.monotonic() + timeout
    while True:
        annotations: dict[str, str] = deployment(cp, ns)["metadata"].get("annotations") or {}
        if key in annotations:
            return annotations
        if time.monotonic() > deadline:
            raise AssertionError(f"no {key} on deployment {ns}/web: {annotations}")
        time.sleep(0.2)


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_required_config_applied_5s_after_its_deployment_does_not_roll(
    controller_manager: ControlPlane, namespace: str, watch: WatchFactory, variant: str
) -> None:
    cp, ns = controller_manager, namespace
    container, volumes, record, create = VARIANTS[variant]
    w = watch([f"--namespaces={ns}", "--window=1"])
    applied = time.monotonic()
    cp.apply(web(ns, container, volumes))
    annotations = wait_for_record(cp, ns, LIVE_MISSING)
    assert annotations[LIVE_MISSING] == record
    notes = [e.get("note", "") for e in events_for(cp, ns) if e.get("reason") == "MissingConfig"]
    assert any(f"{record.split('/')[0]} {ns}/late" in n and f"Deployment {ns}/web" in n for n in notes), notes

    time.sleep(max(0.0, 5 - (time.monotonic() - applied)))
    create(cp, ns, SECRET_VALUE + "-1")
    w.wait_idle(settle=2)
    assert rollouts(cp, ns) == 1, w.tail()
    assert LIVE_MISSING not in deployment(cp, ns)["metadata"]["annotations"]
    assert LIVE not in template_annotations(cp, ns)

    # A later real change rolls, once.
    create(cp, ns, SECRET_VALUE + "-2")
    eventually_rollouts(cp, ns, 2)
    w.wait_idle(settle=2)
    assert rollouts(cp, ns) == 2
    assert w.metrics()["wavegen_rollouts_total"] == 1
    assert_no_secret_leak(w, cp, ns)


def test_missing_key_holds_warns_and_its_arrival_does_not_roll(
    controller_manager: ControlPlane, namespace: str, watch: WatchFactory
) -> None:
    cp, ns = controller_manager, namespace
    configmap(cp, ns, "app", {"a": "1"})
    w = watch([f"--namespaces={ns}", "--window=1"])
    container = {
        "env": [{"name": "B", "valueFrom": {"configMapKeyRef": {"name": "app", "key": "b"}}}],
        "volumeMounts": [{"name": "app", "mountPath": "/app"}],
    }
    volumes = [{"name": "app", "configMap": {"name": "app", "items": [{"key": "a", "path": "a"}, {"key": "b", "path": "b"}]}}]
    cp.apply(web(ns, container, volumes))
    annotations = wait_for_record(cp, ns, LIVE_MISSING)
    assert annotations[LIVE_MISSING] == "ConfigMap/app:b"
    w.wait_idle(settle=2)
    notes = [e.get("note", "") for e in events_for(cp, ns) if e.get("reason") == "MissingConfig"]
    assert any(f"ConfigMap {ns}/app key b" in n and f"Deployment {ns}/web" in n for n in notes), notes
    assert rollouts(cp, ns) == 1
    adopted = w.metrics().get("wavegen_patches_total", 0)

    # A visible key changes while 'b' is still missing: hold, no patch.
    configmap(cp, ns, "app", {"a": "2"})
    w.wait_idle(settle=2)
    assert w.metrics().get("wavegen_patches_total", 0) == adopted
    assert w.metrics()["wavegen_holds_total"] >= 1

    # The key arrives: the pods could not start without it: re-adopted without a rollout.
    configmap(cp, ns, "app", {"a": "2", "b": "x"})
    w.wait_idle(settle=2)
    assert rollouts(cp, ns) == 1, w.tail()
    assert LIVE_MISSING not in deployment(cp, ns)["metadata"]["annotations"]
    # From now on a change rolls.
    configmap(cp, ns, "app", {"a": "2", "b": "y"})
    eventually_rollouts(cp, ns, 2)
    w.wait_idle(settle=2)
    assert rollouts(cp, ns) == 2
    assert w.metrics()["wavegen_rollouts_total"] == 1
