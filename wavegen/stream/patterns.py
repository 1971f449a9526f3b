"""The stream layer's regular expressions, built from precompiled tables so that a run need not import re.

Importing ``re`` costs a small run about 4 ms of its start-up (re and the enum, functools and
collections modules it loads), as much as wavegen's own work on a small chart, and compiling
the reader's patterns another 0.8 ms. ``hack/precompile_patterns.py`` records what re's
compiler hands ``_sre.compile`` for each pattern the stream layer uses and writes it to
``precompiled.py``; here those arguments go straight to ``_sre.compile``, which gives the same
pattern object ``re.compile`` would (equal, by its code). On another Python, whose ``_sre``
takes other codes, and for a pattern the table lacks, ``re.compile`` builds it as before.
"""

from __future__ import annotations

import _sre  # type: ignore[import-not-found]  # re's own C engine: a built-in module
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from re import Match, Pattern
    from typing import Any, AnyStr, Final

    from .precompiled import Entry

    Table = dict[tuple[str | bytes, int], Entry]

# re.DOTALL's value, the same in every Python 3
DOTALL: Final = 16

_compiled: dict[tuple[str | bytes, int], Pattern[Any]] = {}
# Set to a set by hack/precompile_patterns.py: every pattern asked for is recorded in it.
recorded: set[tuple[str | bytes, int]] | None = None
_table: Table | None = None


def _precompiled() -> Table:
    """The table for this interpreter, or an empty one when its ``_sre`` is not the one the table was made with."""
    global _table
    if _table is None:
        from . import precompiled

        same = sys.implementation.cache_tag == precompiled.CACHE_TAG and (_sre.MAGIC, _sre.CODESIZE) == precompiled.SRE
        _table = precompiled.PATTERNS if same else {}
    return _table


def compile(pattern: AnyStr, flags: int = 0) -> Pattern[AnyStr]:
    """``re.compile(pattern, flags)``, from the precompiled table when it holds the pattern."""
    key = (pattern, flags)
    built = _compiled.get(key)
    if built is None:
        if recorded is not None:
            recorded.add(key)
        entry = _precompiled().get(key)
        if entry is None:
            import re

            built = re.compile(pattern, flags)
        else:
            final_flags, code, groups, group_index, index_group = entry
            built = _sre.compile(pattern, final_flags, list(code), groups, dict(group_index), index_group)
        _compiled[key] = built
    return built


def match(pattern: AnyStr, text: AnyStr, flags: int = 0) -> Match[AnyStr] | None:
    return compile(pattern, flags).match(text)


def fullmatch(pattern: AnyStr, text: AnyStr, flags: int = 0) -> Match[AnyStr] | None:
    return compile(pattern, flags).fullmatch(text)


def sub(pattern: AnyStr, replace: Callable[[Match[AnyStr]], AnyStr], text: AnyStr) -> AnyStr:
    """``re.sub`` with a function: a replacement string with a backslash would make ``_sre`` import re."""
    return compile(pattern).sub(replace, text)


def finditer(pattern: AnyStr, text: AnyStr) -> Iterator[Match[AnyStr]]:
    return compile(pattern).finditer(text)


def findall(pattern: AnyStr, text: AnyStr) -> list[Any]:
    return compile(pattern).findall(text)


# The characters re.escape escapes (Python 3.7 and later): what is special in a pattern, and whitespace.
_SPECIAL: Final = {ord(c): "\\" + c for c in "()[]{}?*+-|^$\\.&~# \t\n\r\v\f"}


def escape(text: str) -> str:
    """``re.escape(text)``."""
    return text.translate(_SPECIAL)
