"""`wavegen watch`: the in-cluster controller for live ConfigMap/Secret changes (flags here, the loop in runtime)."""

from __future__ import annotations

import argparse
from typing import Any

DEFAULT_KINDS = "Deployment,StatefulSet,DaemonSet,CronJob"
KNOWN_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "CronJob", "ReplicaSet", "Rollout")


def _csv(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def add_watch_flags(parser: argparse.ArgumentParser) -> None:
    """Every flag of `wavegen watch` (also used by `wavegen manifests` to validate passthrough flags)."""
    conn = parser.add_argument_group("connection")
    conn.add_argument("--kubeconfig", default=None, help="kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)")
    conn.add_argument("--context", default=None, help="kubeconfig context (default: current-context)")

    scope = parser.add_argument_group("what to watch")
    where = scope.add_mutually_exclusive_group()
    where.add_argument("--namespaces", default="", metavar="NS[,NS]", help="watch only these namespaces (default: all)")
    where.add_argument("--namespace-selector", default="", metavar="LABELS", help="watch namespaces matching this label selector")
    scope.add_argument(
        "--kinds", default=DEFAULT_KINDS, metavar="KIND[,KIND]", help=f"workload kinds to watch (from {', '.join(KNOWN_KINDS)})"
    )
    scope.add_argument("--all-workloads", action="store_true", help="handle every workload, not only those opted in")
    scope.add_argument(
        "--profile", choices=("wavegen", "wave"), default="wavegen", help="opt-in annotation and bundle hash to honour"
    )
    scope.add_argument(
        "--secret-field-selector",
        default="type!=helm.sh/release.v1",
        help="field selector for Secrets (default skips Helm release records; '' for all)",
    )
    scope.add_argument(
        "--hmac-key-file",
        default=None,
        metavar="FILE",
        help="HMAC key, as for transform (or env WAVEGEN_HMAC_KEY_FILE / WAVEGEN_HMAC_KEY)",
    )

    pace = parser.add_argument_group("pacing")
    pace.add_argument(
        "--window",
        type=float,
        default=3.0,
        metavar="SECONDS",
        help="coalescing window: changes to a workload's sources within it roll once (default: 3)",
    )
    pace.add_argument(
        "--max-patches-per-second",
        type=float,
        default=10.0,
        metavar="N",
        help="global rate limit on workload patches, 0 for none (default: 10)",
    )
    pace.add_argument(
        "--patch-burst", type=int, default=20, metavar="N", help="patches allowed at once before the rate applies (default: 20)"
    )

    ha = parser.add_argument_group("high availability")
    ha.add_argument("--leader-elect", action="store_true", help="use a coordination.k8s.io Lease; standbys do nothing")
    ha.add_argument("--lease-name", default="wavegen", help="Lease name (default: wavegen)")
    ha.add_argument("--lease-namespace", default=None, help="Lease namespace (default: the pod's or kubeconfig's namespace)")
    ha.add_argument("--lease-duration", type=float, default=15.0, metavar="SECONDS")
    ha.add_argument("--renew-deadline", type=float, default=10.0, metavar="SECONDS")
    ha.add_argument("--retry-period", type=float, default=2.0, metavar="SECONDS")
    ha.add_argument("--identity", default=None, help="holder identity (default: $POD_NAME or hostname, plus pid)")

    ops = parser.add_argument_group("operations")
    ops.add_argument(
        "--metrics-address", default=":8080", metavar="HOST:PORT", help="/metrics, /healthz, /readyz (default: :8080)"
    )
    ops.add_argument("--dry-run", action="store_true", help="log what would be patched; write nothing")
    ops.add_argument("--no-events", action="store_true", help="do not create Kubernetes Events")
    ops.add_argument("--log-level", choices=("debug", "info", "warning", "error"), default="info")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("watch", help="run the in-cluster controller that rolls workloads on live config changes")
    add_watch_flags(parser)
    parser.set_defaults(func=cmd_watch)


def cmd_watch(args: argparse.Namespace) -> int:
    from .main import run_watch

    return run_watch(args)
