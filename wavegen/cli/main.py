"""The `wavegen` command (typer): builds the app from one module per command and maps outcomes to exit codes."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence
from typing import Annotated

import typer

from .. import __version__
from ..errors import EXIT_USAGE
from ..inputs.flags import EXIT_INTERNAL, invoke, new_app

__all__ = ["COMMANDS", "EXIT_INTERNAL", "build_app", "main"]

#: Command name -> the module whose ``register(app)`` adds it; only the one asked for is imported.
COMMANDS = {
    "transform": "wavegen.cli.transform",
    "explain": "wavegen.cli.explain",
    "plan": "wavegen.cli.plan",
    "post-render": "wavegen.cli.post_render",
    "krm": "wavegen.cli.krm",
    "watch": "wavegen.cli.watch",
    "manifests": "wavegen.cli.manifests",
    "action": "wavegen.cli.action",
}
COMPLETE_VAR = "_WAVEGEN_COMPLETE"
DESCRIPTION = (
    "Roll Kubernetes workloads when the ConfigMaps and Secrets they consume change.\n\n"
    "\b\nExample:\n  helm template my-app ./chart | wavegen transform > rendered.yaml"
)


def _show_version(value: bool) -> None:
    if value:
        print(f"wavegen {__version__}")
        raise typer.Exit()


def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_show_version, is_eager=True, help="print the version and exit")
    ] = False,
) -> None:
    """Roll Kubernetes workloads when the ConfigMaps and Secrets they consume change."""


def build_app(only: str | None = None) -> typer.Typer:
    """The CLI; with ``only`` just that command (the hot path imports nothing it does not run)."""
    app = new_app(DESCRIPTION, completion=True, name="wavegen", no_args_is_help=False)
    app.callback()(_root)
    for name, module_name in COMMANDS.items():
        if only is None or name == only:
            importlib.import_module(module_name).register(app)
    return app


def _requested_command(argv: Sequence[str]) -> str | None:
    wanted = next((arg for arg in argv if not arg.startswith("-")), None)
    return wanted if wanted in COMMANDS else None


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    app = build_app(_requested_command(args))
    if not args and COMPLETE_VAR not in os.environ:
        command = typer.main.get_command(app)
        with command.make_context("wavegen", [], resilient_parsing=True) as context:
            print(command.get_help(context), file=sys.stderr)
        return EXIT_USAGE
    return invoke(app, args, "wavegen")


if __name__ == "__main__":
    raise SystemExit(main())
