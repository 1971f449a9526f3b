"""Command lines: the hashing flags declared once for typer, and running a typer command with wavegen's exit codes."""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any

import typer

from ..core.plan import MissingPolicy, Profile
from ..errors import EXIT_FINDINGS, EXIT_USAGE, UsageError, WavegenError
from .options import HMAC_KEY_ENV, HMAC_KEY_FILE_ENV, HashingFlags

EXIT_INTERNAL = 3
HASHING_PANEL = "Hashing"

ProfileFlag = Annotated[Profile | None, typer.Option("--profile", help="hash profile (default: wavegen)")]
NamespaceFlag = Annotated[
    str | None,
    typer.Option("-n", "--namespace", metavar="NAMESPACE", help="namespace of objects without one (default: default)"),
]
MissingFlag = Annotated[MissingPolicy | None, typer.Option("--missing", help="missing reference policy (default: warn)")]
OptInFlag = Annotated[bool, typer.Option("--opt-in", help="annotate only workloads that ask")]
WorkloadFlag = Annotated[
    list[str] | None,
    typer.Option(
        "--workload",
        metavar="KIND[.GROUP]=PATH[,PATH]",
        help="add a workload kind and its pod template path(s), e.g. Rollout.argoproj.io=spec.template (repeatable)",
    ),
]
ConfigFlag = Annotated[str | None, typer.Option("--config", metavar="FILE", help="YAML config file (see README)")]
HmacKeyFileFlag = Annotated[
    str | None,
    typer.Option(
        "--hmac-key-file", metavar="FILE", help=f"key for HMAC-SHA-256 hashes (or env {HMAC_KEY_FILE_ENV} / {HMAC_KEY_ENV})"
    ),
]

#: (parameter name, annotation, default) of every hashing flag, in help order.
_HASHING_PARAMETERS: tuple[tuple[str, Any, Any], ...] = (
    ("profile", ProfileFlag, None),
    ("namespace", NamespaceFlag, None),
    ("missing", MissingFlag, None),
    ("opt_in", OptInFlag, False),
    ("workload", WorkloadFlag, None),
    ("config", ConfigFlag, None),
    ("hmac_key_file", HmacKeyFileFlag, None),
)

CommandFunction = Callable[..., int]


def with_hashing_flags(func: CommandFunction) -> CommandFunction:
    """Give a command every hashing flag; it receives them as one ``flags: HashingFlags`` keyword argument."""
    signature = inspect.signature(func, eval_str=True)
    own = [p for p in signature.parameters.values() if p.name != "flags"]
    hashing = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=kind, default=default)
               for name, kind, default in _HASHING_PARAMETERS]  # fmt: skip

    @functools.wraps(func)
    def command(*args: Any, **kwargs: Any) -> int:
        values = {name: kwargs.pop(name, default) for name, _, default in _HASHING_PARAMETERS}
        return func(*args, flags=_hashing_flags(values), **kwargs)

    del command.__wrapped__  # typer must see the combined signature below, not the original one
    command.__signature__ = signature.replace(parameters=[*own, *hashing])  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in command.__signature__.parameters.values()}  # type: ignore[attr-defined]
    return command


def _hashing_flags(values: Mapping[str, Any]) -> HashingFlags:
    return HashingFlags(**{**values, "workload": tuple(values["workload"] or ())})


def parse_hashing_flags(words: Sequence[str], prog: str) -> HashingFlags:
    """Hashing flags from argv words (e.g. an Action's ``args`` input); any other word is a UsageError."""
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
    return _hashing_flags({name: context.params.get(name, default) for name, _, default in _HASHING_PARAMETERS})


def one_line(text: str) -> str:
    return " ".join(text.split())


def invoke(app: typer.Typer, argv: Sequence[str], prog: str) -> int:
    """Run a typer app like a shell would, but return the exit code; every failure is one line on stderr."""
    try:
        command = typer.main.get_command(app)
        result = command.main(list(argv), prog_name=prog, standalone_mode=False)
    except typer.TyperException as err:  # click's usage errors: bad flags, unknown commands
        context = getattr(err, "ctx", None)
        hint = f" (see '{context.command_path} --help')" if context is not None else ""
        print(f"wavegen: error: {one_line(err.format_message())}{hint}", file=sys.stderr)
        return err.exit_code
    except WavegenError as err:
        print(f"wavegen: error: {err}", file=sys.stderr)
        return err.exit_code
    except typer.Abort:
        return EXIT_FINDINGS
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
    return typer.Typer(
        help=help_text,
        rich_markup_mode=None,
        pretty_exceptions_enable=False,
        add_completion=completion,
        context_settings=CONTEXT_SETTINGS,
        **settings,
    )
