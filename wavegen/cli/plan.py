"""`wavegen plan`: which workloads roll between two bundles (paths, stdin or git revisions), and why."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from ..errors import EXIT_FINDINGS, EXIT_OK
from ..inputs.flags import with_hashing_flags
from ..inputs.options import HashingFlags, options_from_flags

if TYPE_CHECKING:
    from ..core.model import Finding
    from ..inputs.sides import Side

# Documented in docs/plan.md: like `git diff --exit-code`, a distinct code when something would roll.
EXIT_WOULD_ROLL = 4
FORMATS = ("text", "json", "markdown")
EXAMPLE = """\b
Examples:
  wavegen plan old.yaml new.yaml
  wavegen plan --git-base origin/main --format markdown rendered/ >> "$GITHUB_STEP_SUMMARY"
  helm template app ./chart | wavegen plan --exit-code live.yaml -"""


def _findings(base: Side, head: Side) -> list[tuple[str, Finding]]:
    """Every finding of the head side; of the base side only errors (its warnings are history)."""
    from ..core.model import Severity

    found = [("base", f) for f in base.plan.findings if f.severity is Severity.ERROR]
    found.extend(("head", f) for f in head.plan.findings)
    return found


def use_colour(stream: Any, environ: os._Environ[str] | dict[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    isatty = getattr(stream, "isatty", None)
    return "NO_COLOR" not in env and bool(isatty and isatty())


@with_hashing_flags
def plan(
    paths: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[PATH]...", help="BASE HEAD, or with --git-base the paths to read (default .)", show_default=False
        ),
    ] = None,
    git_base: Annotated[
        str | None, typer.Option("--git-base", metavar="REV", help="read the base bundle from this git revision")
    ] = None,
    git_head: Annotated[
        str | None,
        typer.Option("--git-head", metavar="REV", help="read the head bundle from this revision (default: working tree)"),
    ] = None,
    format: Annotated[Literal["text", "json", "markdown"], typer.Option("--format", help="output format")] = "text",
    show_values: Annotated[
        bool,
        typer.Option("--show-values", help="show a unified diff of changed ConfigMap values (Secret values are never shown)"),
    ] = False,
    exit_code: Annotated[
        bool,
        typer.Option(
            "--exit-code",
            help=f"exit {EXIT_WOULD_ROLL} when a workload would roll, 0 when none would (like git diff --exit-code)",
        ),
    ] = False,
    *,
    flags: HashingFlags,
) -> int:
    """Compare two rendered bundles and report which workloads will roll, and why.

    BASE HEAD are files, directories, or - for stdin; or use --git-base REV [--git-head REV] [PATH...]. The
    report names the ConfigMap/Secret keys that make each workload roll, and the workloads that will not roll
    although their config changed.
    """
    from ..core.model import Severity
    from ..inputs.sides import build_side, compare_sides, read_sides
    from ..render import plan_report
    from ..render.report import report_findings

    options = options_from_flags(flags)
    (base_label, base_inputs), (head_label, head_inputs) = read_sides(paths or [], git_base, git_head)
    base = build_side(base_label, base_inputs, options)
    head = build_side(head_label, head_inputs, options)
    findings = _findings(base, head)
    if format != "json":
        for side, finding in findings:
            report_findings([finding], side=side)
    if any(f.severity is Severity.ERROR for _, f in findings):
        if format == "json":
            sys.stdout.write(plan_report.render_json(None, base, head, options, findings, show_values))
        return EXIT_FINDINGS
    result = compare_sides(base, head, options)
    if format == "json":
        sys.stdout.write(plan_report.render_json(result, base, head, options, findings, show_values))
    elif format == "markdown":
        sys.stdout.write(plan_report.render_markdown(result, base, head, options, findings, show_values))
    else:
        sys.stdout.write(plan_report.render_text(result, base, head, show_values, use_colour(sys.stdout)))
    sys.stdout.flush()
    if exit_code and result.would_roll:
        return EXIT_WOULD_ROLL
    return EXIT_OK


def register(app: typer.Typer) -> None:
    app.command(
        "plan", help=plan.__doc__, short_help="Show which workloads will roll between two bundles, and why.", epilog=EXAMPLE
    )(plan)


__all__ = ["EXIT_WOULD_ROLL", "FORMATS", "plan", "register", "use_colour"]
