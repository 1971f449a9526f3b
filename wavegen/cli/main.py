"""Command line: parses flags, picks output formats, maps outcomes to exit codes."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from .. import __version__
from ..core.model import Finding
from ..errors import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, WavegenError
from ..inputs.files import STDIN_NAME, expand_paths, join_streams, read_inputs, write_atomically
from ..inputs.options import add_core_flags, options_from_args
from ..render.report import explain_json, explain_text, finding_line, mermaid_graph
from ..stream.engine import InputDocument, Result, run

EXIT_INTERNAL = 3

# Adapters living in their own modules register their subcommands through
# ``register(subparsers)``; they must keep heavy imports inside their handlers.
PLUGGABLE_COMMANDS = (
    "wavegen.integrations.post_render",
    "wavegen.integrations.krm",
    "wavegen.cli.plan",
    "wavegen.controller",
    "wavegen.cli.manifests",
)


def in_github_actions(environ: os._Environ[str] | dict[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    return env.get("GITHUB_ACTIONS") == "true"


def report_findings(findings: Sequence[Finding]) -> None:
    github = in_github_actions()
    for finding in findings:
        print(finding_line(finding, github), file=sys.stderr)


def transform_inputs(args: argparse.Namespace) -> tuple[list[Path | None], list[InputDocument], Result]:
    paths = expand_paths(args.paths or ["-"])
    if not paths:
        raise WavegenError("no manifest files (*.yaml, *.yml, *.json) found", file=" ".join(args.paths))
    inputs = read_inputs(paths)
    options = options_from_args(args)
    return paths, inputs, run(inputs, options)


def cmd_transform(args: argparse.Namespace) -> int:
    if args.in_place and args.check:
        raise WavegenError("--in-place and --check cannot be combined", exit_code=EXIT_USAGE)
    paths, inputs, result = transform_inputs(args)
    report_findings(result.findings)
    if result.has_errors:
        return EXIT_FINDINGS
    if args.check:
        import difflib

        stale = result.changed(inputs)
        for index in stale:
            name = inputs[index].name
            before = inputs[index].data.decode("utf-8", "replace").splitlines(keepends=True)
            after = result.outputs[index].decode("utf-8", "replace").splitlines(keepends=True)
            sys.stdout.writelines(difflib.unified_diff(before, after, f"a/{name}", f"b/{name}"))
        if stale:
            print(f"wavegen: {len(stale)} file(s) have stale config hashes", file=sys.stderr)
            return EXIT_FINDINGS
        return EXIT_OK
    if args.in_place:
        if any(p is None for p in paths):
            raise WavegenError("--in-place cannot write to standard input", exit_code=EXIT_USAGE)
        write_atomically(
            [(p, result.outputs[i]) for i, p in enumerate(paths) if p is not None and inputs[i].data != result.outputs[i]]
        )
        return EXIT_OK
    data = join_streams(result.outputs)
    if args.output:
        write_atomically([(Path(args.output), data)])
    else:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    return EXIT_OK


def cmd_explain(args: argparse.Namespace) -> int:
    _, _, result = transform_inputs(args)
    if args.format == "json":
        sys.stdout.write(explain_json(result.plan))
    else:
        report_findings(result.findings)
        sys.stdout.write(mermaid_graph(result.plan) if args.format == "mermaid" else explain_text(result.plan))
    return EXIT_FINDINGS if result.has_errors else EXIT_OK


BUILTIN_COMMANDS = frozenset(("transform", "explain"))


def _requested_command(argv: Sequence[str]) -> str | None:
    return next((arg for arg in argv if not arg.startswith("-")), None)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The CLI parser; plugin commands are imported only when one of them may be asked for."""
    parser = argparse.ArgumentParser(
        prog="wavegen",
        description="Roll Kubernetes workloads when the ConfigMaps and Secrets they consume change.",
    )
    parser.add_argument("--version", action="version", version=f"wavegen {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    transform = sub.add_parser("transform", help="inject config hashes into a rendered bundle")
    transform.add_argument("paths", nargs="*", help=f"files or directories; - or nothing for stdin ({STDIN_NAME})")
    mode = transform.add_mutually_exclusive_group()
    mode.add_argument("-i", "--in-place", action="store_true", help="rewrite files in place, atomically")
    mode.add_argument("--check", action="store_true", help="exit 1 and print a diff if any hash is stale")
    transform.add_argument("-o", "--output", metavar="FILE", help="write the result to FILE (atomically)")
    add_core_flags(transform)
    transform.set_defaults(func=cmd_transform)

    explain = sub.add_parser("explain", help="show which workload depends on which ConfigMap/Secret key")
    explain.add_argument("paths", nargs="*", help="files or directories; - or nothing for stdin")
    explain.add_argument("--format", choices=("text", "json", "mermaid"), default="text")
    add_core_flags(explain)
    explain.set_defaults(func=cmd_explain)

    # The hot path (transform/explain in a pipeline) skips importing commands it does not use.
    wanted = _requested_command(sys.argv[1:] if argv is None else argv)
    plugins = () if wanted in BUILTIN_COMMANDS else PLUGGABLE_COMMANDS
    for module_name in plugins:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as err:
            if err.name == module_name:
                continue
            raise
        register = getattr(module, "register", None)
        if callable(register):
            register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        code: int = args.func(args)
        return code
    except WavegenError as err:
        print(f"wavegen: error: {err}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_FINDINGS
    except Exception as err:  # a bug: one line, no traceback, no values
        print(f"wavegen: internal error: {type(err).__name__} (please report this)", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    raise SystemExit(main())
