"""The `plan` subcommand: which workloads roll between two bundles (paths, stdin or git revisions), and why."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import EXIT_FINDINGS, EXIT_OK, UsageError, WavegenError
from ..inputs.files import MANIFEST_SUFFIXES, STDIN_NAME, expand_paths, read_inputs
from ..inputs.options import add_core_flags, options_from_args

if TYPE_CHECKING:
    from ..core.diff import RestartPlan, WorkloadKey
    from ..core.model import Finding
    from ..core.plan import Options, Plan
    from ..stream.engine import InputDocument

# Documented in docs/plan.md: like `git diff --exit-code`, a distinct code when something would roll.
EXIT_WOULD_ROLL = 4
FORMATS = ("text", "json", "markdown")


@dataclass(slots=True)
class Side:
    """One bundle to compare: where it came from, its files, its plan."""

    label: str
    inputs: list[InputDocument]
    plan: Plan
    templates: dict[WorkloadKey, str]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "plan",
        help="show which workloads will roll between two bundles, and why",
        description=(
            "Compare two rendered bundles (BASE HEAD: files, directories, or - for stdin; "
            "or --git-base REV [--git-head REV] [PATHS...]) and report which workloads will roll, "
            "because of which ConfigMap/Secret keys, and which will not although their config changed."
        ),
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="BASE HEAD, or with --git-base the paths to read (default .)")
    parser.add_argument("--git-base", metavar="REV", help="read the base bundle from this git revision")
    parser.add_argument("--git-head", metavar="REV", help="read the head bundle from this revision (default: working tree)")
    parser.add_argument("--format", choices=FORMATS, default="text", help="output format (default: text)")
    parser.add_argument(
        "--show-values", action="store_true",
        help="show a unified diff of changed ConfigMap values (Secret values are never shown)",
    )
    parser.add_argument(
        "--exit-code", action="store_true",
        help=f"exit {EXIT_WOULD_ROLL} when a workload would roll, 0 when none would (like git diff --exit-code)",
    )
    add_core_flags(parser)
    parser.set_defaults(func=cmd_plan)


def _git(repo: Path, *args: str, stdin: bytes | None = None) -> bytes:
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), *args], input=stdin, capture_output=True, check=False,
            # Never let a pager, a prompt or a user's config hooks get involved.
            env={**os.environ, "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"},
        )
    except FileNotFoundError:
        raise WavegenError("git is not installed (needed for --git-base)") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise WavegenError(f"git {args[0]} failed: {message[-1] if message else 'exit ' + str(done.returncode)}")
    return done.stdout


def _repo_root(paths: list[Path]) -> Path:
    """The top of the git work tree holding every path (the first existing ancestor asks git)."""
    roots = set()
    for path in paths:
        probe = path.resolve()
        while not probe.exists():
            probe = probe.parent
        directory = probe if probe.is_dir() else probe.parent
        try:
            top = _git(directory, "rev-parse", "--show-toplevel").decode("utf-8").strip()
        except WavegenError:
            raise UsageError(f"{path} is not inside a git repository") from None
        roots.add(Path(top).resolve())
    if len(roots) != 1:
        raise UsageError("all paths must be in the same git repository")
    return roots.pop()


def _verify_rev(root: Path, rev: str) -> str:
    if rev.startswith("-"):
        raise UsageError(f"not a revision: {rev}")
    try:
        return _git(root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}").decode().strip()
    except WavegenError:
        raise UsageError(f"unknown git revision {rev!r}") from None


def read_revision(root: Path, rev: str, paths: list[Path]) -> list[InputDocument]:
    """Manifest files under the paths as they are at a revision; reads objects only, never the work tree."""
    from ..stream.engine import InputDocument

    commit = _verify_rev(root, rev)
    relative = []
    for path in paths:
        rel = path.resolve().relative_to(root).as_posix()
        relative.append(rel if rel != "." else ".")
    listing = _git(root, "ls-tree", "-r", "-z", "--full-tree", commit, "--", *relative)
    names = []
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, _, raw_name = entry.partition(b"\t")
        mode, kind, _ = meta.split(b" ", 2)
        name = raw_name.decode("utf-8", "surrogateescape")
        # Skip symlinks (mode 120000) and submodules (type commit): neither is a manifest at this revision.
        # A name with a line break cannot be asked of `cat-file --batch`, and is no manifest anyone renders.
        if kind == b"blob" and mode != b"120000" and name.endswith(MANIFEST_SUFFIXES) and "\n" not in name:
            names.append(name)
    names.sort()
    if not names:
        return []
    batch = _git(root, "cat-file", "--batch", stdin="".join(f"{commit}:{n}\n" for n in names).encode("utf-8", "surrogateescape"))
    docs = []
    offset = 0
    for name in names:
        header_end = batch.index(b"\n", offset)
        header = batch[offset:header_end].split(b" ")
        if len(header) != 3 or header[1] != b"blob":
            raise WavegenError(f"cannot read {name} at {rev}")
        size = int(header[2])
        start = header_end + 1
        docs.append(InputDocument(f"{rev}:{name}", batch[start : start + size]))
        offset = start + size + 1  # content is followed by one LF
    return docs


def _working_tree(paths: list[Path]) -> list[InputDocument]:
    # Paths deleted in the work tree are fine: the head side simply has none of their files.
    existing = [str(p) for p in paths if p.exists()]
    return read_inputs(expand_paths(existing)) if existing else []


def _read_sides(args: argparse.Namespace) -> tuple[tuple[str, list[InputDocument]], tuple[str, list[InputDocument]]]:
    if args.git_base is None:
        if args.git_head is not None:
            raise UsageError("--git-head needs --git-base")
        if len(args.paths) != 2:
            raise UsageError("plan needs BASE and HEAD (files, directories or -), or --git-base REV")
        if args.paths.count("-") > 1:
            raise UsageError("only one of BASE and HEAD can be - (standard input)")
        sides = []
        for raw in args.paths:
            paths = expand_paths([raw])
            if not paths:
                raise WavegenError("no manifest files (*.yaml, *.yml, *.json) found", file=raw)
            sides.append((STDIN_NAME if raw == "-" else raw, read_inputs(paths)))
        return sides[0], sides[1]
    if "-" in args.paths:
        raise UsageError("standard input cannot be combined with --git-base")
    named = [Path(p) for p in (args.paths or ["."])]
    root = _repo_root(named)
    base = read_revision(root, args.git_base, named)
    if args.git_head is not None:
        head = (args.git_head, read_revision(root, args.git_head, named))
    else:
        head = ("working tree", _working_tree(named))
    if not base and not head[1]:
        raise WavegenError("no manifest files (*.yaml, *.yml, *.json) found at either revision", file=" ".join(map(str, named)))
    return (args.git_base, base), head


def build_side(label: str, inputs: list[InputDocument], options: Options) -> Side:
    from ..core.diff import template_fingerprints
    from ..stream.engine import Engine

    engine = Engine(options)
    for source in inputs:
        engine.add(source)
    plan = engine.plan()
    return Side(label, inputs, plan, template_fingerprints(engine.objects, plan, options.owned_annotations))


def compare_sides(base: Side, head: Side, options: Options) -> RestartPlan:
    from ..core.diff import restart_plan

    return restart_plan(
        base.plan, head.plan, profile=options.profile, base_templates=base.templates, head_templates=head.templates
    )


def _findings(base: Side, head: Side) -> list[tuple[str, Finding]]:
    """Every finding of the head side; of the base side only errors (its warnings are history)."""
    from ..core.model import Severity

    found = [("base", f) for f in base.plan.findings if f.severity is Severity.ERROR]
    found.extend(("head", f) for f in head.plan.findings)
    return found


def use_colour(stream: Any, environ: os._Environ[str] | dict[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    isatty = getattr(stream, "isatty", None)
    return "NO_COLOR" not in env and bool(isatty and isatty())


def cmd_plan(args: argparse.Namespace) -> int:
    from ..core.model import Severity
    from ..render import plan_report
    from ..render.report import finding_line

    options = options_from_args(args)
    (base_label, base_inputs), (head_label, head_inputs) = _read_sides(args)
    base = build_side(base_label, base_inputs, options)
    head = build_side(head_label, head_inputs, options)
    findings = _findings(base, head)
    if args.format != "json":
        github = os.environ.get("GITHUB_ACTIONS") == "true"
        for side, finding in findings:
            print(f"{finding_line(finding, github)}{'' if github else f' ({side})'}", file=sys.stderr)
    if any(f.severity is Severity.ERROR for _, f in findings):
        if args.format == "json":
            sys.stdout.write(plan_report.render_json(None, base, head, options, findings, args.show_values))
        return EXIT_FINDINGS
    result = compare_sides(base, head, options)
    if args.format == "json":
        sys.stdout.write(plan_report.render_json(result, base, head, options, findings, args.show_values))
    elif args.format == "markdown":
        sys.stdout.write(plan_report.render_markdown(result, base, head, options, findings, args.show_values))
    else:
        sys.stdout.write(plan_report.render_text(result, base, head, args.show_values, use_colour(sys.stdout)))
    sys.stdout.flush()
    if args.exit_code and result.would_roll:
        return EXIT_WOULD_ROLL
    return EXIT_OK


__all__ = ["EXIT_WOULD_ROLL", "Side", "build_side", "compare_sides", "read_revision", "register"]
