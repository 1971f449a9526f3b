"""The watch loop: list+watch into the index, a coalescing queue, rate-limited patches, Events and leader election."""

from __future__ import annotations

import heapq
import random
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..core.live import LiveDecision, MissingItem, live_decision
from ..core.model import SourceKey
from ..core.plan import Options
from .index import CONFIGMAP, SECRET, WORKLOAD_KINDS, Index, Kind, WorkloadKey
from .kube import ApiError, Client, is_transport_error, now_rfc3339, resource_path
from .telemetry import Logger, Metrics, change_queued_at

FIELD_MANAGER = "wavegen"
REPORTING_CONTROLLER = "wavegen.io/watch"
MAX_CONFLICT_RETRIES = 5


@dataclass
class Settings:
    """Everything the controller's flags decide, apart from the core Options."""

    namespaces: tuple[str, ...] = ()  # empty: all namespaces
    namespace_selector: str = ""
    kinds: tuple[str, ...] = ("Deployment", "StatefulSet", "DaemonSet", "CronJob")
    window: float = 3.0
    max_delay_factor: float = 5.0
    patches_per_second: float = 10.0
    patch_burst: int = 20
    dry_run: bool = False
    events: bool = True
    leader_elect: bool = False
    lease_name: str = "wavegen"
    lease_namespace: str = "default"
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    identity: str = ""
    secret_field_selector: str = "type!=helm.sh/release.v1"
    watch_timeout: int = 300
    page_size: int = 500
    backoff_max: float = 10.0


# ---------------------------------------------------------------------------- queue and rate limit


@dataclass
class _Pending:
    due: float
    first: float
    triggers: set[SourceKey] = field(default_factory=set)


