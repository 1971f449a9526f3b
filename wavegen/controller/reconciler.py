"""The reconciler: takes due workloads off the queue, asks the core what to do, patches them and records Events."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Mapping
from typing import Any

from ..core.live import LiveDecision, MissingItem, live_decision
from ..core.model import SourceKey
from ..core.plan import Options
from .index import WORKLOAD_KINDS, Index, Kind, WorkloadKey
from .informer import Informer
from .kube import ApiError, Client, is_transport_error, now_rfc3339, resource_path
from .settings import Settings
from .telemetry import Logger, Metrics
from .workqueue import RateLimiter, WorkQueue

FIELD_MANAGER = "wavegen"
REPORTING_CONTROLLER = "wavegen.io/watch"
MAX_CONFLICT_RETRIES = 5


class Reconciler:
    """One worker: a due workload is decided by ``core.live``, patched under a rate limit, and reported as an Event."""

    def __init__(
        self,
        client: Client,
        settings: Settings,
        options: Options,
        index: Index,
        queue: WorkQueue,
        informer: Informer,
        log: Logger,
        metrics: Metrics,
        stop: threading.Event,
    ) -> None:
        self.client = client
        self.s = settings
        self.options = options
        self.index = index
        self.queue = queue
        self.informer = informer
        self.log = log
        self.metrics = metrics
        self.stop = stop
        self.limiter = RateLimiter(settings.patches_per_second, settings.patch_burst)
        self._dry_seen: dict[WorkloadKey, str] = {}
        self._held: dict[WorkloadKey, tuple[MissingItem, ...]] = {}

    def run(self) -> None:
        while not self.stop.is_set():
            if not self.informer.synced.wait(0.5):
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
        if not self.informer.namespace_allowed(key[1]):
            return
        kind = WORKLOAD_KINDS[key[0]]
        self.informer.fetch_unknown(key)
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
