"""The controller: wires the informer, the work queue and the reconciler together and runs their threads."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from ..core.plan import Options
from .index import Index
from .informer import Informer
from .kube import Client
from .reconciler import Reconciler
from .settings import Settings
from .telemetry import Logger, Metrics
from .workqueue import WorkQueue


class Controller:
    """Lists and watches (the informer), keeps the index, reconciles due workloads one at a time (the reconciler)."""

    def __init__(self, client: Client, settings: Settings, options: Options, log: Logger, metrics: Metrics) -> None:
        self.client = client
        self.s = settings
        self.options = options
        self.log = log
        self.metrics = metrics
        self.index = Index(options)
        self.queue = WorkQueue(settings.window, settings.window * settings.max_delay_factor)
        self.stop = threading.Event()
        self.informer = Informer(client, settings, self.index, self.queue, log, metrics, self.stop)
        self.reconciler = Reconciler(client, settings, options, self.index, self.queue, self.informer, log, metrics, self.stop)
        self.synced = self.informer.synced
        self._threads: list[threading.Thread] = []
        self.fatal: str | None = None
        metrics.gauge_callbacks["wavegen_queue_depth"] = lambda: float(len(self.queue))
        metrics.gauge_callbacks["wavegen_workloads_indexed"] = lambda: float(self.index.counts()[0])
        metrics.gauge_callbacks["wavegen_sources_indexed"] = lambda: float(self.index.counts()[1])
        metrics.gauge_callbacks["wavegen_synced"] = lambda: 1.0 if self.synced.is_set() else 0.0

    def start(self) -> None:
        self.informer.start(self._spawn)
        self._spawn("worker", self.reconciler.run)

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
