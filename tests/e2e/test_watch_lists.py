"""`wavegen watch` reading lists item by item: Secrets over several list pages on a real API server, one roll per change."""

from __future__ import annotations

import base64
import os

import pytest
import yaml

from tests.e2e.conftest import Watcher
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

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

# The controller lists 500 items per page; 1,200 Secrets are three pages, and the referenced
# one ("external") sorts after every "filler-*" name, so it arrives on the last page.
FILLERS = 1200


def fillers(ns: str) -> str:
    blob = base64.b64encode(os.urandom(2048)).decode()
    docs = [
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": f"filler-{i:04d}", "namespace": ns}, "data": {"b": blob}}
        for i in range(FILLERS)
    ]
    return yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": docs})


def test_sources_over_several_pages_are_indexed_and_roll_once(
    controller_manager: ControlPlane, namespace: str, watch: WatchFactory
) -> None:
    cp, ns = controller_manager, namespace
    cp.apply(fillers(ns), "--server-side")
    set_secret(cp, ns, SECRET_VALUE + "-1")
    cp.apply(transform(bundle(ns, "hello"), ns))
    w: Watcher = watch([f"--namespaces={ns}", "--window=0.5"])
    w.wait_idle(settle=1.5)
    assert rollouts(cp, ns) == 1  # adopted, not rolled

    listed = w.metrics()
    # Of 1,201 Secrets over three pages only the one the workload reads from outside its bundle
    # is kept (as digests); the bundled ConfigMap is covered by the offline hash.
    assert listed.get("wavegen_sources_indexed") == 1, listed
    assert "error" not in w.text().lower(), w.tail()

    set_secret(cp, ns, SECRET_VALUE + "-2")
    eventually_rollouts(cp, ns, 2)
    cp.apply(fillers(ns), "--server-side")  # unrelated Secrets change: nothing rolls
    w.stop()
    # A restart relists all three pages and finds nothing to do.
    w.start()
    w.wait_idle(settle=1.5)
    assert rollouts(cp, ns) == 2
    assert w.metrics().get("wavegen_patches_total", 0) == 0
    assert_no_secret_leak(w, cp, ns)
