"""GitHub Action step: reads inputs from the environment, writes outputs, a step summary and annotations."""

from __future__ import annotations

import glob
import json
import os
import secrets
import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.model import Finding, Severity
from ..core.plan import WorkloadPlan
from ..core.refs import merge_visible_keys
from ..errors import EXIT_FINDINGS, EXIT_OK, UsageError, WavegenError
from ..inputs.files import expand_paths, read_inputs, write_atomically
from ..inputs.flags import parse_hashing_flags
from ..inputs.options import HashingFlags, options_from_flags
from ..render.report import finding_line, mermaid_graph
from ..stream.engine import InputDocument, Result, run

MODES = ("write", "check")
GLOB_CHARS = frozenset("*?[")

#: Environment variables action.yml sets from the action's inputs (never interpolated into shell text).
ENV_PATHS = "WAVEGEN_INPUT_PATHS"
ENV_MODE = "WAVEGEN_INPUT_MODE"
ENV_PROFILE = "WAVEGEN_INPUT_PROFILE"
ENV_NAMESPACE = "WAVEGEN_INPUT_NAMESPACE"
ENV_MISSING = "WAVEGEN_INPUT_MISSING"
ENV_ARGS = "WAVEGEN_INPUT_ARGS"
ENV_SUMMARY = "WAVEGEN_INPUT_SUMMARY"
ENV_BASE = "WAVEGEN_INPUT_BASE"


@dataclass(frozen=True, slots=True)
class ActionInputs:
    """The action's inputs, already validated."""

    paths: list[str]
    mode: str
    flags: list[str]
    summary: bool
    base: str = ""


def _split(value: str, what: str) -> list[str]:
    try:
        return shlex.split(value)
    except ValueError as err:
        raise UsageError(f"input {what}: {err}") from None


def expand_globs(patterns: Sequence[str]) -> list[str]:
    """Expand glob patterns (``**`` recurses); plain paths pass through; a pattern matching nothing is an error."""
    expanded: list[str] = []
    for pattern in patterns:
        if GLOB_CHARS & set(pattern):
            matches = sorted(glob.glob(pattern, recursive=True))
            if not matches:
                raise WavegenError("pattern matches no file", file=pattern)
            expanded.extend(matches)
        else:
            expanded.append(pattern)
    return expanded


def inputs_from_env(environ: Mapping[str, str]) -> ActionInputs:
    """Read and check the action inputs; flags are built as a list, never through a shell."""
    paths = _split(environ.get(ENV_PATHS, ""), "paths")
    if not paths:
        raise UsageError("input paths is required (files, directories or globs of rendered manifests)")
    mode = environ.get(ENV_MODE, "").strip() or "write"
    if mode not in MODES:
        raise UsageError(f"input mode must be one of {', '.join(MODES)}, not {mode!r}")
    flags: list[str] = []
    for env_name, flag in ((ENV_PROFILE, "--profile"), (ENV_NAMESPACE, "--namespace"), (ENV_MISSING, "--missing")):
        value = environ.get(env_name, "").strip()
        if value:
            flags.append(f"{flag}={value}")
    flags.extend(_split(environ.get(ENV_ARGS, ""), "args"))
    summary = environ.get(ENV_SUMMARY, "true").strip().lower() not in ("false", "0", "no", "off")
    base = environ.get(ENV_BASE, "").strip()
    return ActionInputs(paths=paths, mode=mode, flags=flags, summary=summary, base=base)


def parse_flags(flags: Sequence[str]) -> HashingFlags:
    """The hashing flags the transform command accepts; anything else is a usage error."""
    try:
        return parse_hashing_flags(flags, "wavegen action")
    except UsageError as err:
        raise UsageError(f"input args: {err.message}") from None


def rolling_workloads(result: Result) -> list[WorkloadPlan]:
    """Workloads whose pod-template annotations this run sets or changes: they will roll when applied."""
    return [w for w in result.plan.workloads if w.changed]


def workload_record(workload: WorkloadPlan) -> dict[str, Any]:
    """A workload for the JSON output and the summary: identity, position, hashes and referenced names/keys."""
    old_hash: str | None = None
    new_hash: str | None = None
    for template in workload.templates:
        annotation = template.hash_annotation
        if annotation and new_hash is None and old_hash is None:
            new_hash = template.desired[annotation]
            old_hash = template.current.get(annotation)
    sources = merge_visible_keys([r.reference for t in workload.templates for r in t.references])
    return {
        "kind": workload.kind,
        "namespace": workload.namespace,
        "name": workload.name,
        "id": workload.display,
        "file": workload.file,
        "line": workload.line,
        "oldHash": old_hash,
        "newHash": new_hash,
        "sources": [
            {"kind": src.kind, "namespace": src.namespace, "name": src.name, "keys": None if keys is None else sorted(keys)}
            for src, keys in sorted(sources.items())
        ],
    }


