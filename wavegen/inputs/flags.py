"""Command lines: flags declared once as data (for typer and a typer-free reader); running a command with wavegen's exit codes."""

from __future__ import annotations

import sys
from _collections_abc import Callable, Mapping, Sequence

from ..core.plan import MISSING_POLICIES, PROFILES
from ..errors import EXIT_FINDINGS, EXIT_INTERNAL, EXIT_USAGE, UsageError, WavegenError
from .options import HMAC_KEY_ENV, HMAC_KEY_FILE_ENV, HashingFlags

# typing only for type checkers (see core/model.py): the typer-free path never imports it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import inspect
    from typing import Any, Literal, NamedTuple

    import typer

    FlagKind = Literal["switch", "value", "choice", "repeat", "arguments"]
else:
    from ..core.record import NamedTuple

    FlagKind = str


class Flag(NamedTuple):
    """One parameter of a command as data: typer's declaration and the typer-free reader are both made from it.

    ``switch`` is a bool option (default False); ``value`` a string option, ``choice`` one of ``choices`` and
    ``repeat`` a repeatable string option (each None when not given); ``arguments`` the positional words.
    """

    name: str
    decls: tuple[str, ...]
    help: str
    kind: FlagKind = "value"
    metavar: str | None = None
    choices: tuple[str, ...] = ()

    @property
    def default(self) -> bool | None:
        return False if self.kind == "switch" else None


#: Every hashing flag, in help order; a command gets them all with ``with_hashing_flags``.
HASHING_FLAGS: tuple[Flag, ...] = (
    Flag("profile", ("--profile",), "hash profile (default: wavegen)", "choice", choices=PROFILES),
    Flag("namespace", ("-n", "--namespace"), "namespace of objects without one (default: default)", metavar="NAMESPACE"),
    Flag("missing", ("--missing",), "missing reference policy (default: warn)", "choice", choices=MISSING_POLICIES),
    Flag("opt_in", ("--opt-in",), "annotate only workloads that ask", "switch"),
    Flag(
        "workload",
        ("--workload",),
        "add a workload kind and its pod template path(s), e.g. Rollout.argoproj.io=spec.template (repeatable)",
        "repeat",
        metavar="KIND[.GROUP]=PATH[,PATH]",
    ),
    Flag("config", ("--config",), "YAML config file (see README)", metavar="FILE"),
    Flag(
        "hmac_key_file",
        ("--hmac-key-file",),
        f"key for HMAC-SHA-256 hashes (or env {HMAC_KEY_FILE_ENV} / {HMAC_KEY_ENV})",
        metavar="FILE",
    ),
)

CommandFunction = Callable[..., int]


def typer_annotation(flag: Flag) -> Any:
    """The ``Annotated[type, typer.Option(...)]`` (or ``typer.Argument``) typer reads for ``flag``."""
    from typing import Annotated, Any, Literal, cast

    import typer

    if flag.kind == "arguments":
        return Annotated[list[str] | None, typer.Argument(metavar=flag.metavar, help=flag.help, show_default=False)]
    python_type: Any = {"switch": bool, "value": str | None, "repeat": list[str] | None}.get(flag.kind)
    if flag.kind == "choice":
        python_type = cast(Any, Literal)[flag.choices] | None
    return Annotated[python_type, typer.Option(*flag.decls, metavar=flag.metavar, help=flag.help)]


def _typer_parameter(flag: Flag, kind: inspect._ParameterKind) -> inspect.Parameter:
    import inspect

    return inspect.Parameter(flag.name, kind, annotation=typer_annotation(flag), default=flag.default)


def with_hashing_flags(func: CommandFunction, own: Sequence[Flag] | None = None) -> CommandFunction:
    """Give a command every hashing flag; it receives them as one ``flags: HashingFlags`` keyword argument.

    The command's own parameters come from its signature (typer annotations) or, given ``own``, from that table.
    """
    import functools
    import inspect

    signature = inspect.signature(func, eval_str=own is None)
    if own is None:
        params = [p for p in signature.parameters.values() if p.name != "flags"]
    else:
        params = [_typer_parameter(flag, inspect.Parameter.POSITIONAL_OR_KEYWORD) for flag in own]
    hashing = [_typer_parameter(flag, inspect.Parameter.KEYWORD_ONLY) for flag in HASHING_FLAGS]

    @functools.wraps(func)
    def command(*args: Any, **kwargs: Any) -> int:
        values = {flag.name: kwargs.pop(flag.name, flag.default) for flag in HASHING_FLAGS}
        return func(*args, flags=hashing_flags(values), **kwargs)

    del command.__wrapped__  # typer must see the combined signature below, not the original one
    signature = signature.replace(parameters=[*params, *hashing])
    command.__signature__ = signature  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in signature.parameters.values()}
    return command


def hashing_flags(values: Mapping[str, Any]) -> HashingFlags:
    """HashingFlags from the values typer (or ``read_command_line``) gave the hashing parameters."""
    return HashingFlags(**{**values, "workload": tuple(values["workload"] or ())})


