"""Watch-mode plumbing without a cluster: queue, rate limit, index, kubeconfig, metrics, 409/410 handling, manifests."""

from __future__ import annotations

import argparse
import base64
import copy
import hashlib
import queue
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
import yaml

from wavegen.controller.index import CONFIGMAP, SECRET, WORKLOAD_KINDS, Index, trim_workload
from wavegen.controller.kube import ApiError
from wavegen.controller.runtime import Controller
from wavegen.controller.settings import Settings
from wavegen.controller.telemetry import Logger, Metrics
from wavegen.controller.workqueue import RateLimiter, WorkQueue
from wavegen.core.live import LIVE_HASH_ANNOTATION, LIVE_MISSING_ANNOTATION, LIVE_REFS_ANNOTATION
from wavegen.core.model import SourceKey
from wavegen.core.plan import Options
from wavegen.errors import UsageError

OPTS = Options(opt_in=True, missing="ignore")
DEPLOYMENT = WORKLOAD_KINDS["Deployment"]


def deployment(rv: str = "1", annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "namespace": "ns",
            "uid": "u1",
            "resourceVersion": rv,
            "annotations": {"wavegen.io/enabled": "true", "unrelated": "x", **(annotations or {})},
        },
        "spec": {
            "replicas": 3,
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {
                            "name": "a",
                            "image": "i",
                            "env": [{"name": "LIT", "value": "secret-literal"}],
                            "envFrom": [{"configMapRef": {"name": "cfg"}}],
                        }
                    ],
                    "volumes": [{"name": "tmp", "emptyDir": {}}],
                },
            },
        },
    }


def configmap(value: str, rv: str = "1") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cfg", "namespace": "ns", "resourceVersion": rv},
        "data": {"k": value},
    }


# ---- queue and rate limiter ------------------------------------------------------


def test_queue_debounces_within_window_and_caps_delay() -> None:
    q = WorkQueue(window=0.3, cap=0.5)
    stop = threading.Event()
    key = ("Deployment", "ns", "web")
    t0 = time.monotonic()
    q.add(key, 0.3, {SourceKey("ConfigMap", "ns", "a")})
    time.sleep(0.2)
    q.add(key, 0.3, {SourceKey("ConfigMap", "ns", "b")})
    assert len(q) == 1
    item = q.get(stop)
    elapsed = time.monotonic() - t0
    assert item is not None and item[0] == key and len(item[1]) == 2
    assert 0.45 <= elapsed < 0.7  # pushed out by the second change, capped at first + 0.5
    assert len(q) == 0


def test_queue_zero_delay_does_not_pull_a_pending_change_earlier() -> None:
    q = WorkQueue(window=0.3, cap=1.5)
    key = ("Deployment", "ns", "web")
    t0 = time.monotonic()
    q.add(key, 0.3)
    q.add(key, 0)
    assert q.get(threading.Event()) is not None
    assert time.monotonic() - t0 >= 0.28


def test_rate_limiter_paces_after_burst() -> None:
    limiter = RateLimiter(rate=20, burst=2)
    stop = threading.Event()
    t0 = time.monotonic()
    for _ in range(4):
        assert limiter.acquire(stop)
    assert time.monotonic() - t0 >= 0.09  # two tokens at once, then 1/20 s each


# ---- index -----------------------------------------------------------------------


def test_trim_keeps_only_what_the_core_reads() -> None:
    trimmed = trim_workload(deployment(), OPTS)
    text = repr(trimmed)
    assert "secret-literal" not in text and "unrelated" not in text and "replicas" not in text
    assert trimmed["spec"]["template"]["spec"]["containers"][0]["envFrom"] == [{"configMapRef": {"name": "cfg"}}]


def test_index_links_sources_to_workloads_and_ignores_metadata_only_changes() -> None:
    index = Index(OPTS)
    assert index.put_workload(DEPLOYMENT, deployment())
    assert not index.put_workload(DEPLOYMENT, deployment(rv="2"))  # only the resourceVersion moved
    changed, affected = index.put_source(CONFIGMAP, configmap("1"))
    assert changed and affected == {("Deployment", "ns", "web")}
    relabelled = configmap("1", rv="2")
    relabelled["metadata"]["labels"] = {"x": "y"}
    assert index.put_source(CONFIGMAP, relabelled) == (False, set())
    assert index.put_source(CONFIGMAP, configmap("2"))[0]
    assert index.delete_source(CONFIGMAP, "ns", "cfg") == {("Deployment", "ns", "web")}
    not_opted = deployment()
    del not_opted["metadata"]["annotations"]["wavegen.io/enabled"]
    index.put_workload(DEPLOYMENT, not_opted)
    assert index.dependents(SourceKey("ConfigMap", "ns", "cfg")) == set()


