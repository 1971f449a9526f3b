"""The `wavegen` command: a plain `wavegen transform ...` runs without typer, everything else through the typer app."""

from __future__ import annotations

import gc
import os
import sys
from _collections_abc import Sequence

from ..errors import EXIT_INTERNAL
from .commands import COMMANDS, COMPLETE_VAR

TYPE_CHECKING = False

if TYPE_CHECKING:
    import typer

__all__ = ["COMMANDS", "EXIT_INTERNAL", "build_app", "console", "main"]


def build_app(only: str | None = None) -> typer.Typer:
    """The typer CLI; with ``only`` just that command."""
    from .app import build_app as build

    return build(only)


def main(argv: Sequence[str] | None = None) -> int:
    return _run(argv)[0]


def console() -> int:
    """The installed `wavegen` command: :func:`main`, and after a plain transform an exit without the
    interpreter's teardown once stdout and stderr are flushed.

    Freeing every object and module one by one took a small run about 2 ms of its 19 (CPU time), a
    large one 3 ms or more; a transform has closed every file it wrote (``write_atomically``) and
    registers nothing to run at exit. The cyclic collector stays off to that exit: turned on again, it
    would first sweep every object the run made, for nothing. Any other command, or a stream that cannot
    be flushed, leaves as Python does, with its messages.
    """
    code, plain = _run(None, exiting=True)
    if plain:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:
            return code
        os._exit(code)
    return code


def _run(argv: Sequence[str] | None, *, exiting: bool = False) -> tuple[int, bool]:
    """The exit code, and whether the typer-free transform ran (with ``exiting``, the collector stays
    off after it: the process ends next)."""
    args = list(sys.argv[1:] if argv is None else argv)
    # Pipelines run `wavegen transform` on every render: its plain invocations skip importing typer and
    # click (about 30 ms). The reader takes only shapes whose meaning is unambiguous and hands every other
    # argv (help, completion, unknown or malformed options) to typer, so messages and exit codes are typer's.
    if args[:1] == ["transform"] and COMPLETE_VAR not in os.environ:
        # Importing the transform path builds thousands of objects, none of them garbage: the cyclic
        # collector ran over them several times on the way (0.7 ms of a small chart's run). The engine
        # keeps it off while it runs anyway; it is on again once the transform is done, unless the
        # process exits next.
        collecting = gc.isenabled()
        gc.disable()
        code = None
        try:
            from .transform import run_plain

            code = run_plain(args[1:])
        finally:
            if collecting and not (exiting and code is not None):
                gc.enable()
        if code is not None:
            return code, True
    from .app import run

    return run(args), False


if __name__ == "__main__":
    raise SystemExit(main())