class WorkQueue:
    """Per-workload debounce: each change pushes the due time out by ``window``, never past ``first + cap``."""

    def __init__(self, window: float, cap: float) -> None:
        self.window = window
        self.cap = cap
        self._cond = threading.Condition()
        self._pending: dict[WorkloadKey, _Pending] = {}
        self._heap: list[tuple[float, WorkloadKey]] = []

    def add(self, key: WorkloadKey, delay: float, triggers: set[SourceKey] | None = None) -> None:
        now = time.monotonic()
        with self._cond:
            entry = self._pending.get(key)
            if entry is None:
                entry = self._pending[key] = _Pending(now + delay, now)
            else:
                entry.due = min(max(entry.due, now + delay), entry.first + self.cap)
            if triggers:
                entry.triggers |= triggers
            heapq.heappush(self._heap, (entry.due, key))
            self._cond.notify()

    def get(self, stop: threading.Event) -> tuple[WorkloadKey, set[SourceKey]] | None:
        """Block until a workload is due (or ``stop`` is set: None)."""
        with self._cond:
            while not stop.is_set():
                now = time.monotonic()
                while self._heap:
                    due, key = self._heap[0]
                    entry = self._pending.get(key)
                    if entry is None or entry.due != due:
                        heapq.heappop(self._heap)  # superseded heap entry
                        continue
                    if due <= now:
                        heapq.heappop(self._heap)
                        del self._pending[key]
                        change_queued_at(entry.first)
                        return key, entry.triggers
                    break
                timeout = (self._heap[0][0] - now) if self._heap else 0.5
                self._cond.wait(min(max(timeout, 0.0), 0.5))
            return None

    def wake(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def __len__(self) -> int:
        with self._cond:
            return len(self._pending)


class RateLimiter:
    """Token bucket shared by every workload patch."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = max(1, burst)
        self._tokens = float(self.burst)
        self._last = time.monotonic()
        self._lock = threading.Lock()

    def acquire(self, stop: threading.Event) -> bool:
        if self.rate <= 0:
            return not stop.is_set()
        while not stop.is_set():
            with self._lock:
                now = time.monotonic()
                self._tokens = min(self.burst, self._tokens + (now - self._last) * self.rate)
                self._last = now
                if self._tokens >= 1:
                    self._tokens -= 1
                    return True
                wait = (1 - self._tokens) / self.rate
            stop.wait(wait)
        return False


# ---------------------------------------------------------------------------- leader election


class LeaderElector:
    """A coordination.k8s.io/v1 Lease: acquire, renew every retry period, give up after the renew deadline."""

    def __init__(self, client: Client, settings: Settings, log: Logger, metrics: Metrics) -> None:
        self.client = client
        self.s = settings
        self.log = log
        self.metrics = metrics
        self.path = resource_path("coordination.k8s.io/v1", "leases", settings.lease_namespace)
        self.leading = False
        self._observed: tuple[str, float] | None = None  # (record fingerprint, local time it was first seen)

    def _try(self) -> bool:
        try:
            lease = self.client.request("GET", f"{self.path}/{self.s.lease_name}")
        except ApiError as err:
            if err.status != 404:
                raise
            body = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": self.s.lease_name, "namespace": self.s.lease_namespace},
                "spec": self._spec(acquire=True, transitions=0),
            }
            try:
                self.client.request("POST", self.path, body=body)
            except ApiError as create_err:
                if create_err.status == 409:
                    return False
                raise
            return True
        spec = lease.get("spec") or {}
        holder = spec.get("holderIdentity") or ""
        fingerprint = f"{holder}|{spec.get('renewTime')}|{spec.get('leaseDurationSeconds')}"
        now = time.monotonic()
        if self._observed is None or self._observed[0] != fingerprint:
            self._observed = (fingerprint, now)
        duration = float(spec.get("leaseDurationSeconds") or self.s.lease_duration)
        # Expiry is judged on our own clock since we last saw the record change, as client-go does: no clock-skew trust.
        expired = not holder or now - self._observed[1] > duration
        if holder != self.s.identity and not expired:
            return False
        transitions = int(spec.get("leaseTransitions") or 0) + (0 if holder == self.s.identity else 1)
        lease["spec"] = {**spec, **self._spec(acquire=holder != self.s.identity, transitions=transitions)}
        try:
            self.client.request("PUT", f"{self.path}/{self.s.lease_name}", body=lease)
        except ApiError as err:
            if err.status == 409:
                return False
            raise
        return True

    def _spec(self, acquire: bool, transitions: int) -> dict[str, Any]:
        now = now_rfc3339(micro=True)
        spec: dict[str, Any] = {
            "holderIdentity": self.s.identity,
            "leaseDurationSeconds": int(self.s.lease_duration),
            "renewTime": now,
            "leaseTransitions": transitions,
        }
        if acquire:
            spec["acquireTime"] = now
        return spec

    def acquire(self, stop: threading.Event) -> bool:
        """Block until leading (True) or stopped (False); standbys do nothing else meanwhile."""
        announced = False
        while not stop.is_set():
            try:
                if self._try():
                    self.leading = True
                    self.metrics.set("wavegen_is_leader", 1)
                    self.log.info(
                        "acquired the lease", lease=f"{self.s.lease_namespace}/{self.s.lease_name}", identity=self.s.identity
                    )
                    return True
            except Exception as err:
                self.metrics.inc("wavegen_errors_total", where="lease")
                if getattr(self.client, "auth_failure", None):
                    return False  # credentials rejected: the caller exits with one line instead of retrying forever
                self.log.warning("lease attempt failed", error=str(err))
            if not announced:
                self.log.info(
                    "standing by: another replica holds the lease", lease=f"{self.s.lease_namespace}/{self.s.lease_name}"
                )
                announced = True
            stop.wait(self.s.retry_period * random.uniform(1.0, 1.2))
        return False

    def keep(self, stop: threading.Event, lost: Callable[[], None]) -> None:
        """Renew until stopped; call ``lost`` if the lease cannot be renewed within the renew deadline."""
        last_ok = time.monotonic()
        while not stop.wait(self.s.retry_period):
            try:
                if self._try():
                    last_ok = time.monotonic()
                    continue
                self.log.error("another replica took the lease")
            except Exception as err:
                self.metrics.inc("wavegen_errors_total", where="lease")
                self.log.warning("lease renewal failed", error=str(err))
                if time.monotonic() - last_ok < self.s.renew_deadline:
                    continue
            self.leading = False
            self.metrics.set("wavegen_is_leader", 0)
            lost()
            return

    def release(self) -> None:
        if not self.leading:
            return
        try:
            lease = self.client.request("GET", f"{self.path}/{self.s.lease_name}")
            spec = lease.get("spec") or {}
            if spec.get("holderIdentity") == self.s.identity:
                # An empty holder lets a standby take over at once instead of waiting for expiry.
                lease["spec"] = {**spec, "holderIdentity": "", "leaseDurationSeconds": 1, "renewTime": now_rfc3339(micro=True)}
                self.client.request("PUT", f"{self.path}/{self.s.lease_name}", body=lease)
        except Exception as err:
            self.log.warning("could not release the lease", error=str(err))
        self.leading = False


# ---------------------------------------------------------------------------- the controller


class Controller:
    """Lists and watches, keeps the index, reconciles due workloads one at a time."""

    def __init__(self, client: Client, settings: Settings, options: Options, log: Logger, metrics: Metrics) -> None:
        self.client = client
        self.s = settings
        self.options = options
        self.log = log
        self.metrics = metrics
        self.index = Index(options)
        self.queue = WorkQueue(settings.window, settings.window * settings.max_delay_factor)
        self.limiter = RateLimiter(settings.patches_per_second, settings.patch_burst)
        self.stop = threading.Event()
        self.synced = threading.Event()
        self.allowed_namespaces: set[str] | None = None if not settings.namespace_selector else set()
        self._pending_syncs: set[str] = set()
        self._pending_workload_lists: set[str] = set()
        # Sources are listed after workloads, so the index knows which ones to keep while their items go by.
        self.workloads_listed = threading.Event()
        self._sync_lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._dry_seen: dict[WorkloadKey, str] = {}
        self._held: dict[WorkloadKey, tuple[MissingItem, ...]] = {}
        self.fatal: str | None = None
        metrics.gauge_callbacks["wavegen_queue_depth"] = lambda: float(len(self.queue))
        metrics.gauge_callbacks["wavegen_workloads_indexed"] = lambda: float(self.index.counts()[0])
        metrics.gauge_callbacks["wavegen_sources_indexed"] = lambda: float(self.index.counts()[1])
        metrics.gauge_callbacks["wavegen_synced"] = lambda: 1.0 if self.synced.is_set() else 0.0

    # ---- start / stop ----------------------------------------------------------

    def start(self) -> None:
        scopes: list[str | None] = list(self.s.namespaces) or [None]
        kinds = [CONFIGMAP, SECRET, *(WORKLOAD_KINDS[k] for k in self.s.kinds)]
        if self.s.namespace_selector:
            self._pending_syncs.add("namespaces")
            self._spawn("watch-namespaces", self._namespace_loop)
        for kind in kinds:
            for scope in scopes:
                name = f"{kind.plural}@{scope or '*'}"
                self._pending_syncs.add(name)
                if kind not in (CONFIGMAP, SECRET):
                    self._pending_workload_lists.add(name)
        for kind in kinds:
            for scope in scopes:
                name = f"{kind.plural}@{scope or '*'}"
                self._spawn(f"watch-{name}", self._watch_loop, kind, scope, name)
        self._spawn("worker", self._worker)

    def _spawn(self, name: str, target: Callable[..., None], *args: Any) -> None:
        thread = threading.Thread(target=self._guard, args=(target, *args), name=name, daemon=True)
        self._threads.append(thread)
        thread.start()

    def _guard(self, target: Callable[..., None], *args: Any) -> None:
        try:
            target(*args)
        except Exception as err:  # a bug: stop the process so the pod restarts from a clean list
            self.fatal = f"{type(err).__name__} in {threading.current_thread().name}"
            self.log.error("internal error, stopping", error=type(err).__name__, thread=threading.current_thread().name)
            self.stop.set()

    def shutdown(self) -> None:
        self.stop.set()
        self.queue.wake()
        # Watch threads may sit in a blocking read: they are daemons, so wait briefly in total, not per thread.
        deadline = time.monotonic() + 2.0
        for thread in self._threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))

    def healthy(self) -> bool:
        return self.fatal is None

    # ---- watching --------------------------------------------------------------

    def _namespace_allowed(self, namespace: str) -> bool:
        allowed = self.allowed_namespaces
        return allowed is None or namespace in allowed

    def _query(self, kind: Kind) -> dict[str, str | int]:
        query: dict[str, str | int] = {}
        if kind is SECRET and self.s.secret_field_selector:
            query["fieldSelector"] = self.s.secret_field_selector
        return query

    def _list(self, kind: Kind, scope: str | None, query: Mapping[str, str | int]) -> Iterator[tuple[list[dict[str, Any]], str]]:
        """Pages of a consistent list: (items, the list's resourceVersion)."""
        token = ""
        while True:
            page = self.client.request(
                "GET",
                resource_path(kind.api_version, kind.plural, scope),
                {**query, "limit": self.s.page_size, "continue": token},
            )
            yield page.get("items") or [], str((page.get("metadata") or {}).get("resourceVersion") or "")
            token = str((page.get("metadata") or {}).get("continue") or "")
            if not token:
                return

    def _relist(self, kind: Kind, scope: str | None) -> str:
        rv = ""

        def items() -> Iterator[dict[str, Any]]:
            # Page by page: a page is dropped before the next is read, so 10,000 unreferenced Secrets never
            # sit in memory at once (the index keeps only the referenced ones, as digests).
            nonlocal rv
            for page, page_rv in self._list(kind, scope, self._query(kind)):
                rv = page_rv
                while page:
                    item = page.pop()
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
        return rv

    def _fetch_unknown(self, key: WorkloadKey) -> None:
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

    # ---- reconciling -----------------------------------------------------------

    def _worker(self) -> None:
        while not self.stop.is_set():
            if not self.synced.wait(0.5):
                continue
            item = self.queue.get(self.stop)
            if item is None:
                return
            key, triggers = item
            try:
                self.reconcile(key, triggers)
            except Exception as err:
                if not (isinstance(err, ApiError) or is_transport_error(err)):
                    raise
                self.metrics.inc("wavegen_errors_total", where="reconcile")
                self.metrics.inc("wavegen_reconciles_total", outcome="error")
                self.log.warning("reconcile failed, will retry", workload="/".join(key), error=str(err))
                self.queue.add(key, min(self.s.backoff_max, max(1.0, self.s.window)), triggers)

    def _decide(self, key: WorkloadKey) -> tuple[dict[str, Any], LiveDecision] | None:
        with self.index.lock:
            body = self.index.workloads.get(key)
            if body is None:
                return None
            return body, live_decision(body, self.index.sources, self.options)

    def reconcile(self, key: WorkloadKey, triggers: set[SourceKey]) -> None:
        if not self._namespace_allowed(key[1]):
            return
        kind = WORKLOAD_KINDS[key[0]]
        self._fetch_unknown(key)
        for _ in range(MAX_CONFLICT_RETRIES):
            decided = self._decide(key)
            if decided is None:
                return
            body, decision = decided
            workload = "/".join(key)
            self._note_missing(kind, key, body, decision)
            if decision.action in ("none", "skip"):
                self.metrics.inc("wavegen_reconciles_total", outcome="unchanged")
                return
            if decision.action == "hold":
                self.metrics.inc("wavegen_holds_total")
                self.metrics.inc("wavegen_reconciles_total", outcome="hold")
                return
            if self.s.dry_run:
                if self._dry_seen.get(key) != f"{decision.action}:{decision.value}":
                    self._dry_seen[key] = f"{decision.action}:{decision.value}"
                    self.metrics.inc("wavegen_dry_run_decisions_total", action=decision.action)
                    self.log.info(
                        "dry run: would patch",
                        workload=workload,
                        action=decision.action,
                        reason=decision.reason,
                        sources=sorted(str(k) for k in decision.uncovered),
                    )
                return
            if not self.limiter.acquire(self.stop):
                return
            assert decision.patch is not None
            patch = _with_precondition(decision.patch, str(body["metadata"].get("resourceVersion") or ""))
            path = resource_path(kind.api_version, kind.plural, key[1], key[2])
            try:
                fresh = self.client.request(
                    "PATCH", path, {"fieldManager": FIELD_MANAGER}, body=patch, content_type="application/merge-patch+json"
                )
            except ApiError as err:
                if err.status == 409:
                    self.metrics.inc("wavegen_conflicts_total")
                    self.log.info("conflict: retrying on fresh state", workload=workload)
                    self._refresh(kind, key)
                    continue
                if err.status == 404:
                    self.index.delete_workload(kind, key[1], key[2])
                    return
                self.metrics.inc("wavegen_errors_total", where="patch")
                raise
            self.index.put_workload(kind, fresh)
            self.metrics.inc("wavegen_patches_total", action=decision.action)
            self.metrics.inc("wavegen_reconciles_total", outcome=decision.action)
            fields = {"workload": workload, "action": decision.action, "reason": decision.reason}
            if decision.action == "roll":
                changed = sorted(triggers & decision.uncovered) or sorted(decision.uncovered)
                self.metrics.inc("wavegen_rollouts_total")
                self.log.info("rolled", **fields, sources=[str(k) for k in changed])
                self._event(
                    kind,
                    fresh,
                    "Normal",
                    "ConfigChanged",
                    "Rollout",
                    "Rolling: live configuration changed in " + ", ".join(_source_text(k) for k in changed),
                )
            else:
                self.log.info("recorded", **fields)
            return
        self.metrics.inc("wavegen_errors_total", where="conflict")
        self.queue.add(key, max(1.0, self.s.window), triggers)

    def _note_missing(self, kind: Kind, key: WorkloadKey, body: Mapping[str, Any], decision: LiveDecision) -> None:
        """One Warning Event per new set of missing required config (objects or keys), naming them, never values."""
        if not decision.missing or decision.action in ("none", "skip", "clear"):
            self._held.pop(key, None)
            return
        if self._held.get(key) == decision.missing:
            return
        self._held[key] = decision.missing
        workload = "/".join(key)
        self.log.info("waiting: required config is missing", workload=workload, missing=[str(m) for m in decision.missing])
        self._event(
            kind,
            body,
            "Warning",
            "MissingConfig",
            "Wait",
            f"{key[0]} {key[1]}/{key[2]} not rolled: waiting for " + ", ".join(str(m) for m in decision.missing),
        )

    def _refresh(self, kind: Kind, key: WorkloadKey) -> None:
        try:
            fresh = self.client.request("GET", resource_path(kind.api_version, kind.plural, key[1], key[2]))
        except ApiError as err:
            if err.status == 404:
                self.index.delete_workload(kind, key[1], key[2])
                return
            raise
        self.index.put_workload(kind, fresh)

    def _event(self, kind: Kind, obj: Mapping[str, Any], etype: str, reason: str, action: str, note: str) -> None:
        if not self.s.events or self.s.dry_run:
            return
        meta = obj.get("metadata") or {}
        namespace = str(meta.get("namespace") or "")
        event = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            # generateName "web." fails validation (it must end alphanumeric); client-go's name.<hex nanos> does not.
            "metadata": {"name": f"{meta.get('name')}.{time.time_ns():x}", "namespace": namespace},
            "eventTime": now_rfc3339(micro=True),
            "reportingController": REPORTING_CONTROLLER,
            "reportingInstance": _dns_label(self.s.identity),
            "action": action,
            "reason": reason,
            "type": etype,
            "note": note[:1000],
            "regarding": {
                "apiVersion": kind.api_version,
                "kind": kind.kind,
                "name": meta.get("name"),
                "namespace": namespace,
                "uid": meta.get("uid"),
                "resourceVersion": meta.get("resourceVersion"),
            },
        }
        try:
            self.client.request("POST", resource_path("events.k8s.io/v1", "events", namespace), body=event)
            self.metrics.inc("wavegen_events_total")
        except Exception as err:
            if not (isinstance(err, ApiError) or is_transport_error(err)):
                raise
            self.metrics.inc("wavegen_errors_total", where="event")
            self.log.warning("could not create an Event", error=str(err))


def _drop_values(kind: Kind, obj: Any) -> None:
    """Remove a Secret's data from a body once it is digested (others may still reference the same dict)."""
    if kind is SECRET and isinstance(obj, dict):
        obj.pop("data", None)
        obj.pop("stringData", None)


def _dns_label(text: str) -> str:
    """reportingInstance must look like a DNS subdomain: lower case alphanumerics, '-' and '.'."""
    cleaned = re.sub(r"[^a-z0-9.-]+", "-", text.lower()).strip("-.")
    return cleaned[:128].rstrip("-.") or "wavegen"


def _source_text(key: SourceKey) -> str:
    return f"{key.kind} {key.namespace}/{key.name}"


def _with_precondition(patch: Mapping[str, Any], resource_version: str) -> dict[str, Any]:
    """A merge patch carrying metadata.resourceVersion fails with 409 if the object changed since we read it."""
    out = dict(patch)
    meta = dict(out.get("metadata") or {})
    if resource_version:
        meta["resourceVersion"] = resource_version
    out["metadata"] = meta
    return out