def test_relist_reports_changes_and_deletions() -> None:
    index = Index(OPTS)
    index.put_workload(DEPLOYMENT, deployment())
    index.replace_sources(CONFIGMAP, None, [configmap("1")])
    assert index.replace_sources(CONFIGMAP, None, [configmap("1")]) == (0, set())
    assert index.replace_sources(CONFIGMAP, None, []) == (1, {("Deployment", "ns", "web")})
    assert index.replace_workloads(DEPLOYMENT, "ns", []) == set()
    assert index.counts() == (0, 0)


def test_index_keeps_digests_of_referenced_sources_only() -> None:
    index = Index(OPTS)
    index.put_workload(DEPLOYMENT, deployment())
    assert index.put_source(CONFIGMAP, configmap("value-1"))[0]
    assert index.put_source(SECRET, secret("unrelated", "not-referenced")) == (False, set())
    assert list(index.sources) == [SourceKey("ConfigMap", "ns", "cfg")]
    assert index.sources[SourceKey("ConfigMap", "ns", "cfg")].digests == {"k": hashlib.sha256(b"value-1").hexdigest()}
    assert "value-1" not in repr(vars(index))
    # No longer referenced: nothing of it stays.
    not_opted = deployment()
    del not_opted["metadata"]["annotations"]["wavegen.io/enabled"]
    index.put_workload(DEPLOYMENT, not_opted)
    assert index.sources == {} and index.absent == set()


def test_relist_consumes_items_lazily_and_marks_referenced_but_unlisted_absent() -> None:
    index = Index(OPTS)
    index.put_workload(DEPLOYMENT, deployment())
    consumed: list[str] = []

    def items() -> Iterator[dict[str, Any]]:
        for i in range(3):
            consumed.append(f"unrelated-{i}")
            yield secret(f"unrelated-{i}", "x" * 100)

    assert index.replace_sources(SECRET, "ns", items()) == (0, set())
    assert len(consumed) == 3 and index.sources == {}
    assert index.replace_sources(CONFIGMAP, "ns", iter([])) == (0, set())
    assert index.absent == {SourceKey("ConfigMap", "ns", "cfg")}
    assert index.unknown(("Deployment", "ns", "web")) == []


# ---- the controller against a scripted API server --------------------------------------


class FakePage(list[dict[str, Any]]):
    """A list answer as Client.list_page gives it: items, then ``metadata``."""

    metadata: dict[str, Any]


class FakeApi:
    """Answers lists and patches from in-memory objects; watch streams come from a queue of scripted events."""

    def __init__(self) -> None:
        self.objects: dict[str, dict[str, Any]] = {"configmaps": configmap("1"), "deployments": deployment()}
        self.extra: dict[str, list[dict[str, Any]]] = {}  # further list items per resource
        self.queries: list[tuple[str, dict[str, Any]]] = []
        self.patches: list[dict[str, Any]] = []
        self.conflicts = 0
        self.lists: dict[str, int] = {}
        self.streams: dict[str, queue.Queue[dict[str, Any] | Exception | None]] = {}
        self.lock = threading.Lock()

    def stream(self, plural: str) -> queue.Queue[dict[str, Any] | Exception | None]:
        with self.lock:
            return self.streams.setdefault(plural, queue.Queue())

    def list_page(self, path: str, query: Mapping[str, Any]) -> FakePage:
        answer = self.request("GET", path, query)
        page = FakePage(answer["items"])
        page.metadata = answer["metadata"]
        return page

    def request(
        self, method: str, path: str, query: Mapping[str, Any] | None = None, body: Any = None, content_type: str = ""
    ) -> Any:
        plural = path.rstrip("/").split("/")[-1] if method == "GET" and path.endswith("s") else path.split("/")[-2]
        if method == "GET" and plural in ("configmaps", "secrets", "deployments", "statefulsets", "daemonsets", "cronjobs"):
            query = dict(query or {})
            self.queries.append((plural, query))
            obj = self.objects.get(plural)
            items = ([obj] if obj else []) + self.extra.get(plural, [])
            selector = str(query.get("fieldSelector") or "")
            if "metadata.name=" in selector:
                wanted = selector.split("metadata.name=")[1].split(",")[0]
                items = [i for i in items if i["metadata"]["name"] == wanted]
            start = int(query.get("continue") or 0)
            limit = int(query.get("limit") or len(items) or 1)
            if start == 0 and "metadata.name=" not in selector:
                self.lists[plural] = self.lists.get(plural, 0) + 1
            more = start + limit < len(items)
            meta = {"resourceVersion": "10", "continue": str(start + limit) if more else ""}
            return {"metadata": meta, "items": [copy.deepcopy(i) for i in items[start : start + limit]]}
        if method == "GET":
            return self.objects["deployments"]
        if method == "PATCH":
            if self.conflicts:
                self.conflicts -= 1
                raise ApiError(409, "Conflict", "the object has been modified")
            self.patches.append(body)
            dep = self.objects["deployments"]
            assert body["metadata"]["resourceVersion"] == dep["metadata"]["resourceVersion"]
            dep["metadata"]["annotations"].update(body["metadata"]["annotations"])
            if "spec" in body:
                dep["spec"]["template"]["metadata"].setdefault("annotations", {}).update(
                    body["spec"]["template"]["metadata"]["annotations"]
                )
            dep["metadata"]["resourceVersion"] = str(int(dep["metadata"]["resourceVersion"]) + 1)
            return dep
        if method == "POST":
            return {}
        raise AssertionError(f"unexpected {method} {path}")

    def watch(self, path: str, query: Mapping[str, Any], read_timeout: float) -> Iterator[dict[str, Any]]:
        events = self.stream(path.split("/")[-1])
        while True:
            try:
                item = events.get(timeout=0.2)
            except queue.Empty:
                continue
            if item is None:
                return
            if isinstance(item, Exception):
                raise item
            yield item


