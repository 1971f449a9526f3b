"""`wavegen watch`: the in-cluster controller for live ConfigMap/Secret changes (flags in cli/watch.py, the wiring in runtime)."""

from __future__ import annotations

DEFAULT_KINDS = "Deployment,StatefulSet,DaemonSet,CronJob"
KNOWN_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "CronJob", "ReplicaSet", "Rollout")
