"""The `wavegen` command: a plain `wavegen transform`, `post-render` or `krm` runs without typer, the rest through typer."""

# No `from __future__ import annotations` here, nor in the package's __init__: the first module that
# has one imports __future__ (about 80 us), and the preloaded modules are compiled without it.
import gc
import os
import sys

from . import COMPLETE_VAR

TYPE_CHECKING = False

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    import typer

__all__ = ["COMPLETE_VAR", "build_app", "console", "main"]

# The transform path's modules compiled into one file, which a wheel ships beside this module
# (written at build time by wavegen/cli/preload.py): importlib's magic number for the interpreter
# that compiled them, the length of the index (4 bytes, little-endian), the index (marshalled: a
# module's name, whether it is a package, its path under the install root, its source's size and
# the length of its code), then each module's marshalled code, in the index's order, where each
# comes after the modules it imports.
PRELOAD_FILE = "transform-path.{tag}.bin"
# A preloaded module's source may be this much newer than the file: one install writes both.
PRELOAD_SLACK_SECONDS = 60


def __getattr__(name: str) -> "Any":
    # The command table and the exit code were importable from here; a plain transform imports neither
    # (errors comes with the transform path, commands only with typer's).
    if name == "COMMANDS":
        from .commands import COMMANDS

        return COMMANDS
    if name == "EXIT_INTERNAL":
        from ..errors import EXIT_INTERNAL

        return EXIT_INTERNAL
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def build_app(only: str | None = None) -> "typer.Typer":
    """The typer CLI; with ``only`` just that command."""
    from .app import build_app as build

    return build(only)


def main(argv: "Sequence[str] | None" = None) -> int:
    return _run(argv)[0]


def console() -> int:
    """The installed `wavegen` command: :func:`main`, and after a plain transform, post-render or krm an
    exit without the interpreter's teardown once stdout and stderr are flushed.

    Freeing every object and module one by one took a small run about 2 ms of its 19 (CPU time), a
    large one 3 ms or more; a transform has closed every file it wrote (``write_atomically``), a
    post-render or krm writes none, and none registers anything to run at exit. The cyclic collector stays
    off to that exit: turned on again, it would first sweep every object the run made, for nothing. Any
    other command, or a stream that cannot be flushed, leaves as Python does, with its messages.
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


def _run(argv: "Sequence[str] | None", *, exiting: bool = False) -> tuple[int, bool]:
    """The exit code, and whether the typer-free transform, post-render or krm ran (with ``exiting``, the
    collector stays off after it: the process ends next)."""
    args = list(sys.argv[1:] if argv is None else argv)
    # Pipelines run `wavegen transform` on every render, helm runs `wavegen post-render` on every install
    # and kustomize `wavegen krm` on every build: their plain invocations skip importing typer and click
    # (about 30 ms; post-render took 4.5 times transform's time on a small chart, krm 0.11 s for 0.06 s).
    # The reader takes only shapes whose meaning is unambiguous and hands every other argv (help,
    # completion, unknown or malformed options) to typer, so messages and exit codes are typer's.
    if args and args[0] in ("transform", "post-render", "krm") and COMPLETE_VAR not in os.environ:
        # Importing the transform path builds thousands of objects, none of them garbage: the cyclic
        # collector ran over them several times on the way (0.7 ms of a small chart's run). The engine
        # keeps it off while it runs anyway; it is on again once the transform is done, unless the
        # process exits next.
        collecting = gc.isenabled()
        gc.disable()
        code = None
        try:
            _preload_transform_path()
            if args[0] == "transform":
                from .transform import run_plain
            elif args[0] == "post-render":
                from .post_render import run_plain
            else:
                from .krm import run_plain

            code = run_plain(args[1:])
        finally:
            if collecting and not (exiting and code is not None):
                gc.enable()
        if code is not None:
            return code, True
    from .app import run

    return run(args), False


def _preload_transform_path() -> None:
    """Run the transform path's modules from the compiled file a wheel ships (see PRELOAD_FILE), not
    through importlib one by one.

    Finding, reading and checking each of the ~25 modules one by one took about 1 ms of the 3.7 ms
    a small chart's run spent importing them. The file is used only when it was written for this
    interpreter (its magic number), asserts are on (no ``-O``), and every module's source has the
    size it was compiled from and is not newer than the file; otherwise, and for any module
    already loaded, importlib imports as usual. A module run from it is what importlib would have
    made: the same spec, loader, ``__file__`` and ``__cached__``, and its code's file names are the
    installed sources'. Modules are read one at a time, as importlib reads their ``.pyc`` files.
    """
    tag = sys.implementation.cache_tag
    if tag is None or sys.flags.optimize or "wavegen.cli.transform" in sys.modules:
        return  # (the path's last module loaded: a caller of main() has run a transform before)
    here = os.path.dirname(__file__)
    try:
        file = open(f"{here}/{PRELOAD_FILE.format(tag=tag)}", "rb")  # noqa: SIM115  # closed below
    except OSError:
        return  # a source tree, or an editable install: importlib imports them
    import _frozen_importlib as bootstrap
    import _frozen_importlib_external as external
    import _imp
    import marshal

    module_type = type(sys)

    with file:
        written = os.fstat(file.fileno()).st_mtime
        head = file.read(8)
        if head[:4] != external.MAGIC_NUMBER:
            return
        try:
            index = marshal.loads(file.read(int.from_bytes(head[4:], "little")))
        except (EOFError, ValueError, TypeError):
            return
        root = os.path.dirname(os.path.dirname(here))
        for _, _, relative, size, _ in index:
            try:
                status = os.stat(f"{root}/{relative}")
            except OSError:
                return
            if status.st_size != size or status.st_mtime > written + PRELOAD_SLACK_SECONDS:
                return  # an edited install: its sources, through importlib
        loaded = sys.modules
        for name, package, relative, _, length in index:
            compiled = file.read(length)
            parent, _, child = name.rpartition(".")
            if name in loaded or parent not in loaded:
                continue
            try:
                code = marshal.loads(compiled)
            except (EOFError, ValueError, TypeError):
                return  # the file cut short: importlib imports the rest
            path = f"{root}/{relative}"
            folder, _, file_name = path.rpartition("/")
            loader = external.SourceFileLoader(name, path)
            spec = bootstrap.ModuleSpec(name, loader, origin=path, is_package=package)
            spec.has_location = True
            # What importlib's module_from_spec sets, set directly: its generic way (the spec's parent and
            # cached properties, a getattr per attribute) took 0.2 ms over the path's modules.
            spec.cached = (
                f"{folder}/__pycache__/{file_name[:-3]}.{tag}.pyc"
                if sys.pycache_prefix is None
                else external.cache_from_source(path)
            )
            module = module_type(name)
            module.__spec__ = spec
            module.__loader__ = loader
            module.__file__ = path
            module.__cached__ = spec.cached  # type: ignore[attr-defined]  # (what importlib sets)
            if package:
                module.__path__ = spec.submodule_search_locations = [folder]
                module.__package__ = name
            else:
                module.__package__ = parent
            _imp._fix_co_filename(code, path)  # type: ignore[attr-defined]  # what importlib does to a pyc's code
            loaded[name] = module
            try:
                exec(code, module.__dict__)
            except BaseException:
                del loaded[name]
                raise
            setattr(loaded[parent], child, module)


if __name__ == "__main__":
    raise SystemExit(main())
