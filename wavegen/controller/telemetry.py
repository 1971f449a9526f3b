"""Structured JSON logs, prometheus-client metrics, and the /metrics, /healthz, /readyz HTTP endpoint."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TextIO

LEVELS = {"debug": 10, "info": 20, "warning": 30, "error": 40}


class Logger:
    """One JSON object per line; callers pass names and counts only, never values of ConfigMaps or Secrets."""

    def __init__(self, level: str = "info", stream: TextIO | None = None) -> None:
        self.threshold = LEVELS[level]
        self.stream = stream or sys.stderr
        self._lock = threading.Lock()

    def log(self, level: str, msg: str, **fields: Any) -> None:
        if LEVELS[level] < self.threshold:
            return
        record = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + f".{int(time.time() % 1 * 1000):03d}Z",
            "level": level,
            "msg": msg,
        }
        record.update(fields)
        line = json.dumps(record, default=str, separators=(",", ":"))
        with self._lock:
            self.stream.write(line + "\n")
            self.stream.flush()

    def debug(self, msg: str, **fields: Any) -> None:
        self.log("debug", msg, **fields)

    def info(self, msg: str, **fields: Any) -> None:
        self.log("info", msg, **fields)

    def warning(self, msg: str, **fields: Any) -> None:
        self.log("warning", msg, **fields)

    def error(self, msg: str, **fields: Any) -> None:
        self.log("error", msg, **fields)


# name -> (type, help, label names)
METRICS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "wavegen_changes_seen_total": ("counter", "ConfigMap/Secret data changes seen (watch and relist), by kind.", ("kind",)),
    "wavegen_rollouts_total": ("counter", "Workload rollouts triggered (pod-template live-hash patches).", ()),
    "wavegen_patches_total": ("counter", "Workload patches sent, by action (roll, adopt, clear).", ("action",)),
    "wavegen_dry_run_decisions_total": ("counter", "Patches not sent because of --dry-run, by action.", ("action",)),
    "wavegen_holds_total": ("counter", "Reconciles that waited because a required reference is missing.", ()),
    "wavegen_conflicts_total": ("counter", "409 Conflict answers to patches (retried on fresh state).", ()),
    "wavegen_errors_total": (
        "counter",
        "Errors, by where they happened (patch, watch, event, lease, reconcile, conflict).",
        ("where",),
    ),
    "wavegen_watch_restarts_total": (
        "counter",
        "Watch restarts, by resource and reason (expired, closed, disconnected, error).",
        ("resource", "reason"),
    ),
    "wavegen_events_total": ("counter", "Kubernetes Events created.", ()),
    "wavegen_reconciles_total": ("counter", "Workload reconciles, by outcome.", ("outcome",)),
    "wavegen_queue_depth": ("gauge", "Workloads waiting in the coalescing queue.", ()),
    "wavegen_workloads_indexed": ("gauge", "Selected workloads held in the index.", ()),
    "wavegen_sources_indexed": ("gauge", "ConfigMaps and Secrets held in the index.", ()),
    "wavegen_is_leader": ("gauge", "1 when this replica holds the lease (or leader election is off).", ()),
    "wavegen_synced": ("gauge", "1 once every initial list has completed.", ()),
}
CHANGE_TO_PATCH = "wavegen_change_to_patch_seconds"
CHANGE_TO_PATCH_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

# The worker thread notes when the change it is reconciling was first queued; a roll patch observes the latency.
_change = threading.local()


def change_queued_at(monotonic: float | None) -> None:
    """Record, for the calling worker thread, when the workload it is about to reconcile was first queued."""
    _change.first = monotonic


class Metrics:
    """prometheus-client counters, gauges and the change-to-patch histogram in a dedicated registry.

    The standard process, platform and garbage-collector collectors are registered in the same registry.
    """

    def __init__(self) -> None:
        import prometheus_client as prom
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        prom.disable_created_metrics()  # type: ignore[no-untyped-call]  # *_created samples double every counter
        self.registry = CollectorRegistry(auto_describe=True)
        prom.ProcessCollector(registry=self.registry)
        prom.PlatformCollector(registry=self.registry)
        prom.GCCollector(registry=self.registry)
        self._lock = threading.Lock()
        self._families: dict[str, Any] = {}
        for name, (kind, help_text, labels) in METRICS.items():
            factory = Counter if kind == "counter" else Gauge
            self._families[name] = factory(name, help_text, labels, registry=self.registry)
        self.change_to_patch = Histogram(
            CHANGE_TO_PATCH,
            "Seconds from the first change queued for a workload to the answer to its roll patch (includes --window).",
            buckets=CHANGE_TO_PATCH_BUCKETS,
            registry=self.registry,
        )
        self.gauge_callbacks: dict[str, Callable[[], float]] = {}

    def _family(self, name: str, kind: str, labels: dict[str, str]) -> Any:
        family = self._families.get(name)
        if family is None:
            from prometheus_client import Counter, Gauge

            with self._lock:
                family = self._families.get(name)
                if family is None:  # a series not in METRICS: declared on first use with the labels it came with
                    factory = Counter if kind == "counter" else Gauge
                    family = self._families[name] = factory(name, name, sorted(labels), registry=self.registry)
        return family.labels(**labels) if labels else family

    def inc(self, name: str, amount: float = 1.0, **labels: str) -> None:
        self._family(name, "counter", labels).inc(amount)
        if name == "wavegen_rollouts_total":
            first = getattr(_change, "first", None)
            if first is not None:
                self.change_to_patch.observe(max(0.0, time.monotonic() - first))

    def set(self, name: str, value: float, **labels: str) -> None:
        self._family(name, "gauge", labels).set(value)

    def _refresh_gauges(self) -> None:
        for name, callback in list(self.gauge_callbacks.items()):
            self.set(name, callback())

    def value(self, name: str, **labels: str) -> float:
        if name in self.gauge_callbacks:
            self._refresh_gauges()
        found = self.registry.get_sample_value(name, labels)
        return float(found) if found is not None else 0.0

    def total(self, name: str) -> float:
        if name in self.gauge_callbacks:
            self._refresh_gauges()
        return sum(s.value for family in self.registry.collect() for s in family.samples if s.name == name)

    def render(self) -> str:
        from prometheus_client import generate_latest

        self._refresh_gauges()
        return generate_latest(self.registry).decode()


def parse_address(address: str) -> tuple[str, int]:
    """``host:port``, ``:port`` (all interfaces) or ``[v6]:port``."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"expected host:port, got {address!r}")
    return host.strip("[]") or "0.0.0.0", int(port)


def serve(address: str, metrics: Metrics, healthy: Callable[[], bool], ready: Callable[[], bool]) -> ThreadingHTTPServer:
    """Start the endpoint on a daemon thread; returns the server (``server_address`` has the bound port)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path == "/metrics":
                self._send(200, metrics.render(), CONTENT_TYPE)
            elif path == "/healthz":
                ok = healthy()
                self._send(200 if ok else 503, "ok\n" if ok else "unhealthy\n")
            elif path == "/readyz":
                ok = ready()
                self._send(200 if ok else 503, "ok\n" if ok else "not ready\n")
            else:
                self._send(404, "not found\n")

        def _send(self, status: int, text: str, content_type: str = "text/plain; charset=utf-8") -> None:
            data = text.encode()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # scrapes and probes every few seconds would drown the structured log

    host, port = parse_address(address)
    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="http", daemon=True).start()
    return server
