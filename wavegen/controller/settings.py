"""The controller's settings: everything the watch flags decide, apart from the core Options."""

from __future__ import annotations

from dataclasses import dataclass


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
