"""Whole-process benchmark of `wavegen transform` against a PyYAML CSafeLoader baseline, run side by side."""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_bundle import crd_bundle, workload_bundle
from startup_bench import clean_site_python, load_average

BASELINE = "import sys, yaml; list(yaml.load_all(open(sys.argv[1], 'rb'), Loader=yaml.CSafeLoader))"
RUAMEL = (
    "import sys; from ruamel.yaml import YAML; y = YAML(); "
    "docs = list(y.load_all(open(sys.argv[1]))); y.dump_all(docs, open('/dev/null', 'w'))"
)


@dataclass
class Timing:
    seconds: float
    peak_rss_kb: int


# GNU time (Debian package "time"); without it peak RSS is not reported.
GNU_TIME = shutil.which("time")


def run_once(argv: list[str]) -> Timing:
    """Wall time of one run and its peak RSS.

    Peak RSS comes from GNU time: a child of this (large) benchmark process would
    report this process's high-water mark as its own, whatever it really used.
    """
    with tempfile.NamedTemporaryFile("r") as rss_file:
        wrapped = [GNU_TIME, "-f", "%M", "-o", rss_file.name, *argv] if GNU_TIME else argv
        start = time.perf_counter()
        done = subprocess.run(wrapped, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        elapsed = time.perf_counter() - start
        if done.returncode != 0:
            raise SystemExit(f"benchmark command failed ({done.returncode}): {' '.join(argv)}")
        text = rss_file.read().strip().splitlines()
        peak = int(text[-1]) if text and text[-1].isdigit() else 0
    return Timing(elapsed, peak)


def measure(commands: dict[str, list[str]], runs: int) -> dict[str, Timing]:
    """Median wall time and max peak RSS per command, interleaving commands so drift hits all alike."""
    samples: dict[str, list[Timing]] = {name: [] for name in commands}
    for argv in commands.values():
        run_once(argv)  # warm the page cache
    for _ in range(runs):
        for name, argv in commands.items():
            samples[name].append(run_once(argv))
    return {
        name: Timing(statistics.median(t.seconds for t in ts), max(t.peak_rss_kb for t in ts)) for name, ts in samples.items()
    }


# The commit issue 14 started from: "before" in the results table.
BEFORE_REV = "88d3752"


@dataclass
class Case:
    name: str
    path: Path
    # (label, limit on after/baseline time) or None when the case only feeds another check
    goal: float | None


def export_revision(rev: str, into: Path) -> Path:
    """Unpack the wavegen package as of a git revision, so the old code runs beside the new."""
    root = Path(__file__).resolve().parent.parent
    archive = subprocess.run(["git", "-C", str(root), "archive", rev, "wavegen"], check=True, capture_output=True).stdout
    into.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def compile_bytecode(python: str, package: Path) -> None:
    """Byte-compile a wavegen tree, as installing a wheel does.

    Otherwise, with PYTHONDONTWRITEBYTECODE set (as on CI machines and here), every
    run would compile wavegen's sources again: tens of milliseconds that an installed
    wavegen never pays and the baseline (PyYAML, installed) does not pay either.
    """
    subprocess.run([python, "-m", "compileall", "-q", str(package)], check=True, stdout=subprocess.DEVNULL)


def wavegen_command(python: str, code_dir: Path | None) -> list[str]:
    """`wavegen transform` from this checkout, or from an exported revision (put first on sys.path)."""
    if code_dir is None:
        return [python, "-m", "wavegen", "transform"]
    # runpy rather than -m: -m would find the directory holding the checkout first only by cwd.
    launcher = (
        f"import sys, runpy; sys.path.insert(0, {str(code_dir)!r}); sys.argv[0] = 'wavegen'; "
        "runpy.run_module('wavegen', run_name='__main__')"
    )
    return [python, "-c", launcher, "transform"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--count", type=int, default=2000, help="ConfigMaps, Secrets and Deployments each")
    parser.add_argument("--linear-factor", type=int, default=10, help="the linearity case has this many times the documents")
    parser.add_argument("--before", default=BEFORE_REV, help="git revision timed as 'before'")
    parser.add_argument("--no-argocd", action="store_true", help="skip Argo CD's install.yaml (needs the Go module proxy once)")
    parser.add_argument("--load-note", default="", help="what else ran on the machine, for the record")
    parser.add_argument("--output", type=Path, default=Path(__file__).parent / "results" / "transform.md")
    parser.add_argument("--with-slow", action="store_true", help="also time ruamel.yaml and kustomize for reference")
    parser.add_argument(
        "--clean-site",
        action="store_true",
        help="run every command in a virtualenv without .pth start-up hooks, as after installing a wheel",
    )
    args = parser.parse_args()
    python = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        this_tree: Path | None = None
        if args.clean_site:
            # The editable install's hook would import pathlib and more into every process,
            # the baseline's included; a wheel install has no such hook.
            python = clean_site_python(Path(tmp, "venv"))
            this_tree = Path(__file__).resolve().parent.parent
        before_dir = export_revision(args.before, Path(tmp, "before"))
        compile_bytecode(python, before_dir / "wavegen")
        compile_bytecode(python, Path(__file__).resolve().parent.parent / "wavegen")
        cases = [
            Case("workloads", Path(tmp, "workloads.yaml"), 0.5),
            Case("crds", Path(tmp, "crds.yaml"), 0.35),
            Case("one", Path(tmp, "one.yaml"), None),
            Case(f"workloads{args.linear_factor}x", Path(tmp, "workloads-linear.yaml"), None),
        ]
        cases[0].path.write_text(workload_bundle(args.count))
        cases[1].path.write_text(crd_bundle(300))
        cases[2].path.write_text(workload_bundle(1).split("---\n")[-1])
        cases[3].path.write_text(workload_bundle(args.count * args.linear_factor))
        if not args.no_argocd:
            from argocd_install import VERSION, install_yaml

            cases.insert(2, Case(f"argocd-{VERSION}-install", install_yaml(), 0.35))
        commands: dict[str, list[str]] = {}
        for case in cases:
            commands[f"baseline/{case.name}"] = [python, "-c", BASELINE, str(case.path)]
            commands[f"before/{case.name}"] = [*wavegen_command(python, before_dir), str(case.path)]
            commands[f"after/{case.name}"] = [*wavegen_command(python, this_tree), str(case.path)]
        if args.with_slow:
            workloads = cases[0].path
            commands["ruamel/workloads"] = [python, "-c", RUAMEL, str(workloads)]
            kustomize = shutil.which("kustomize") or str(Path.home() / ".cache/wavegen-tools/bin/kustomize")
            if Path(kustomize).exists():
                kdir = Path(tmp, "k")
                kdir.mkdir()
                shutil.copy(workloads, kdir / "bundle.yaml")
                (kdir / "kustomization.yaml").write_text("resources: [bundle.yaml]\ncommonAnnotations:\n  a: b\n")
                commands["kustomize/workloads"] = [kustomize, "build", str(kdir)]
        sizes = {case.name: case.path.stat().st_size for case in cases}
        load_before = load_average()
        results = measure(commands, args.runs)

    def seconds(side: str, case: str) -> float:
        return results[f"{side}/{case}"].seconds

    def rss(side: str, case: str) -> float:
        return results[f"{side}/{case}"].peak_rss_kb / 1024

    lines = ["# `wavegen transform` benchmark\n"]
    lines.append(
        "Command (one run gives the whole table): `python benchmarks/transform_bench.py"
        f" --runs {args.runs} --count {args.count} --linear-factor {args.linear_factor} --before {args.before}"
        f"{' --clean-site' if args.clean_site else ''}`  "
    )
    machine = f"Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs"
    if args.clean_site:
        machine += ", clean site (no .pth start-up hooks, as with a wheel install)"
    machine += ", load average before: " + ", ".join(f"{load:.2f}" for load in load_before)
    lines.append(f"{machine}; medians of {args.runs} interleaved runs (baseline, before, after, case by case).  ")
    if args.load_note:
        lines.append(f"Load while measuring: {args.load_note}  ")
    lines.append(
        "Baseline: a bare PyYAML `CSafeLoader` `load_all` of the same bytes, whole process. "
        f"Before: wavegen at `{args.before}` (exported with `git archive`). After: this checkout. "
        "Both wavegen trees are byte-compiled first, as a wheel install does. "
        "Argo CD's `manifests/install.yaml` comes from `go mod download` of "
        "`github.com/argoproj/argo-cd/v3` through the Go module proxy (`benchmarks/argocd_install.py`, "
        "cached under `~/.cache/wavegen-bench`). Goals are issue 14's; the script exits 1 when one is missed.\n"
    )
    lines.append("| input | bytes | baseline s | before s | after s | before / baseline | after / baseline |")
    lines.append("| --- | --- | --- | --- | --- | --- | --- |")
    for case in cases:
        base, before, after = (seconds(side, case.name) for side in ("baseline", "before", "after"))
        lines.append(
            f"| {case.name} | {sizes[case.name]:,} | {base:.3f} | {before:.3f} | {after:.3f} | "
            f"{before / base:.2f} | {after / base:.2f} |"
        )
    lines.append("\n| input | baseline RSS MiB | before RSS MiB | after RSS MiB | before / baseline | after / baseline |")
    lines.append("| --- | --- | --- | --- | --- | --- |")
    for case in cases:
        base_rss = rss("baseline", case.name)
        lines.append(
            f"| {case.name} | {base_rss:.1f} | {rss('before', case.name):.1f} | {rss('after', case.name):.1f} | "
            f"{rss('before', case.name) / base_rss:.2f} | {rss('after', case.name) / base_rss:.2f} |"
        )
    linear = cases[-1].name
    checks: list[tuple[str, float, float, float]] = []  # label, before, after, limit
    for case in cases:
        if case.goal is not None:
            base = seconds("baseline", case.name)
            label = f"{case.name}: time / baseline"
            checks.append((label, seconds("before", case.name) / base, seconds("after", case.name) / base, case.goal))
    factor = float(args.linear_factor)
    checks.append(
        (
            f"{linear}: time / {args.linear_factor} x workloads time (linear = 1.0)",
            seconds("before", linear) / seconds("before", "workloads") / factor,
            seconds("after", linear) / seconds("after", "workloads") / factor,
            1.1,
        )
    )
    checks.append(
        (
            "workloads: peak RSS / baseline",
            rss("before", "workloads") / rss("baseline", "workloads"),
            rss("after", "workloads") / rss("baseline", "workloads"),
            1.0,
        )
    )
    one_before = seconds("before", "one")
    one_label = "one document: seconds, after / before (not slower; 5% noise allowed)"
    checks.append((one_label, 1.0, seconds("after", "one") / one_before, 1.05))
    lines.append("\n| goal | before | after | limit | met after |\n| --- | --- | --- | --- | --- |")
    for label, before, after, limit in checks:
        lines.append(f"| {label} | {before:.2f} | {after:.2f} | {limit} | {'yes' if after <= limit else 'NO'} |")
    if "ruamel/workloads" in results:
        ratio = seconds("ruamel", "workloads") / seconds("baseline", "workloads")
        lines.append(f"\nFor reference: ruamel.yaml round trip {ratio:.1f}x baseline.")
    if "kustomize/workloads" in results:
        ratio = seconds("kustomize", "workloads") / seconds("baseline", "workloads")
        lines.append(f"For reference: kustomize build with commonAnnotations {ratio:.1f}x baseline.")
    report = "\n".join(lines) + "\n"
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(report)
    print(report)
    if any(after > limit for _, _, after, limit in checks):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
