"""Leader election on a coordination.k8s.io/v1 Lease, so only one replica of a shard patches at a time."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from typing import Any

from .kube import ApiError, Client, now_rfc3339, resource_path
from .settings import Settings
from .telemetry import Logger, Metrics


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
