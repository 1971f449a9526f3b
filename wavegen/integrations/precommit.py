"""pre-commit hook entry: checks or fixes config hashes of the whole bundle each staged manifest belongs to."""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Sequence
from pathlib import Path

from ..errors import EXIT_FINDINGS, EXIT_OK, WavegenError
from ..inputs.files import MANIFEST_SUFFIXES, expand_paths, read_inputs, write_atomically
from ..inputs.options import add_core_flags, options_from_args
from ..render.report import finding_line
from ..stream.engine import run


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m wavegen.integrations.precommit",
        description=(
            "Check (--check) or fix (--fix) wavegen config hashes. Each file named belongs to a bundle: the "
            "--bundle directory holding it, or else the manifest files of its own directory. The whole bundle "
            "is hashed, so a ConfigMap change is caught even when only the ConfigMap's file is staged."
        ),
    )
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="fail if any hash in an affected bundle is stale")
    mode.add_argument("--fix", action="store_true", help="rewrite stale hashes in affected bundles (fails if it changed files)")
    parser.add_argument(
        "--bundle", action="append", default=[], metavar="DIR",
        help="a directory whose manifest files (recursively) form one bundle; files outside every --bundle are skipped",
    )
    parser.add_argument("files", nargs="*", help="files pre-commit passes (changed manifests)")
    add_core_flags(parser)
    return parser


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
                chosen[key] = sorted(
                    str(p) for p in directory.iterdir() if p.suffix in MANIFEST_SUFFIXES and p.is_file()
                )
    return chosen


def process(args: argparse.Namespace) -> int:
    options = options_from_args(args)
    code = EXIT_OK
    for bundle, names in sorted(bundles_for(args.files, args.bundle).items()):
        paths = [Path(n) for n in names]
        inputs = read_inputs(paths)
        result = run(inputs, options)
        for finding in result.findings:
            print(finding_line(finding), file=sys.stderr)
        if result.has_errors:
            code = EXIT_FINDINGS
            continue
        stale = result.changed(inputs)
        if not stale:
            continue
        code = EXIT_FINDINGS
        rolling = ", ".join(w.display for w in result.plan.workloads if w.changed) or "annotations to clean up"
        if args.fix:
            write_atomically([(paths[i], result.outputs[i]) for i in stale])
            for i in stale:
                print(f"wavegen: fixed config hashes in {inputs[i].name} (bundle {bundle}: {rolling})", file=sys.stderr)
            continue
        for i in stale:
            before = inputs[i].data.decode("utf-8", "replace").splitlines(keepends=True)
            after = result.outputs[i].decode("utf-8", "replace").splitlines(keepends=True)
            sys.stdout.writelines(difflib.unified_diff(before, after, f"a/{inputs[i].name}", f"b/{inputs[i].name}"))
            print(f"wavegen: stale config hashes in {inputs[i].name} (bundle {bundle}: {rolling})", file=sys.stderr)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return process(args)
    except WavegenError as err:
        print(f"wavegen: error: {err}", file=sys.stderr)
        return err.exit_code


if __name__ == "__main__":
    sys.exit(main())
