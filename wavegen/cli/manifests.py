"""`wavegen manifests`: install manifests for `wavegen watch`, rendered from the jinja2 templates shipped in the package."""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import Annotated, Literal

import typer

from ..inputs.flags import CONTEXT_SETTINGS

DEFAULT_IMAGE_REPOSITORY = "ghcr.io/wavegen/wavegen"
METRICS_PORT = 8080
EXAMPLE = """\b
Examples:
  wavegen manifests | kubectl apply -f -
  wavegen manifests -n ops --scope namespace -- --namespaces shop,pay --all-workloads"""


def _controller_flags(extra: list[str]) -> argparse.Namespace:
    from ..errors import UsageError
    from .watch import parse_watch_flags

    parsed = parse_watch_flags(extra)
    for flag in ("--kubeconfig", "--context", "--leader-elect", "--lease-name", "--lease-namespace", "--metrics-address"):
        if any(a == flag or a.startswith(flag + "=") for a in extra):
            raise UsageError(f"controller flags: {flag} is set by the manifests themselves")
    return parsed


def render(args: argparse.Namespace) -> str:
    import jinja2

    from .. import __version__
    from ..controller.index import WORKLOAD_KINDS
    from ..errors import UsageError

    extra = list(args.controller_args)
    if extra and extra[0] == "--":
        extra = extra[1:]
    if args.replicas < 1:
        raise UsageError("--replicas must be at least 1")
    flags = _controller_flags(extra)
    kinds = [k.strip() for k in flags.kinds.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in WORKLOAD_KINDS]
    if unknown:
        raise UsageError(f"controller flags: unknown kind(s) {', '.join(unknown)}")
    watch_namespaces = [n.strip() for n in flags.namespaces.split(",") if n.strip()]
    if args.scope == "namespace":
        if flags.namespace_selector:
            raise UsageError("--namespace-selector needs --scope cluster (it lists namespaces)")
        if not watch_namespaces:
            # A namespaced install watches its own namespace unless told otherwise.
            watch_namespaces = [args.namespace]
            extra += ["--namespaces", args.namespace]
    groups: dict[str, list[str]] = {}
    for kind in kinds:
        info = WORKLOAD_KINDS[kind]
        group = info.api_version.rpartition("/")[0]
        groups.setdefault(group, []).append(info.plural)
    controller_args = [
        "watch",
        "--leader-elect",
        "--lease-name",
        args.name,
        "--lease-namespace",
        args.namespace,
        "--metrics-address",
        f":{METRICS_PORT}",
    ]
    if args.hmac_key_secret:
        if any(a == "--hmac-key-file" or a.startswith("--hmac-key-file=") for a in extra):
            raise UsageError("--hmac-key-secret and a --hmac-key-file controller flag cannot be combined")
        controller_args += ["--hmac-key-file", "/etc/wavegen/hmac/key"]
    controller_args += extra
    selector = {"app.kubernetes.io/name": "wavegen", "app.kubernetes.io/instance": args.name}
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("wavegen", "render/templates/manifests"),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,  # YAML, not HTML; every string is emitted through tojson
    )
    env.policies["json.dumps_kwargs"] = {"sort_keys": False}
    text = env.get_template("install.yaml.j2").render(
        version=__version__,
        command_line=shlex.join(sys.argv[2:]) if len(sys.argv) > 2 else "",
        name=args.name,
        namespace=args.namespace,
        scope=args.scope,
        replicas=args.replicas,
        image=args.image or f"{DEFAULT_IMAGE_REPOSITORY}:{__version__}",
        args=controller_args,
        labels={**selector, "app.kubernetes.io/version": __version__, "app.kubernetes.io/component": "controller"},
        selector=selector,
        watch_namespaces=watch_namespaces,
        namespace_selector=flags.namespace_selector,
        workload_groups=sorted(groups.items()),
        create_namespace=args.create_namespace,
        hmac_key_secret=args.hmac_key_secret,
        metrics_port=METRICS_PORT,
    )
    return "\n".join(line.rstrip() for line in text.splitlines() if line.strip()) + "\n"


def manifests(
    controller_args: Annotated[
        list[str] | None,
        typer.Argument(metavar="[-- WATCH-FLAGS...]", help="-- then flags for `wavegen watch`", show_default=False),
    ] = None,
    namespace: Annotated[
        str, typer.Option("-n", "--namespace", metavar="NAMESPACE", help="install namespace")
    ] = "wavegen-system",
    scope: Annotated[
        Literal["namespace", "cluster"],
        typer.Option("--scope", help="cluster: one ClusterRole; namespace: a Role in each watched namespace"),
    ] = "cluster",
    replicas: Annotated[int, typer.Option("--replicas", help="controller replicas; > 1 adds a PodDisruptionBudget")] = 1,
    image: Annotated[
        str | None,
        typer.Option("--image", metavar="IMAGE", help=f"controller image (default: {DEFAULT_IMAGE_REPOSITORY}:<version>)"),
    ] = None,
    name: Annotated[str, typer.Option("--name", metavar="NAME", help="name of every object")] = "wavegen",
    create_namespace: Annotated[bool, typer.Option("--create-namespace", help="also render the Namespace")] = False,
    hmac_key_secret: Annotated[
        str | None, typer.Option("--hmac-key-secret", metavar="SECRET", help="mount this Secret's 'key' as the HMAC key")
    ] = None,
) -> int:
    """Print install manifests for the watch controller (ServiceAccount, RBAC, Deployment).

    Flags after -- are passed to the controller (e.g. -- --window 5 --all-workloads); --namespaces, --kinds and
    --namespace-selector there also shape the RBAC.
    """
    values = dict(locals())  # exactly the flags: render() reads them by name
    values["controller_args"] = list(controller_args or [])
    sys.stdout.write(render(argparse.Namespace(**values)))
    return 0


def register(app: typer.Typer) -> None:
    app.command("manifests", epilog=EXAMPLE, context_settings={**CONTEXT_SETTINGS, "show_default": True})(manifests)