def read_command_line(own: Sequence[Flag], argv: Sequence[str]) -> dict[str, Any] | None:
    """The keyword arguments typer would pass a ``with_hashing_flags(func, own)`` command for ``argv``, without typer.

    Reads only plain shapes: exact option names (``--name value``, ``--name=value``, ``-n value``), valid
    choices and positional words. Anything else (help, ``--``, unknown or clustered options, a missing
    value, an invalid choice) gives None, and the caller hands argv to typer, which owns every message.
    """
    flags = (*own, *HASHING_FLAGS)
    by_decl = {decl: flag for flag in flags for decl in flag.decls}
    values: dict[str, Any] = {flag.name: flag.default for flag in flags}
    positional = next((flag.name for flag in own if flag.kind == "arguments"), None)
    words: list[str] = []
    index = 0
    while index < len(argv):
        word = argv[index]
        index += 1
        if word == "-" or not word.startswith("-"):
            words.append(word)
            continue
        name, equals, inline = word.partition("=") if word.startswith("--") else (word, "", "")
        flag = by_decl.get(name)
        if flag is None:
            return None
        if flag.kind == "switch":
            if equals:
                return None
            values[flag.name] = True
            continue
        if equals:
            value = inline
        elif index < len(argv):
            value = argv[index]
            index += 1
        else:
            return None
        if flag.kind == "choice" and value not in flag.choices:
            return None
        values[flag.name] = [*(values[flag.name] or ()), value] if flag.kind == "repeat" else value
    if words:
        if positional is None:
            return None
        values[positional] = words
    hashing = {flag.name: values.pop(flag.name) for flag in HASHING_FLAGS}
    return {**values, "flags": hashing_flags(hashing)}


def parse_hashing_flags(words: Sequence[str], prog: str) -> HashingFlags:
    """Hashing flags from argv words (e.g. an Action's ``args`` input); any other word is a UsageError."""
    import typer

    if "--help" in words or "-h" in words:  # click would print help on stdout, where an Action writes annotations
        raise UsageError("--help is not a hashing option")

    def capture(*, flags: HashingFlags) -> int:
        return 0

    app = new_app("")
    app.command(prog)(with_hashing_flags(capture))
    command = typer.main.get_command(app)
    try:
        context = command.make_context(prog, list(words))
    except typer.TyperException as err:
        option = getattr(err, "option_name", None)
        if option:
            raise UsageError(f"unsupported option(s) {option} (only hashing options are accepted)") from None
        raise UsageError(one_line(err.format_message())) from None
    return hashing_flags({flag.name: context.params.get(flag.name, flag.default) for flag in HASHING_FLAGS})


def one_line(text: str) -> str:
    return " ".join(text.split())


def invoke(app: typer.Typer, argv: Sequence[str], prog: str) -> int:
    """Run a typer app like a shell would, but return the exit code; every failure is one line on stderr."""
    import typer

    def run() -> Any:
        try:
            command = typer.main.get_command(app)
            return command.main(list(argv), prog_name=prog, standalone_mode=False)
        except typer.TyperException as err:  # click's usage errors: bad flags, unknown commands
            context = getattr(err, "ctx", None)
            hint = f" (see '{context.command_path} --help')" if context is not None else ""
            print(f"wavegen: error: {one_line(err.format_message())}{hint}", file=sys.stderr)
            return err.exit_code
        except typer.Abort:
            return EXIT_FINDINGS

    return guarded(run)


def invoke_directly(func: Callable[[], int]) -> int:
    """Run a command function as ``invoke`` would once typer has parsed its flags: same exit codes and messages.

    The outcomes typer itself turns into exit codes are mirrored here (``typer.core._main`` with
    ``standalone_mode=False``): end of input is a blank line on stderr and exit 1, Ctrl-C exit 130,
    a closed stdout exit 1 with no complaint when Python flushes it at exit.
    """

    def run() -> int:
        try:
            return func()
        except EOFError:
            print(file=sys.stderr, flush=True)
            return EXIT_FINDINGS
        except KeyboardInterrupt:
            return 130
        except OSError as err:
            import errno

            if err.errno != errno.EPIPE:
                raise
            sys.stdout = _QuietFlush(sys.stdout)
            sys.stderr = _QuietFlush(sys.stderr)
            return EXIT_FINDINGS

    return guarded(run)


class _QuietFlush:
    """A stream whose flush ignores a closed pipe (what click does after EPIPE, so exit is silent)."""

    def __init__(self, wrapped: Any) -> None:
        self.wrapped = wrapped

    def flush(self) -> None:
        import errno

        try:
            self.wrapped.flush()
        except OSError as err:
            if err.errno != errno.EPIPE:
                raise

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.wrapped, attr)


def guarded(run: Callable[[], Any]) -> int:
    """Run a parsed command; a WavegenError is one line and its exit code, a bug one line and EXIT_INTERNAL."""
    try:
        result = run()
    except WavegenError as err:
        print(f"wavegen: error: {err}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_FINDINGS
    except SystemExit as done:  # shell completion and a broken pipe end this way inside typer
        return done.code if isinstance(done.code, int) else (EXIT_USAGE if done.code else 0)
    except Exception as err:  # a bug: one line, no traceback, no values
        print(f"wavegen: internal error: {type(err).__name__} (please report this)", file=sys.stderr)
        return EXIT_INTERNAL
    return result if isinstance(result, int) else 0


#: Context settings of every command: -h as well as --help, and help wrapped the same on every terminal.
CONTEXT_SETTINGS: dict[str, Any] = {"help_option_names": ["-h", "--help"], "terminal_width": 100, "max_content_width": 100}


def new_app(help_text: str, *, completion: bool = False, **settings: Any) -> typer.Typer:
    """A typer app that never prints a rich panel or a pretty traceback (both would break the one-line contract).

    Shell completion only for the `wavegen` program itself: on an internal parser it would be a live flag.
    """
    import typer

    return typer.Typer(
        help=help_text,
        rich_markup_mode=None,
        pretty_exceptions_enable=False,
        add_completion=completion,
        context_settings=CONTEXT_SETTINGS,
        **settings,
    )
