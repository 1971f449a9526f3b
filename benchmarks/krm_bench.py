"""Whole-process benchmark of `wavegen krm` on the ResourceLists kustomize hands it, against a PyYAML load of each list.

Each render of benchmarks/corpus.py that the pinned kustomize builds (the chart mix's repeated
objects it refuses) becomes the ResourceList kustomize writes to an exec function's standard
input, captured by a function that hands it back unchanged; ``mix-list`` is the chart mix's
documents as the items of one ResourceList (their text kept, as corpus.as_list keeps it), whose
repeated objects give thousands of results. Results: results/krm.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import CACHE, TOOLS, as_list, corpus
from startup_bench import clean_site_python, console_script, export_revision, load_average
from transform_bench import BASELINE, installed_copy, measure, unchanged, write_report

# The last state before `wavegen krm` read its list with the subset reader (and before it ran without typer).
BEFORE_REV = "7c1aae0"
LISTS = CACHE / "krm-lists"
RESOURCE_LIST_HEAD = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n"
# An exec function that writes the ResourceList it is given to $CAPTURE and hands it back.
CAPTURE_FUNCTION = '#!/bin/sh\ntee "$CAPTURE"\n'
FUNCTION_CONFIG = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: capture
  annotations:
    config.kubernetes.io/function: |
      exec:
        path: {path}
data:
  missing: warn
"""


def kustomize_list(name: str, render: Path, work: Path) -> Path | None:
    """The ResourceList kustomize writes to an exec transformer for a kustomization of ``render``
    alone (cached); None where kustomize refuses the render."""
    target = LISTS / f"{name}.yaml"
    if target.exists():
        return target
    directory = work / name
    directory.mkdir(parents=True)
    (directory / "render.yaml").write_bytes(render.read_bytes())
    function = work / "capture.sh"
    if not function.exists():
        function.write_text(CAPTURE_FUNCTION)
        function.chmod(0o755)
    (directory / "function.yaml").write_text(FUNCTION_CONFIG.format(path=function))
    (directory / "kustomization.yaml").write_text("resources:\n- render.yaml\ntransformers:\n- function.yaml\n")
    captured = work / f"{name}.captured"
    done = subprocess.run(
        [str(TOOLS / "kustomize"), "build", "--enable-alpha-plugins", "--enable-exec", str(directory)],
        env={**os.environ, "CAPTURE": str(captured)},
        capture_output=True,
        check=False,
    )
    if done.returncode != 0 or not captured.exists():
        return None
    LISTS.mkdir(parents=True, exist_ok=True)
    captured.replace(target)
    return target


def resource_lists(work: Path) -> tuple[dict[str, Path], list[str]]:
    """The lists to time by name, and the renders kustomize refused."""
    lists: dict[str, Path] = {}
    refused: list[str] = []
    rendered = corpus()
    for name, path in rendered.items():
        if path.is_dir() or path.suffix != ".yaml":
            continue  # (a tree of files, or JSON)
        built = kustomize_list(name, path, work)
        if built is None:
            refused.append(name)
        else:
            lists[name] = built
    lists["mix-list"] = as_list(rendered["mix"], "mix-resource-list", RESOURCE_LIST_HEAD, "")
    return lists, refused


def trial(argv: list[str], stdin: Path) -> tuple[int, int]:
    """One run's exit code and the results it wrote (the function repeats each on stderr, a line each)."""
    with stdin.open("rb") as given:
        done = subprocess.run(argv, stdin=given, capture_output=True, check=False)
    return done.returncode, sum(1 for line in done.stderr.decode().splitlines() if line.startswith("wavegen: "))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--before", default=BEFORE_REV, help="git revision timed as 'before'")
    parser.add_argument("--only", default="", help="these lists only (names, comma-separated)")
    parser.add_argument("--output", type=Path, default=Path(__file__).parent / "results" / "krm.md")
    args = parser.parse_args()
    root = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory() as tmp:
        lists, refused = resource_lists(Path(tmp, "kustomize"))
        if args.only:
            lists = {name: path for name, path in lists.items() if name in args.only.split(",")}
        python = clean_site_python(Path(tmp, "venv"))
        exported = export_revision(args.before, Path(tmp, "exported"), "wavegen")
        before_dir = installed_copy(python, exported, Path(tmp, "before"))[0]
        after_dir, stamp = installed_copy(python, root, Path(tmp, "after"))
        commands: dict[str, list[str]] = {}
        stdin: dict[str, Path] = {}
        for name, path in lists.items():
            commands[f"baseline/{name}"] = [python, "-c", BASELINE, str(path)]
            for side, code_dir in (("before", before_dir), ("after", after_dir)):
                commands[f"{side}/{name}"] = [*console_script(python, code_dir), "krm"]
                stdin[f"{side}/{name}"] = path
        counts: dict[str, int] = {}
        refused_before: dict[str, int] = {}
        for name, path in lists.items():
            code, counts[name] = trial(commands[f"after/{name}"], path)
            if code != 0:
                raise SystemExit(f"wavegen krm refused {name} (exit {code})")
            code, _ = trial(commands[f"before/{name}"], path)
            if code != 0:
                refused_before[name] = code  # (not timed: a refusal is no figure)
                del commands[f"before/{name}"]
        load_before = load_average()
        timings = measure(commands, args.runs, stdin)
        unchanged(after_dir / "wavegen", stamp)

    lines = ["# `wavegen krm` on the ResourceLists kustomize hands it\n"]
    lines.append(f"Command: `python benchmarks/krm_bench.py --runs {args.runs} --before {args.before}`  ")
    machine = f"Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs, clean site"
    machine += ", load average before: " + ", ".join(f"{load:.2f}" for load in load_before)
    lines.append(f"{machine}; medians of {args.runs} interleaved runs.  ")
    lines.append(
        "Baseline: a bare PyYAML `CSafeLoader` load of the same list, whole process. Before: wavegen at "
        f"`{args.before}`; after: this checkout; both installed as their wheels would be, run as the console "
        "script with the list on standard input, as kustomize runs an exec function. Lists: what the pinned "
        "kustomize writes to an exec transformer for each render of benchmarks/corpus.py (configured by a "
        "ConfigMap, `missing: warn`); `mix-list` is the chart mix's documents as one ResourceList's items, "
        "their text kept (kustomize refuses the mix's repeated objects, which give its results). "
        "Kustomize refused: " + (", ".join(refused) or "none") + ". No goal was set for the function: the "
        "ratios say how its time and memory compare with loading the list.\n"
    )
    lines.append("| list | bytes | items | results | baseline s | before x | after x | RSS before x | RSS after x |")
    lines.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, path in lists.items():
        text = path.read_text()
        base = timings[f"baseline/{name}"]
        after = timings[f"after/{name}"]
        before = timings.get(f"before/{name}")
        if before is None:
            before_time = before_rss = f"refused (exit {refused_before[name]})"
        else:
            before_time, before_rss = f"{before.seconds / base.seconds:.2f}", f"{before.peak_rss_kb / base.peak_rss_kb:.2f}"
        lines.append(
            f"| {name} | {len(text.encode()):,} | {text.count(chr(10) + '- '):,} | {counts[name]:,} | {base.seconds:.3f} | "
            f"{before_time} | {after.seconds / base.seconds:.2f} | {before_rss} | {after.peak_rss_kb / base.peak_rss_kb:.2f} |"
        )
    write_report(lines, args.output)


if __name__ == "__main__":
    main()
