"""The bundles `wavegen plan` compares: read from files, stdin or git revisions, then planned and fingerprinted."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import UsageError, WavegenError
from ..stream.engine import InputDocument
from .files import MANIFEST_SUFFIXES, STDIN_NAME, expand_paths, read_inputs

if TYPE_CHECKING:
    from ..core.diff import RestartPlan, WorkloadKey
    from ..core.plan import Options, Plan


@dataclass(slots=True)
class Side:
    """One bundle to compare: where it came from, its files, its plan."""

    label: str
    inputs: list[InputDocument]
    plan: Plan
    templates: dict[WorkloadKey, str]


def _git(repo: Path, *args: str, stdin: bytes | None = None) -> bytes:
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), *args],
            input=stdin,
            capture_output=True,
            check=False,
            # Never let a pager, a prompt or a user's config hooks get involved.
            env={**os.environ, "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"},
        )
    except FileNotFoundError:
        raise WavegenError("git is not installed (needed for --git-base)") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise WavegenError(f"git {args[0]} failed: {message[-1] if message else 'exit ' + str(done.returncode)}")
    return done.stdout


def repo_root(paths: list[Path]) -> Path:
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


def working_tree(paths: list[Path]) -> list[InputDocument]:
    # Paths deleted in the work tree are fine: the head side simply has none of their files.
    existing = [str(p) for p in paths if p.exists()]
    return read_inputs(expand_paths(existing)) if existing else []


def read_sides(
    paths: Sequence[str], git_base: str | None, git_head: str | None
) -> tuple[tuple[str, list[InputDocument]], tuple[str, list[InputDocument]]]:
    """(label, files) of the base and head bundles: BASE HEAD paths (one may be -), or git revisions of paths."""
    if git_base is None:
        if git_head is not None:
            raise UsageError("--git-head needs --git-base")
        if len(paths) != 2:
            raise UsageError("plan needs BASE and HEAD (files, directories or -), or --git-base REV")
        if paths.count("-") > 1:
            raise UsageError("only one of BASE and HEAD can be - (standard input)")
        sides = []
        for raw in paths:
            found = expand_paths([raw])
            if not found:
                raise WavegenError("no manifest files (*.yaml, *.yml, *.json) found", file=raw)
            sides.append((STDIN_NAME if raw == "-" else raw, read_inputs(found)))
        return sides[0], sides[1]
    if "-" in paths:
        raise UsageError("standard input cannot be combined with --git-base")
    named = [Path(p) for p in (paths or ["."])]
    root = repo_root(named)
    base = read_revision(root, git_base, named)
    head = (git_head, read_revision(root, git_head, named)) if git_head is not None else ("working tree", working_tree(named))
    if not base and not head[1]:
        raise WavegenError("no manifest files (*.yaml, *.yml, *.json) found at either revision", file=" ".join(map(str, named)))
    return (git_base, base), head


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
