"""The typer application behind `wavegen`: the root options and one module per command, built on demand."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence
from typing import Annotated

import typer

from .. import __version__
from ..errors import EXIT_USAGE
from ..inputs.flags import invoke, new_app
from . import COMPLETE_VAR
from .commands import COMMANDS

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


def run(args: Sequence[str]) -> int:
    """`wavegen ARGS` through typer: help, completion, every command and every usage error."""
    app = build_app(_requested_command(args))
    if not args and COMPLETE_VAR not in os.environ:
        command = typer.main.get_command(app)
        with command.make_context("wavegen", [], resilient_parsing=True) as context:
            print(command.get_help(context), file=sys.stderr)
        return EXIT_USAGE
    return invoke(app, args, "wavegen")
