"""`wavegen explain`: which workload depends on which ConfigMap/Secret key (text, JSON or Mermaid)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from ..errors import EXIT_FINDINGS, EXIT_OK
from ..inputs.files import read_bundle
from ..inputs.flags import typer_annotation, with_hashing_flags
from ..inputs.options import HashingFlags, options_from_flags
from ..render.report import explain_json, explain_text, mermaid_graph, report_findings
from ..stream.engine import run
from .transform import PATHS

if TYPE_CHECKING:
    PathsArgument = list[str] | None
else:
    PathsArgument = typer_annotation(PATHS)  # the same [PATH]... as transform's
EXAMPLE = """\b
Examples:
  wavegen explain rendered/
  wavegen explain --format mermaid rendered/ > deps.mmd"""


@with_hashing_flags
def explain(
    paths: PathsArgument = None,
    format: Annotated[Literal["text", "json", "mermaid"], typer.Option("--format", help="output format")] = "text",
    *,
    flags: HashingFlags,
) -> int:
    """Show which workload depends on which ConfigMap/Secret key."""
    _, inputs = read_bundle(paths or ["-"])
    result = run(inputs, options_from_flags(flags))
    if format == "json":
        sys.stdout.write(explain_json(result.plan))
    else:
        report_findings(result.findings)
        sys.stdout.write(mermaid_graph(result.plan) if format == "mermaid" else explain_text(result.plan))
    return EXIT_FINDINGS if result.has_errors else EXIT_OK


def register(app: typer.Typer) -> None:
    app.command("explain", help="Show which workload depends on which ConfigMap/Secret key.", epilog=EXAMPLE)(explain)
