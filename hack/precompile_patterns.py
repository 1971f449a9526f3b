"""Writes wavegen/stream/precompiled.py: what re's compiler hands _sre.compile for each pattern the stream layer uses.

Usage: ``python hack/precompile_patterns.py`` (rewrite it for this interpreter) or ``--check`` (exit 1 if
the file differs from what this interpreter would write). The patterns are those the stream
layer asks wavegen.stream.patterns for while `wavegen transform` imports, those its call sites
name by a module constant (found in their source), and the families built from a value
(literal block indentations 1-64, the YAML 1.1 types, the UTF-8 sequences the reader declines).
The file holds one interpreter's codes (``_sre``'s opcodes change between Python versions);
patterns.py uses it only on that one.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from wavegen.stream import patterns  # noqa: E402 (from this tree)

TARGET = ROOT / "wavegen" / "stream" / "precompiled.py"


_CALLS = ("compile", "match", "fullmatch", "sub", "finditer", "findall")


def _pattern_users() -> list[str]:
    """The modules of wavegen that import wavegen.stream.patterns, by name."""
    imports = re.compile(r"^from (?:\.|\.\.stream|wavegen\.stream) import [^\n]*\bpatterns\b", re.M)
    found = []
    for path in sorted((ROOT / "wavegen").rglob("*.py")):
        if imports.search(path.read_text()):
            found.append(".".join(path.relative_to(ROOT).with_suffix("").parts))
    return found


def _named_arguments(module: Any) -> Iterator[tuple[str | bytes, int]]:
    """The patterns a module passes to wavegen.stream.patterns by the name of one of its constants
    (``patterns.match(_KEY, text)``, ``patterns.compile(_A if x else _B)``), with their flags."""
    tree = ast.parse(Path(module.__file__).read_text())
    for call in ast.walk(tree):
        if not (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and isinstance(call.func.value, ast.Name)
            and call.func.value.id == "patterns"
            and call.func.attr in _CALLS
        ):
            continue
        flags = 0
        if call.func.attr in ("compile", "match", "fullmatch") and len(call.args) == (2 if call.func.attr == "compile" else 3):
            flag = call.args[-1]
            assert isinstance(flag, ast.Attribute) and isinstance(flag.value, ast.Name) and flag.value.id == "patterns"
            flags = getattr(patterns, flag.attr)
        first = call.args[0]
        names = [first.body, first.orelse] if isinstance(first, ast.IfExp) else [first]
        for name in names:
            if isinstance(name, ast.Name) and isinstance(getattr(module, name.id, None), (str, bytes)):
                yield getattr(module, name.id), flags


def recorded_patterns() -> list[tuple[str | bytes, int]]:
    """Every pattern the stream layer asks for, sorted: at import, by name at its call sites, and the
    families built from values."""
    patterns.recorded = set()
    patterns._table = {}  # the file being rewritten may be stale: build every pattern with re
    modules = [importlib.import_module(name) for name in _pattern_users()]
    importlib.import_module("wavegen.cli.transform")
    asked = set(patterns.recorded)
    for module in modules:
        asked.update(_named_arguments(module))
    from wavegen.stream import fastparse, resolver, tree

    asked.update((fastparse.shallower_line(block), 0) for block in range(1, fastparse._MOST_PRECOMPILED_INDENT + 1))
    asked.update((characters, 0) for characters in fastparse._UNREAD_UTF8.values())
    for tag in resolver._LANGUAGES:
        resolver._language(tag)
    tree._field_part()
    asked.update(patterns.recorded)
    return sorted(asked, key=lambda key: (isinstance(key[0], bytes), repr(key)))


def compiler_arguments(pattern: str | bytes, flags: int) -> tuple[Any, ...]:
    """What re's compiler passes _sre.compile for the pattern (its own cache bypassed)."""
    import _sre
    import re._compiler

    seen: list[tuple[Any, ...]] = []
    real = _sre.compile

    def capture(*arguments: Any) -> Any:
        seen.append(arguments)
        return real(*arguments)

    _sre.compile = capture
    try:
        re._compiler.compile(pattern, flags)
    finally:
        _sre.compile = real
    (arguments,) = seen
    return arguments


def render() -> str:
    import _sre

    lines = [
        '"""Precompiled stream patterns for one interpreter: written by hack/precompile_patterns.py, do not edit."""',
        "",
        "from __future__ import annotations",
        "",
        "TYPE_CHECKING = False",
        "if TYPE_CHECKING:",
        "    from typing import Final",
        "",
        "    Entry = tuple[int, tuple[int, ...], int, tuple[tuple[str, int], ...], tuple[str | None, ...]]",
        "",
        f"CACHE_TAG: Final = {sys.implementation.cache_tag!r}",
        f"SRE: Final = {(_sre.MAGIC, _sre.CODESIZE)!r}",
        "# (pattern, flags asked for): (flags, code, groups, group index, index group), as re's compiler passes them",
        "PATTERNS: Final[dict[tuple[str | bytes, int], Entry]] = {",
    ]
    for pattern, flags in recorded_patterns():
        passed_pattern, final_flags, code, groups, group_index, index_group = compiler_arguments(pattern, flags)
        assert passed_pattern == pattern
        entry = (final_flags, tuple(int(op) for op in code), groups, tuple(group_index.items()), tuple(index_group))
        lines.append(f"    ({pattern!r}, {flags!r}): {entry!r},")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file differs from what would be written")
    args = parser.parse_args()
    text = render()
    if args.check:
        if TARGET.read_text() != text:
            print(f"{TARGET.relative_to(ROOT)} is stale: run python hack/precompile_patterns.py", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
