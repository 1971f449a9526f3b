"""`wavegen transform`: inject config hashes into a rendered bundle (stdin, files or directories)."""

from __future__ import annotations

import sys
from _collections_abc import Sequence

from ..errors import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, WavegenError
from ..inputs.files import STDIN_NAME, join_streams, read_bundle, write_atomically
from ..inputs.flags import Flag, invoke_directly, read_command_line, with_hashing_flags
from ..inputs.options import HashingFlags, options_from_flags
from ..stream.engine import handed_over, run, write_chunks

TYPE_CHECKING = False

if TYPE_CHECKING:
    import typer

PATHS = Flag("paths", (), f"files or directories; - or nothing for stdin ({STDIN_NAME})", "arguments", metavar="[PATH]...")
#: The command's own parameters in help order (the hashing flags follow): typer's declaration and the
#: typer-free reader of a plain `wavegen transform ...` are both made from this table.
FLAGS = (
    PATHS,
    Flag("in_place", ("-i", "--in-place"), "rewrite files in place, atomically", "switch"),
    Flag("check", ("--check",), "exit 1 and print a diff if any hash is stale", "switch"),
    Flag("output", ("-o", "--output"), "write the result to FILE (atomically)", metavar="FILE"),
)
EXAMPLE = """\b
Examples:
  helm template app ./chart | wavegen transform > rendered.yaml
  wavegen transform --check rendered/      # exit 1 and a diff if a hash is stale
  wavegen transform -i rendered/           # rewrite stale files in place"""


def transform(
    paths: list[str] | None = None,
    in_place: bool = False,
    check: bool = False,
    output: str | None = None,
    *,
    flags: HashingFlags,
) -> int:
    """Inject config hashes into a rendered bundle."""
    if in_place and check:
        raise WavegenError("--in-place and --check cannot be combined", exit_code=EXIT_USAGE)
    files, inputs = read_bundle(paths or ["-"], consumed=True)
    # Handed over: each file's bytes are freed once decoded (a large one's as it is); the result
    # holds its text as pieces.
    result = run(handed_over(inputs), options_from_flags(flags))
    if result.findings:
        from ..render.report import report_findings  # a run without findings need not load it

        report_findings(result.findings)
    if result.has_errors:
        return EXIT_FINDINGS
    result.release_sources()  # only the outputs are written from here on
    if check:
        from ..render.textdiff import unified_diff

        stale = result.changed()
        for index in stale:
            file = result.files[index]
            sys.stdout.writelines(unified_diff(file.original, file.chunks, file.name))
        if stale:
            print(f"wavegen: {len(stale)} file(s) have stale config hashes", file=sys.stderr)
            return EXIT_FINDINGS
        return EXIT_OK
    if in_place:
        if any(p is None for p in files):
            raise WavegenError("--in-place cannot write to standard input", exit_code=EXIT_USAGE)
        write_atomically([(p, result.files[i].documents) for i in result.changed() if (p := files[i]) is not None])
        return EXIT_OK
    text = join_streams([file.documents for file in result.files])
    if output:
        write_atomically([(output, text)])
    else:
        write_chunks(text, sys.stdout.buffer)
        sys.stdout.buffer.flush()
    return EXIT_OK


def run_plain(argv: Sequence[str]) -> int | None:
    """`wavegen transform ARGV` without importing typer when ARGV has a plain shape; None hands ARGV to typer."""
    kwargs = read_command_line(FLAGS, argv)
    if kwargs is None:
        return None
    return invoke_directly(lambda: transform(**kwargs))


def register(app: typer.Typer) -> None:
    command = with_hashing_flags(transform, FLAGS)
    app.command("transform", help="Inject config hashes into a rendered bundle.", epilog=EXAMPLE)(command)
