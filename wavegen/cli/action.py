"""Hidden `wavegen action`: the GitHub Action step, the same as ``python -m wavegen.integrations.action``."""

from __future__ import annotations

import typer


def action() -> int:
    """Run the GitHub Action step (inputs come from WAVEGEN_INPUT_* environment variables)."""
    from ..integrations.action import main

    return main()


def register(app: typer.Typer) -> None:
    app.command("action", hidden=True)(action)
