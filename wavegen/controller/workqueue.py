"""The controller's work queue (per-workload debounce) and the token bucket that paces every patch."""

from __future__ import annotations

import heapq
import threading
import time
from dataclasses import dataclass, field

from ..core.model import SourceKey
from .index import WorkloadKey
from .telemetry import change_queued_at


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
