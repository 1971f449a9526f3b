"""The opted-in test workload 'web' that the watch-mode tests (e2e and container) apply to a real API server."""

from __future__ import annotations

from typing import Any


def reads_external_secret() -> dict[str, Any]:
    """A pod spec reading Secret 'external', which no bundle holds: the controller's business (a fresh copy)."""
    return {"containers": [{"name": "app", "image": "registry.invalid/app:1", "envFrom": [{"secretRef": {"name": "external"}}]}]}


def opted_in(
    ns: str,
    pod_spec: dict[str, Any],
    *,
    kind: str = "Deployment",
    api_version: str = "apps/v1",
    extra_spec: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Workload 'web' in ``ns``, opted in with ``wavegen.io/enabled``, one replica, pods labelled app=web."""
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": "web", "namespace": ns, "annotations": {"wavegen.io/enabled": "true"}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": pod_spec},
            **(extra_spec or {}),
        },
    }
