"""`wavegen watch`: every flag of the in-cluster controller; the controller itself lives in wavegen/controller."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

import typer

from ..controller import DEFAULT_KINDS, KNOWN_KINDS
from ..errors import UsageError
from ..inputs.flags import CONTEXT_SETTINGS, new_app

EXAMPLE = """\b
Examples:
  wavegen watch --kubeconfig ~/.kube/config --namespaces shop --dry-run
  wavegen manifests | kubectl apply -f -     # or run it in the cluster"""


def watch(
    kubeconfig: Annotated[
        str | None,
        typer.Option("--kubeconfig", metavar="FILE", help="kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)"),
    ] = None,
    context: Annotated[
        str | None, typer.Option("--context", metavar="NAME", help="kubeconfig context (default: current-context)")
    ] = None,
    namespaces: Annotated[
        str, typer.Option("--namespaces", metavar="NS[,NS]", help="watch only these namespaces (default: all)")
    ] = "",
    namespace_selector: Annotated[
        str, typer.Option("--namespace-selector", metavar="LABELS", help="watch namespaces matching this label selector")
    ] = "",
    kinds: Annotated[
        str, typer.Option("--kinds", metavar="KIND[,KIND]", help=f"workload kinds to watch (from {', '.join(KNOWN_KINDS)})")
    ] = DEFAULT_KINDS,
    all_workloads: Annotated[
        bool, typer.Option("--all-workloads", help="handle every workload, not only those opted in")
    ] = False,
    profile: Annotated[
        Literal["wavegen", "wave"], typer.Option("--profile", help="opt-in annotation and bundle hash to honour")
    ] = "wavegen",
    secret_field_selector: Annotated[
        str,
        typer.Option(
            "--secret-field-selector",
            metavar="SELECTOR",
            help="field selector for Secrets (default skips Helm release records; '' for all)",
        ),
    ] = "type!=helm.sh/release.v1",
    hmac_key_file: Annotated[
        str | None,
        typer.Option(
            "--hmac-key-file", metavar="FILE", help="HMAC key, as for transform (or env WAVEGEN_HMAC_KEY_FILE / WAVEGEN_HMAC_KEY)"
        ),
    ] = None,
    window: Annotated[
        float,
        typer.Option(
            "--window", metavar="SECONDS", help="coalescing window: changes to a workload's sources within it roll once"
        ),
    ] = 3.0,
    max_patches_per_second: Annotated[
        float,
        typer.Option("--max-patches-per-second", metavar="N", help="global rate limit on workload patches, 0 for none"),
    ] = 10.0,
    patch_burst: Annotated[
        int, typer.Option("--patch-burst", metavar="N", help="patches allowed at once before the rate applies")
    ] = 20,
    leader_elect: Annotated[
        bool, typer.Option("--leader-elect", help="use a coordination.k8s.io Lease; standbys do nothing")
    ] = False,
    lease_name: Annotated[str, typer.Option("--lease-name", metavar="NAME", help="Lease name")] = "wavegen",
    lease_namespace: Annotated[
        str | None,
        typer.Option(
            "--lease-namespace", metavar="NAMESPACE", help="Lease namespace (default: the pod's or kubeconfig's namespace)"
        ),
    ] = None,
    lease_duration: Annotated[float, typer.Option("--lease-duration", metavar="SECONDS")] = 15.0,
    renew_deadline: Annotated[float, typer.Option("--renew-deadline", metavar="SECONDS")] = 10.0,
    retry_period: Annotated[float, typer.Option("--retry-period", metavar="SECONDS")] = 2.0,
    identity: Annotated[
        str | None, typer.Option("--identity", metavar="NAME", help="holder identity (default: $POD_NAME or hostname, plus pid)")
    ] = None,
    metrics_address: Annotated[
        str, typer.Option("--metrics-address", metavar="HOST:PORT", help="/metrics, /healthz, /readyz")
    ] = ":8080",
    dry_run: Annotated[bool, typer.Option("--dry-run", help="log what would be patched; write nothing")] = False,
    no_events: Annotated[bool, typer.Option("--no-events", help="do not create Kubernetes Events")] = False,
    log_level: Annotated[Literal["debug", "info", "warning", "error"], typer.Option("--log-level")] = "info",
) -> int:
    """Run the in-cluster controller that rolls workloads on live config changes."""
    from ..controller.main import run_watch

    return run_watch(watch_args(locals()))  # locals() is exactly the flags here: one name per flag, no copies


def watch_args(values: Mapping[str, Any]) -> argparse.Namespace:
    """The parsed flags as the controller reads them (attribute per flag, as argparse named them)."""
    if values["namespaces"] and values["namespace_selector"]:
        raise UsageError("--namespaces and --namespace-selector cannot be combined")
    return argparse.Namespace(**values)


def parse_watch_flags(argv: Sequence[str]) -> argparse.Namespace:
    """Check flags meant for `wavegen watch` (``wavegen manifests -- ...``) without running the controller."""
    if "--help" in argv or "-h" in argv:  # click would print the controller's help instead of the manifests
        raise UsageError("controller flags: --help is not a controller flag (see 'wavegen watch --help')")
    app = new_app("")
    register(app)
    command = typer.main.get_command(app)
    try:
        context = command.make_context("wavegen watch", list(argv))
    except typer.TyperException as err:
        raise UsageError(f"controller flags: {' '.join(err.format_message().split())}") from None
    return watch_args(context.params)


def register(app: typer.Typer) -> None:
    app.command("watch", epilog=EXAMPLE, context_settings={**CONTEXT_SETTINGS, "show_default": True})(watch)
