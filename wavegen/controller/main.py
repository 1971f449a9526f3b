"""Builds the controller from parsed flags and runs it until SIGTERM/SIGINT or lost leadership."""

from __future__ import annotations

import argparse
import os
import signal
import socket
import sys
import threading
from types import FrameType

from ..core.plan import Options
from ..core.workloads import WorkloadTable
from ..errors import EXIT_OK, UsageError
from ..inputs.options import read_hmac_key
from .index import WORKLOAD_KINDS
from .kube import EXIT_AUTH, Client, resolve_credentials
from .leader import LeaderElector
from .runtime import Controller
from .settings import Settings
from .telemetry import Logger, Metrics, parse_address, serve

EXIT_LOST_LEASE = 4


def settings_from_args(args: argparse.Namespace, default_namespace: str) -> Settings:
    kinds = tuple(k.strip() for k in args.kinds.split(",") if k.strip())
    unknown = [k for k in kinds if k not in WORKLOAD_KINDS]
    if unknown or not kinds:
        raise UsageError(f"--kinds: unknown kind(s) {', '.join(unknown) or '(none)'} (known: {', '.join(WORKLOAD_KINDS)})")
    if args.window < 0 or args.max_patches_per_second < 0 or args.patch_burst < 1:
        raise UsageError("--window and --max-patches-per-second must be >= 0, --patch-burst >= 1")
    if args.leader_elect and not (args.retry_period < args.renew_deadline < args.lease_duration):
        raise UsageError("leader election needs --retry-period < --renew-deadline < --lease-duration")
    try:
        parse_address(args.metrics_address)
    except ValueError as err:
        raise UsageError(f"--metrics-address: {err}") from None
    identity = args.identity or f"{os.environ.get('POD_NAME') or socket.gethostname()}-{os.getpid()}"
    return Settings(
        namespaces=tuple(n.strip() for n in args.namespaces.split(",") if n.strip()),
        namespace_selector=args.namespace_selector,
        kinds=kinds,
        window=args.window,
        patches_per_second=args.max_patches_per_second,
        patch_burst=args.patch_burst,
        dry_run=args.dry_run,
        events=not args.no_events,
        leader_elect=args.leader_elect,
        lease_name=args.lease_name,
        lease_namespace=args.lease_namespace or default_namespace,
        lease_duration=args.lease_duration,
        renew_deadline=args.renew_deadline,
        retry_period=args.retry_period,
        identity=identity,
        secret_field_selector=args.secret_field_selector,
    )


def run_watch(args: argparse.Namespace) -> int:
    log = Logger(args.log_level)
    creds = resolve_credentials(args.kubeconfig, args.context, os.environ)
    settings = settings_from_args(args, creds.namespace)
    options = Options(
        profile=args.profile,
        missing="ignore",
        opt_in=not args.all_workloads,
        workloads=WorkloadTable(),
        hmac_key=read_hmac_key(args.hmac_key_file, os.environ),
    )
    client = Client(creds)
    try:
        client.check()
    except OSError as err:  # unreachable for now: the watches retry with backoff, as after any disconnect
        log.warning("API server not reachable yet", server=creds.server, error=str(err))
    metrics = Metrics()
    controller = Controller(client, settings, options, log, metrics)
    lease_client = Client(creds)
    elector = LeaderElector(lease_client, settings, log, metrics) if settings.leader_elect and not settings.dry_run else None
    metrics.set("wavegen_is_leader", 0 if elector else 1)
    lost = threading.Event()

    def ready() -> bool:
        # A standby is ready (it must not block a rollout of the controller's own Deployment); a leader once synced.
        return controller.healthy() and ((elector is not None and not elector.leading) or controller.synced.is_set())

    server = serve(args.metrics_address, metrics, controller.healthy, ready)

    def on_signal(signum: int, frame: FrameType | None) -> None:
        controller.stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    log.info(
        "starting",
        server=creds.server,
        identity=settings.identity,
        namespaces=list(settings.namespaces) or "all",
        namespace_selector=settings.namespace_selector,
        kinds=list(settings.kinds),
        window=settings.window,
        max_patches_per_second=settings.patches_per_second,
        dry_run=settings.dry_run,
        opt_in=options.opt_in,
        profile=options.profile,
        hmac=options.hmac_key is not None,
        metrics_address=f"{server.server_address[0]!s}:{server.server_address[1]}",
    )
    try:
        if elector is None or elector.acquire(controller.stop):
            if elector is not None:

                def on_lost() -> None:
                    lost.set()
                    controller.stop.set()

                keeper = threading.Thread(target=elector.keep, args=(controller.stop, on_lost), name="lease", daemon=True)
                keeper.start()
            controller.start()
            while not controller.stop.wait(0.5):
                if client.auth_failure or lease_client.auth_failure:
                    break
    finally:
        controller.shutdown()
        if elector is not None and not lost.is_set():
            elector.release()
        server.shutdown()
    failure = client.auth_failure or lease_client.auth_failure
    if failure:
        # One plain line, as for a credential rejected at start: the token itself is never part of it.
        print(f"wavegen: error: {failure}", file=sys.stderr, flush=True)
        return EXIT_AUTH
    if lost.is_set():
        log.error("lost the lease: exiting so a fresh process starts from a clean list")
        return EXIT_LOST_LEASE
    if controller.fatal:
        return 3
    log.info("stopped")
    return EXIT_OK