def _markdown_cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def restart_plan_markdown(inputs: ActionInputs, documents: Sequence[InputDocument], result: Result) -> str:
    """``wavegen plan`` Markdown comparing the ``base`` revision with the bundle as this step leaves it."""
    from ..inputs.sides import build_side, compare_sides, read_revision, repo_root
    from ..render import plan_report

    options = options_from_flags(parse_flags(inputs.flags))
    named = [Path(p) for p in expand_globs(inputs.paths)]
    base_docs = read_revision(repo_root(named), inputs.base, named)
    head_docs = [InputDocument(doc.name, result.outputs[i]) for i, doc in enumerate(documents)]
    base = build_side(inputs.base, base_docs, options)
    head = build_side("after wavegen", head_docs, options)
    restart = compare_sides(base, head, options)
    return plan_report.render_markdown(restart, base, head, options, [("head", f) for f in head.plan.findings])


def render_summary(result: Result, inputs: ActionInputs, changed_files: Sequence[str], plan_markdown: str = "") -> str:
    """The Markdown step summary (jinja2 template ``render/templates/summary.md.j2``): names and keys only.

    With a ``base`` revision the restart plan against it (``wavegen plan --format markdown``) comes first.
    """
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("wavegen", "render/templates"),
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["cell"] = _markdown_cell
    rolling = rolling_workloads(result)
    template = env.get_template("summary.md.j2")
    return template.render(
        mode=inputs.mode,
        workloads=[workload_record(w) for w in rolling],
        total=len(result.plan.workloads),
        files=list(changed_files),
        findings=[f for f in result.findings if f.severity is not Severity.INFO],
        mermaid=mermaid_graph(result.plan, rolling) if rolling else "",
        plan=plan_markdown,
    )


def _annotation(level: str, message: str, file: str = "", line: int = 0) -> str:
    return finding_line(Finding(Severity(level), message, file=file, line=line), github=True)


def write_outputs(path: str, values: Mapping[str, str]) -> None:
    """Append to ``$GITHUB_OUTPUT`` with the heredoc format and a random delimiter per value."""
    with open(path, "a", encoding="utf-8") as handle:
        for name, value in values.items():
            delimiter = f"wavegen_{secrets.token_hex(16)}"
            while delimiter in value:  # pragma: no cover - 128 random bits
                delimiter = f"wavegen_{secrets.token_hex(16)}"
            handle.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")


@dataclass(slots=True)
class Outcome:
    """What a run of the action did."""

    code: int
    result: Result
    documents: list[InputDocument]
    changed_files: list[str]


def execute(inputs: ActionInputs, stdout: Any = None) -> Outcome:
    """Run the transform; write (mode write) or report stale files (mode check)."""
    out = stdout or sys.stdout
    flags = parse_flags(inputs.flags)
    paths = [p for p in expand_paths(expand_globs(inputs.paths)) if p is not None]
    if not paths:
        raise WavegenError("no manifest files (*.yaml, *.yml, *.json) found", file=" ".join(inputs.paths))
    documents: list[InputDocument] = read_inputs(paths)
    result = run(documents, options_from_flags(flags))
    for finding in result.findings:
        print(finding_line(finding, github=True), file=out)
    stale = result.changed()
    changed_files = [documents[i].name for i in stale]
    if result.has_errors:
        return Outcome(EXIT_FINDINGS, result, documents, changed_files)
    if inputs.mode == "write":
        write_atomically([(paths[i], result.outputs[i]) for i in stale])
        return Outcome(EXIT_OK, result, documents, changed_files)
    for workload in rolling_workloads(result):
        print(
            _annotation(
                "error",
                f"{workload.display}: stale config hash; run wavegen transform -i (or this action with mode: write)",
                workload.file,
                workload.line,
            ),
            file=out,
        )
    if stale and not rolling_workloads(result):
        for name in changed_files:
            print(_annotation("error", "stale wavegen annotations; run wavegen transform -i", name), file=out)
    return Outcome(EXIT_FINDINGS if stale else EXIT_OK, result, documents, changed_files)


def main(environ: Mapping[str, str] | None = None) -> int:
    """Entry point of the action step (``python -m wavegen.integrations.action``)."""
    env = os.environ if environ is None else environ
    try:
        inputs = inputs_from_env(env)
        outcome = execute(inputs)
    except WavegenError as err:
        print(_annotation("error", err.message, err.file, err.line), flush=True)
        return err.exit_code
    result, changed_files = outcome.result, outcome.changed_files
    rolling = rolling_workloads(result)
    records = [workload_record(w) for w in rolling]
    outputs = {
        "changed": "true" if changed_files else "false",
        "workloads": "\n".join(r["id"] for r in records),
        "workloads-json": json.dumps(records, separators=(",", ":")),
        "files": "\n".join(changed_files),
    }
    output_file = env.get("GITHUB_OUTPUT")
    if output_file:
        write_outputs(output_file, outputs)
    summary_file = env.get("GITHUB_STEP_SUMMARY")
    if summary_file and inputs.summary:
        plan_markdown = ""
        if inputs.base and not result.has_errors:
            try:
                plan_markdown = restart_plan_markdown(inputs, outcome.documents, result)
            except WavegenError as err:
                print(_annotation("warning", f"no restart plan against {inputs.base}: {err}"), flush=True)
        text = render_summary(result, inputs, changed_files, plan_markdown)
        with open(summary_file, "a", encoding="utf-8") as handle:
            handle.write(text)
    verb = "updated" if inputs.mode == "write" else "stale"
    print(f"wavegen: {len(changed_files)} file(s) {verb}, {len(rolling)} workload(s) will roll", flush=True)
    return outcome.code


if __name__ == "__main__":
    sys.exit(main())
