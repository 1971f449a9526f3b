"""Structured JSON logs, Prometheus text metrics, and the /metrics, /healthz, /readyz HTTP endpoint."""

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


# name -> (type, help)
METRICS: dict[str, tuple[str, str]] = {
    "wavegen_changes_seen_total": ("counter", "ConfigMap/Secret data changes seen (watch events and relists), by kind."),
    "wavegen_rollouts_total": ("counter", "Workload rollouts triggered (pod-template live-hash patches)."),
    "wavegen_patches_total": ("counter", "Workload patches sent, by action (roll, adopt, clear)."),
    "wavegen_dry_run_decisions_total": ("counter", "Patches not sent because of --dry-run, by action."),
    "wavegen_holds_total": ("counter", "Reconciles that waited because a required reference is missing."),
    "wavegen_conflicts_total": ("counter", "409 Conflict answers to patches (retried on fresh state)."),
    "wavegen_errors_total": ("counter", "Errors, by where they happened (patch, watch, event, lease, reconcile)."),
    "wavegen_watch_restarts_total": ("counter", "Watch restarts, by resource and reason (expired, closed, error)."),
    "wavegen_events_total": ("counter", "Kubernetes Events created."),
    "wavegen_reconciles_total": ("counter", "Workload reconciles, by outcome."),
    "wavegen_queue_depth": ("gauge", "Workloads waiting in the coalescing queue."),
    "wavegen_workloads_indexed": ("gauge", "Selected workloads held in the index."),
    "wavegen_sources_indexed": ("gauge", "ConfigMaps and Secrets held in the index."),
    "wavegen_is_leader": ("gauge", "1 when this replica holds the lease (or leader election is off)."),
    "wavegen_synced": ("gauge", "1 once every initial list has completed."),
}


def _labels(labels: tuple[tuple[str, str], ...]) -> str:
    if not labels:
        return ""
    inner = ",".join(f'{k}="{v.replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"' for k, v in labels)
    return "{" + inner + "}"


class Metrics:
    """Counters and gauges with labels, rendered in the Prometheus text format."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
        self.gauge_callbacks: dict[str, Callable[[], float]] = {}

    def inc(self, name: str, amount: float = 1.0, **labels: str) -> None:
        key = (name, tuple(sorted(labels.items())))
        with self._lock:
            self._values[key] = self._values.get(key, 0.0) + amount

    def set(self, name: str, value: float, **labels: str) -> None:
        with self._lock:
            self._values[(name, tuple(sorted(labels.items())))] = value

    def value(self, name: str, **labels: str) -> float:
        with self._lock:
            return self._values.get((name, tuple(sorted(labels.items()))), 0.0)

    def total(self, name: str) -> float:
        with self._lock:
            return sum(v for (n, _), v in self._values.items() if n == name)

    def render(self) -> str:
        for name, callback in self.gauge_callbacks.items():
            self.set(name, callback())
        with self._lock:
            values = dict(self._values)
        lines: list[str] = []
        for name, (kind, help_text) in METRICS.items():
            lines.append(f"# HELP {name} {help_text}")
            lines.append(f"# TYPE {name} {kind}")
            samples = sorted((labels, v) for (n, labels), v in values.items() if n == name)
            if not samples and kind == "counter":
                samples = [((), 0.0)]
            for labels, v in samples:
                lines.append(f"{name}{_labels(labels)} {v:g}")
        return "\n".join(lines) + "\n"


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
                self._send(200, metrics.render(), "text/plain; version=0.0.4; charset=utf-8")
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
