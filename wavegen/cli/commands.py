"""The command table: each `wavegen` command's name and the module that registers it, read by the typer app."""

from __future__ import annotations

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
