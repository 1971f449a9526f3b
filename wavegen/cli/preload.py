"""The transform path compiled into the one file `wavegen transform` runs it from (cli/main.py), written as a wheel is built."""

from __future__ import annotations

import ast
import marshal
import sys
from pathlib import Path
from types import CodeType

from .main import PRELOAD_FILE

#: What a plain `wavegen transform` imports after wavegen.cli.main, each after the modules it imports
#: (tests/unit/test_preload.py fails when one is missing or out of order).
TRANSFORM_PATH = (
    "wavegen.errors",
    "wavegen.inputs",
    "wavegen.stream",
    "wavegen.core",
    "wavegen.core.record",
    "wavegen.core.model",
    "wavegen.core.hashing",
    "wavegen.core.refs",
    "wavegen.core.sources",
    "wavegen.core.wave",
    "wavegen.core.podtemplate",
    "wavegen.core.workloads",
    "wavegen.core.plan",
    "wavegen.stream.patterns",
    "wavegen.stream.resolver",
    "wavegen.stream.tree",
    "wavegen.stream.precompiled",
    "wavegen.stream.fastparse",
    "wavegen.stream.splice",
    "wavegen.stream.split",
    "wavegen.stream.engine",
    "wavegen.inputs.files",
    "wavegen.inputs.options",
    "wavegen.inputs.flags",
    "wavegen.cli.transform",
)


def preload_path(root: Path) -> Path:
    """Where the file for this interpreter goes under ``root``, the directory holding the wavegen package."""
    return root / "wavegen" / "cli" / PRELOAD_FILE.format(tag=sys.implementation.cache_tag)


def write(root: Path) -> Path:
    """Compile the TRANSFORM_PATH modules under ``root`` for this interpreter into its preload file.

    The same sources give the same bytes: code is compiled with its path relative to ``root`` (the
    reader points it at the installed file), with asserts, and without this module's own flags.
    """
    from importlib.util import MAGIC_NUMBER

    index = []
    codes = []
    for name in TRANSFORM_PATH:
        parts = name.split(".")
        package = root.joinpath(*parts, "__init__.py").is_file()
        relative = "/".join(parts) + ("/__init__.py" if package else ".py")
        source = (root / relative).read_bytes()
        codes.append(marshal.dumps(_compiled(source, relative)))
        index.append((name, package, relative, len(source), len(codes[-1])))
    listed = marshal.dumps(tuple(index))
    target = preload_path(root)
    target.write_bytes(b"".join([MAGIC_NUMBER, len(listed).to_bytes(4, "little"), listed, *codes]))
    return target


def _compiled(source: bytes, relative: str) -> CodeType:
    """The module's code, its ``from __future__ import annotations`` a compiler flag instead of a statement.

    Run, that statement imports ``__future__`` (about 80 us), which nothing else on the transform path
    needs: the module is compiled as the statement asks, without running it (its lines keep their
    numbers). Other future imports stay as written.
    """
    import __future__

    tree = ast.parse(source, relative)
    flags = 0
    kept = []
    for statement in tree.body:
        if (
            isinstance(statement, ast.ImportFrom)
            and statement.module == "__future__"
            and [alias.name for alias in statement.names] == ["annotations"]
        ):
            flags = __future__.annotations.compiler_flag
        else:
            kept.append(statement)
    tree.body = kept
    code: CodeType = compile(tree, relative, "exec", flags=flags, dont_inherit=True, optimize=0)
    return code