def wait_for(check: Any, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met")
        time.sleep(0.02)


def secret(name: str, value: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": "ns", "resourceVersion": "1"},
        "data": {"blob": base64.b64encode(value.encode()).decode()},
    }


def start_controller(api: FakeApi, page_size: int = 500) -> Controller:
    settings = Settings(
        namespaces=("ns",), kinds=("Deployment",), window=0.0, backoff_max=0.05, identity="t", page_size=page_size
    )
    controller = Controller(api, settings, OPTS, Logger("error"), Metrics())  # type: ignore[arg-type]
    controller.start()
    return controller


@pytest.fixture
def running() -> Iterator[tuple[FakeApi, Controller]]:
    api = FakeApi()
    controller = start_controller(api)
    yield api, controller
    controller.shutdown()


def test_adopts_then_rolls_once_with_conflict_retry(running: tuple[FakeApi, Controller]) -> None:
    api, controller = running
    wait_for(lambda: len(api.patches) == 1)
    assert "spec" not in api.patches[0]  # adoption never touches the pod template
    assert api.patches[0]["metadata"]["annotations"][LIVE_REFS_ANNOTATION] == "ConfigMap/cfg"
    api.conflicts = 1
    api.objects["configmaps"] = configmap("2", rv="11")
    api.stream("configmaps").put({"type": "MODIFIED", "object": configmap("2", rv="11")})
    wait_for(lambda: len(api.patches) == 2)
    roll = api.patches[1]
    assert (
        roll["spec"]["template"]["metadata"]["annotations"][LIVE_HASH_ANNOTATION]
        == roll["metadata"]["annotations"][LIVE_HASH_ANNOTATION]
    )
    assert controller.metrics.value("wavegen_conflicts_total") == 1
    assert controller.metrics.value("wavegen_rollouts_total") == 1
    # Our own patch comes back as a watch event: no further write.
    api.stream("deployments").put({"type": "MODIFIED", "object": api.objects["deployments"]})
    time.sleep(0.3)
    assert len(api.patches) == 2


def test_gone_watch_relists_and_catches_up(running: tuple[FakeApi, Controller]) -> None:
    api, controller = running
    wait_for(lambda: len(api.patches) == 1)
    lists_before = api.lists["configmaps"]
    api.objects["configmaps"] = configmap("changed-during-gap", rv="20")
    api.stream("configmaps").put({"type": "ERROR", "object": {"kind": "Status", "code": 410, "reason": "Expired"}})
    wait_for(lambda: len(api.patches) == 2)
    assert api.lists["configmaps"] == lists_before + 1
    assert controller.metrics.value("wavegen_watch_restarts_total", resource="configmaps", reason="expired") == 1
    # A dropped connection re-watches (from the last resourceVersion) without a relist.
    api.stream("configmaps").put(ConnectionResetError())
    time.sleep(0.3)
    assert api.lists["configmaps"] == lists_before + 1
    assert controller.metrics.value("wavegen_watch_restarts_total", resource="configmaps", reason="disconnected") == 1


def test_lists_are_paginated_also_on_relist_after_410() -> None:
    api = FakeApi()
    api.extra["secrets"] = [secret(f"unrelated-{i}", "payload") for i in range(5)]
    controller = start_controller(api, page_size=2)
    try:
        wait_for(lambda: len(api.patches) == 1)
        pages = [q for plural, q in api.queries if plural == "secrets"]
        assert [q.get("continue") for q in pages] == ["", "2", "4"] and all(q["limit"] == 2 for q in pages)
        api.stream("secrets").put({"type": "ERROR", "object": {"kind": "Status", "code": 410, "reason": "Expired"}})
        wait_for(lambda: len([q for plural, q in api.queries if plural == "secrets"]) == 6)
        assert [q.get("continue") for plural, q in api.queries if plural == "secrets"][3:] == ["", "2", "4"]
        assert controller.index.counts() == (1, 1)  # the referenced ConfigMap only
    finally:
        controller.shutdown()


def test_no_secret_value_outlives_its_event() -> None:
    import gc

    api = FakeApi()
    api.objects["secrets"] = secret("creds", "listed-value")
    dep = api.objects["deployments"]
    dep["spec"]["template"]["spec"]["containers"][0]["envFrom"].append({"secretRef": {"name": "creds"}})
    controller = start_controller(api)
    try:
        wait_for(lambda: len(api.patches) == 1)
        del api.objects["secrets"]
        api.stream("secrets").put({"type": "MODIFIED", "object": secret("creds", "watched-value")})
        api.stream("secrets").put({"type": "MODIFIED", "object": secret("unrelated", "unreferenced-value")})
        wait_for(lambda: len(api.patches) == 2)  # the referenced change rolled
        time.sleep(0.3)
        gc.collect()
        needles = {base64.b64encode(v.encode()).decode() for v in ("listed-value", "watched-value", "unreferenced-value")}
        # A dict of strings only is not tracked by the collector: look for the (tracked) objects holding it.
        holders = [
            o
            for o in gc.get_objects()
            if isinstance(o, dict) and isinstance(o.get("data"), dict) and needles & set(map(str, o["data"].values()))
        ]
        assert holders == []
        assert SourceKey("Secret", "ns", "unrelated") not in controller.index.sources
    finally:
        controller.shutdown()


def test_source_referenced_after_its_list_item_went_by_is_fetched() -> None:
    api = FakeApi()
    api.extra["configmaps"] = [{**configmap("v"), "metadata": {"name": "later", "namespace": "ns", "resourceVersion": "3"}}]
    controller = start_controller(api)
    try:
        wait_for(lambda: len(api.patches) == 1)
        assert SourceKey("ConfigMap", "ns", "later") not in controller.index.sources
        changed = copy.deepcopy(api.objects["deployments"])
        changed["spec"]["template"]["spec"]["containers"][0]["envFrom"].append({"configMapRef": {"name": "later"}})
        api.objects["deployments"] = changed
        api.stream("deployments").put({"type": "MODIFIED", "object": changed})
        wait_for(lambda: len(api.patches) == 2)
        assert ("configmaps", {"fieldSelector": "metadata.name=later"}) in api.queries
        # Re-adopted (its references changed) with the fetched source present, not missing.
        annotations = api.patches[1]["metadata"]["annotations"]
        assert annotations[LIVE_REFS_ANNOTATION] == "ConfigMap/cfg,ConfigMap/later"
        assert annotations[LIVE_MISSING_ANNOTATION] is None
    finally:
        controller.shutdown()


def test_manifests_render_least_privilege(capsys: pytest.CaptureFixture[str]) -> None:
    from wavegen.cli.main import main

    assert (
        main(
            [
                "manifests",
                "-n",
                "ops",
                "--scope",
                "namespace",
                "--replicas",
                "1",
                "--",
                "--namespaces",
                "a,b",
                "--kinds",
                "Deployment",
            ]
        )
        == 0
    )
    docs = [d for d in yaml.safe_load_all(capsys.readouterr().out) if d]
    kinds = [(d["kind"], d["metadata"].get("namespace")) for d in docs]
    assert ("ClusterRole", None) not in kinds and ("PodDisruptionBudget", "ops") not in kinds
    assert ("Role", "a") in kinds and ("Role", "b") in kinds
    role = next(d for d in docs if d["kind"] == "Role" and d["metadata"]["namespace"] == "a")
    verbs = {(tuple(r["apiGroups"]), tuple(r["resources"])): r["verbs"] for r in role["rules"]}
    assert verbs[(("",), ("configmaps", "secrets"))] == ["list", "watch"]
    assert verbs[(("apps",), ("deployments",))] == ["get", "list", "watch", "patch"]
    dep = next(d for d in docs if d["kind"] == "Deployment")
    container = dep["spec"]["template"]["spec"]["containers"][0]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert dep["spec"]["template"]["spec"]["securityContext"]["runAsNonRoot"] is True
    assert container["args"][-4:] == ["--namespaces", "a,b", "--kinds", "Deployment"]


def test_manifests_reject_bad_controller_flags() -> None:
    from wavegen.cli.manifests import render

    args = argparse.Namespace(
        controller_args=["--", "--windw", "3"], replicas=1, scope="cluster", namespace="x", name="w",
        image=None, create_namespace=False, hmac_key_secret=None,
    )  # fmt: skip
    with pytest.raises(UsageError, match="windw"):
        render(args)
