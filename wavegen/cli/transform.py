"""`wavegen transform`: inject config hashes into a rendered bundle (stdin, files or directories)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ..errors import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, WavegenError
from ..inputs.files import STDIN_NAME, join_streams, read_bundle, write_atomically
from ..inputs.flags import with_hashing_flags
from ..inputs.options import HashingFlags, options_from_flags
from ..render.report import report_findings
from ..stream.engine import run

PathsArgument = Annotated[
    list[str] | None,
    typer.Argument(metavar="[PATH]...", help=f"files or directories; - or nothing for stdin ({STDIN_NAME})", show_default=False),
]
EXAMPLE = """\b
Examples:
  helm template app ./chart | wavegen transform > rendered.yaml
  wavegen transform --check rendered/      # exit 1 and a diff if a hash is stale
  wavegen transform -i rendered/           # rewrite stale files in place"""


@with_hashing_flags
def transform(
    paths: PathsArgument = None,
    in_place: Annotated[bool, typer.Option("-i", "--in-place", help="rewrite files in place, atomically")] = False,
    check: Annotated[bool, typer.Option("--check", help="exit 1 and print a diff if any hash is stale")] = False,
    output: Annotated[
        str | None, typer.Option("-o", "--output", metavar="FILE", help="write the result to FILE (atomically)")
    ] = None,
    *,
    flags: HashingFlags,
) -> int:
    """Inject config hashes into a rendered bundle."""
    if in_place and check:
        raise WavegenError("--in-place and --check cannot be combined", exit_code=EXIT_USAGE)
    files, inputs = read_bundle(paths or ["-"])
    result = run(inputs, options_from_flags(flags))
    report_findings(result.findings)
    if result.has_errors:
        return EXIT_FINDINGS
    if check:
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
    if in_place:
        if any(p is None for p in files):
            raise WavegenError("--in-place cannot write to standard input", exit_code=EXIT_USAGE)
        write_atomically(
            [(p, result.outputs[i]) for i, p in enumerate(files) if p is not None and inputs[i].data != result.outputs[i]]
        )
        return EXIT_OK
    data = join_streams(result.outputs)
    if output:
        write_atomically([(Path(output), data)])
    else:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    return EXIT_OK


def register(app: typer.Typer) -> None:
    app.command("transform", help="Inject config hashes into a rendered bundle.", epilog=EXAMPLE)(transform)
