"""pre-commit hook entry: checks or fixes config hashes of the whole bundle each staged manifest belongs to."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer

from ..errors import EXIT_FINDINGS, EXIT_OK, UsageError
from ..inputs.files import MANIFEST_SUFFIXES, expand_paths, read_inputs, write_atomically
from ..inputs.flags import invoke, new_app, with_hashing_flags
from ..inputs.options import HashingFlags, options_from_flags
from ..render.report import finding_line
from ..render.textdiff import unified_diff
from ..stream.engine import run

PROG = "python -m wavegen.integrations.precommit"


@with_hashing_flags
def hook(
    files: Annotated[
        list[str] | None, typer.Argument(metavar="[FILE]...", help="files pre-commit passes (changed manifests)")
    ] = None,
    check: Annotated[bool, typer.Option("--check", help="fail if any hash in an affected bundle is stale")] = False,
    fix: Annotated[
        bool, typer.Option("--fix", help="rewrite stale hashes in affected bundles (fails if it changed files)")
    ] = False,
    bundle: Annotated[
        list[str] | None,
        typer.Option(
            "--bundle",
            metavar="DIR",
            help="a directory whose manifest files (recursively) form one bundle; files outside every --bundle are skipped",
        ),
    ] = None,
    *,
    flags: HashingFlags,
) -> int:
    """Check (--check) or fix (--fix) wavegen config hashes.

    Each file named belongs to a bundle: the --bundle directory holding it, or else the manifest files of its own
    directory. The whole bundle is hashed, so a ConfigMap change is caught even when only the ConfigMap's file is
    staged.
    """
    if check == fix:
        raise UsageError("give exactly one of --check and --fix")
    return process(files or [], bundle or [], fix, flags)


def _within(path: Path, directory: Path) -> bool:
    try:
        path.relative_to(directory)
    except ValueError:
        return False
    return True


def bundles_for(files: Sequence[str], bundle_dirs: Sequence[str]) -> dict[str, list[str]]:
    """Bundle directory -> the manifest files it holds, for every bundle a named file belongs to."""
    roots = [Path(d) for d in bundle_dirs]
    chosen: dict[str, list[str]] = {}
    for name in files:
        path = Path(name)
        if path.suffix not in MANIFEST_SUFFIXES:
            continue
        if roots:
            root = next((r for r in roots if _within(path.resolve(), r.resolve())), None)
            if root is None:
                continue
            key = str(root)
            if key not in chosen:
                chosen[key] = [str(p) for p in expand_paths([key]) if p is not None]
        else:
            directory = path.parent
            key = str(directory)
            if key not in chosen:
                chosen[key] = sorted(str(p) for p in directory.iterdir() if p.suffix in MANIFEST_SUFFIXES and p.is_file())
    return chosen


def process(files: Sequence[str], bundle_dirs: Sequence[str], fix: bool, flags: HashingFlags) -> int:
    options = options_from_flags(flags)
    code = EXIT_OK
    for bundle, names in sorted(bundles_for(files, bundle_dirs).items()):
        paths = [Path(n) for n in names]
        inputs = read_inputs(paths)
        result = run(inputs, options)
        for finding in result.findings:
            print(finding_line(finding), file=sys.stderr)
        if result.has_errors:
            code = EXIT_FINDINGS
            continue
        stale = result.changed()
        if not stale:
            continue
        code = EXIT_FINDINGS
        rolling = ", ".join(w.display for w in result.plan.workloads if w.changed) or "annotations to clean up"
        if fix:
            write_atomically([(paths[i], result.files[i].documents) for i in stale])
            for i in stale:
                print(f"wavegen: fixed config hashes in {inputs[i].name} (bundle {bundle}: {rolling})", file=sys.stderr)
            continue
        for i in stale:
            sys.stdout.writelines(unified_diff(result.files[i].original, result.files[i].chunks, inputs[i].name))
            print(f"wavegen: stale config hashes in {inputs[i].name} (bundle {bundle}: {rolling})", file=sys.stderr)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    app = new_app("")
    app.command(PROG)(hook)
    return invoke(app, list(sys.argv[1:] if argv is None else argv), PROG)


if __name__ == "__main__":
    sys.exit(main())
