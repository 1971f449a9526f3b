"""The informer: lists and watches ConfigMaps, Secrets, workloads and selected namespaces into the index."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ..core.model import SourceKey
from .index import CONFIGMAP, SECRET, WORKLOAD_KINDS, Index, Kind, WorkloadKey
from .kube import ApiError, Client, is_transport_error, resource_path
from .settings import Settings
from .telemetry import Logger, Metrics
from .workqueue import WorkQueue

Spawn = Callable[..., None]


class Informer:
    """Keeps the index current from list + watch, relists after 410 Gone, and tracks the selected namespaces."""

    def __init__(
        self,
        client: Client,
        settings: Settings,
        index: Index,
        queue: WorkQueue,
        log: Logger,
        metrics: Metrics,
        stop: threading.Event,
    ) -> None:
        self.client = client
        self.s = settings
        self.index = index
        self.queue = queue
        self.log = log
        self.metrics = metrics
        self.stop = stop
        self.synced = threading.Event()
        self.allowed_namespaces: set[str] | None = None if not settings.namespace_selector else set()
        self._pending_syncs: set[str] = set()
        self._pending_workload_lists: set[str] = set()
        # Sources are listed after workloads, so the index knows which ones to keep while their items go by.
        self.workloads_listed = threading.Event()
        self._sync_lock = threading.Lock()

    def start(self, spawn: Spawn) -> None:
        """Start one watch thread per resource and scope (and one for namespaces) through ``spawn(name, target, *args)``."""
        scopes: list[str | None] = list(self.s.namespaces) or [None]
        kinds = [CONFIGMAP, SECRET, *(WORKLOAD_KINDS[k] for k in self.s.kinds)]
        if self.s.namespace_selector:
            self._pending_syncs.add("namespaces")
            spawn("watch-namespaces", self._namespace_loop)
        for kind in kinds:
            for scope in scopes:
                name = f"{kind.plural}@{scope or '*'}"
                self._pending_syncs.add(name)
                if kind not in (CONFIGMAP, SECRET):
                    self._pending_workload_lists.add(name)
        for kind in kinds:
            for scope in scopes:
                name = f"{kind.plural}@{scope or '*'}"
                spawn(f"watch-{name}", self._watch_loop, kind, scope, name)

    def namespace_allowed(self, namespace: str) -> bool:
        allowed = self.allowed_namespaces
        return allowed is None or namespace in allowed

    def _query(self, kind: Kind) -> dict[str, str | int]:
        query: dict[str, str | int] = {}
        if kind is SECRET and self.s.secret_field_selector:
            query["fieldSelector"] = self.s.secret_field_selector
        return query

    def _list(
        self, kind: Kind, scope: str | None, query: Mapping[str, str | int], seen: dict[str, str]
    ) -> Iterator[dict[str, Any]]:
        """The items of a consistent list, page after page, each decoded only when its turn comes.

        ``seen["resourceVersion"]`` is the list's once the items are exhausted.
        """
        token = ""
        while True:
            page = self.client.list_page(
                resource_path(kind.api_version, kind.plural, scope),
                {**query, "limit": self.s.page_size, "continue": token},
            )
            yield from page
            seen["resourceVersion"] = str(page.metadata.get("resourceVersion") or "")
            token = str(page.metadata.get("continue") or "")
            if not token:
                return

    def _relist(self, kind: Kind, scope: str | None) -> str:
        seen = {"resourceVersion": ""}

        def items() -> Iterator[dict[str, Any]]:
            # Item by item: a list answer is never decoded whole, so 10,000 unreferenced Secrets never
            # sit in memory at once (the index keeps only the referenced ones, as digests).
            for item in self._list(kind, scope, self._query(kind), seen):
                yield item
                _drop_values(kind, item)

        if kind in (CONFIGMAP, SECRET):
            changed, affected = self.index.replace_sources(kind, scope, items())
            if self.synced.is_set() and changed:
                self.metrics.inc("wavegen_changes_seen_total", changed, kind=kind.kind)
            for key in affected:
                self.queue.add(key, self.s.window)
        else:
            for key in self.index.replace_workloads(kind, scope, items()):
                self.queue.add(key, 0)
        return seen["resourceVersion"]

    def fetch_unknown(self, key: WorkloadKey) -> None:
        """Read the sources a workload began to reference after their list item went by (list verb, one name)."""
        for source in self.index.unknown(key):
            kind = CONFIGMAP if source.kind == "ConfigMap" else SECRET
            if self.s.namespaces and source.namespace not in self.s.namespaces:
                self.index.resolve(kind, source, None)  # not watched: it could never be kept current
                continue
            selector = f"metadata.name={source.name}"
            extra = self._query(kind).get("fieldSelector")
            query: dict[str, str | int] = {"fieldSelector": f"{extra},{selector}" if extra else selector}
            page = self.client.request("GET", resource_path(kind.api_version, kind.plural, source.namespace), query)
            found = [i for i in page.get("items") or [] if str((i.get("metadata") or {}).get("name") or "") == source.name]
            self.index.resolve(kind, source, found[0] if found else None)
            for item in found:
                _drop_values(kind, item)

    def _handle(self, kind: Kind, event: Mapping[str, Any]) -> None:
        etype, obj = event.get("type"), event.get("object") or {}
        meta = obj.get("metadata") or {}
        namespace, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
        if kind in (CONFIGMAP, SECRET):
            key = SourceKey(kind.kind, namespace, name)  # type: ignore[arg-type]
            if etype == "DELETED":
                affected = self.index.delete_source(kind, namespace, name)
                changed = True
            else:
                changed, affected = self.index.put_source(kind, obj)
            # The client may still hold this event: empty it, so no Secret value outlives its digest.
            _drop_values(kind, obj)
            if changed:
                self.metrics.inc("wavegen_changes_seen_total", kind=kind.kind)
                self.log.debug("source changed", source=str(key), event=etype, dependents=len(affected))
            for wkey in affected:
                self.queue.add(wkey, self.s.window, {key})
            return
        if etype == "DELETED":
            self.index.delete_workload(kind, namespace, name)
        elif self.index.put_workload(kind, obj):
            self.queue.add((kind.kind, namespace, name), 0)

    def _mark_synced(self, name: str) -> None:
        with self._sync_lock:
            self._pending_syncs.discard(name)
            self._pending_workload_lists.discard(name)
            if not self._pending_workload_lists:
                self.workloads_listed.set()
            done = not self._pending_syncs and not self.synced.is_set()
            if done:
                self.synced.set()
        if done:
            workloads, sources = self.index.counts()
            self.log.info("initial lists complete: recomputing every selected workload", workloads=workloads, sources=sources)
            with self.index.lock:
                keys = list(self.index.workloads)
            for key in keys:
                self.queue.add(key, 0)

    def _watch_loop(self, kind: Kind, scope: str | None, name: str) -> None:
        rv = ""
        failures = 0
        if kind in (CONFIGMAP, SECRET):
            while not self.workloads_listed.wait(0.2):
                if self.stop.is_set():
                    return
        while not self.stop.is_set():
            try:
                if not rv:
                    rv = self._relist(kind, scope)
                    self._mark_synced(name)
                    self.log.debug("listed", resource=name, resourceVersion=rv)
                timeout = self.s.watch_timeout + random.randint(0, 60)
                query = {**self._query(kind), "resourceVersion": rv, "allowWatchBookmarks": "true", "timeoutSeconds": timeout}
                for event in self.client.watch(resource_path(kind.api_version, kind.plural, scope), query, timeout + 30):
                    if self.stop.is_set():
                        return
                    failures = 0
                    etype = event.get("type")
                    obj = event.get("object") or {}
                    if etype == "ERROR":
                        code = obj.get("code")
                        if code == 410:
                            self.metrics.inc("wavegen_watch_restarts_total", resource=kind.plural, reason="expired")
                            self.log.info("watch expired (410 Gone): relisting", resource=name)
                            rv = ""
                        else:
                            self.metrics.inc("wavegen_watch_restarts_total", resource=kind.plural, reason="error")
                            self.log.warning("watch error event", resource=name, code=code, reason=obj.get("reason"))
                            rv = ""
                        break
                    new_rv = (obj.get("metadata") or {}).get("resourceVersion")
                    if etype != "BOOKMARK":
                        self._handle(kind, event)
                    # Decode, digest, drop: a Secret's data must not outlive its event while the stream idles.
                    del event, obj
                    if new_rv:
                        rv = str(new_rv)
                else:
                    self.metrics.inc("wavegen_watch_restarts_total", resource=kind.plural, reason="closed")
            except ApiError as err:
                failures += 1
                self.metrics.inc("wavegen_errors_total", where="watch")
                self.metrics.inc(
                    "wavegen_watch_restarts_total", resource=kind.plural, reason="expired" if err.status == 410 else "error"
                )
                level = "info" if err.status == 410 else "warning"
                self.log.log(level, "watch failed", resource=name, status=err.status, reason=err.reason, error=err.message)
                rv = ""  # 410 or an answer we do not understand: start again from a fresh list
                if err.status != 410:
                    self._backoff(failures)
            except Exception as err:
                if not is_transport_error(err):
                    raise
                failures += 1
                self.metrics.inc("wavegen_errors_total", where="watch")
                self.metrics.inc("wavegen_watch_restarts_total", resource=kind.plural, reason="disconnected")
                self.log.warning("watch connection lost", resource=name, error=type(err).__name__, retry=failures)
                self._backoff(failures)

    def _backoff(self, failures: int) -> None:
        delay = min(self.s.backoff_max, 0.2 * 2 ** min(failures, 10))
        self.stop.wait(delay * random.uniform(0.5, 1.0))

    def _namespace_loop(self) -> None:
        """Keep the set of namespaces matching --namespace-selector; reconcile a namespace's workloads when it joins."""
        rv = ""
        failures = 0
        name = "namespaces"
        query: dict[str, str | int] = {"labelSelector": self.s.namespace_selector}
        while not self.stop.is_set():
            try:
                if not rv:
                    page = self.client.request("GET", "/api/v1/namespaces", query)
                    names = {str((i.get("metadata") or {}).get("name")) for i in page.get("items") or []}
                    self._set_namespaces(names)
                    rv = str((page.get("metadata") or {}).get("resourceVersion") or "")
                    self._mark_synced(name)
                watch_query = {
                    **query,
                    "resourceVersion": rv,
                    "allowWatchBookmarks": "true",
                    "timeoutSeconds": self.s.watch_timeout,
                }
                for event in self.client.watch("/api/v1/namespaces", watch_query, self.s.watch_timeout + 30):
                    obj = event.get("object") or {}
                    if event.get("type") == "ERROR":
                        rv = ""
                        break
                    ns = str((obj.get("metadata") or {}).get("name") or "")
                    current = set(self.allowed_namespaces or ())
                    if event.get("type") == "DELETED":
                        current.discard(ns)
                    elif event.get("type") in ("ADDED", "MODIFIED"):
                        current.add(ns)
                    self._set_namespaces(current)
                    rv = str((obj.get("metadata") or {}).get("resourceVersion") or rv)
            except Exception as err:
                if not (isinstance(err, ApiError) or is_transport_error(err)):
                    raise
                failures += 1
                rv = ""
                self.metrics.inc("wavegen_watch_restarts_total", resource="namespaces", reason="error")
                self._backoff(failures)

    def _set_namespaces(self, names: set[str]) -> None:
        old = self.allowed_namespaces or set()
        self.allowed_namespaces = names
        joined = names - old
        if joined:
            self.log.info("namespaces selected", namespaces=sorted(joined))
            with self.index.lock:
                keys = [k for k in self.index.workloads if k[1] in joined]
            for key in keys:
                self.queue.add(key, 0)


def _drop_values(kind: Kind, obj: Any) -> None:
    """Remove a Secret's data from a body once it is digested (others may still reference the same dict)."""
    if kind is SECRET and isinstance(obj, dict):
        obj.pop("data", None)
        obj.pop("stringData", None)
