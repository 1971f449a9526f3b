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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--count", type=int, default=2000, help="ConfigMaps, Secrets and Deployments each")
    parser.add_argument("--output", type=Path, default=Path(__file__).parent / "results" / "transform.md")
    parser.add_argument("--with-slow", action="store_true", help="also time ruamel.yaml and kustomize for reference")
    args = parser.parse_args()
    python = sys.executable
    wavegen = [python, "-m", "wavegen", "transform"]
    lines: list[str] = []
    checks: list[tuple[str, float, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        files = {
            "workloads": Path(tmp, "workloads.yaml"),
            "workloads4x": Path(tmp, "workloads4x.yaml"),
            "crds": Path(tmp, "crds.yaml"),
            "one": Path(tmp, "one.yaml"),
        }
        files["workloads"].write_text(workload_bundle(args.count))
        files["workloads4x"].write_text(workload_bundle(args.count * 4))
        files["crds"].write_text(crd_bundle(300))
        files["one"].write_text(workload_bundle(1).split("---\n")[-1])
        sizes = {k: v.stat().st_size for k, v in files.items()}
        commands = {
            "baseline": [python, "-c", BASELINE, str(files["workloads"])],
            "wavegen": [*wavegen, str(files["workloads"])],
            "baseline4x": [python, "-c", BASELINE, str(files["workloads4x"])],
            "wavegen4x": [*wavegen, str(files["workloads4x"])],
            "baseline-crds": [python, "-c", BASELINE, str(files["crds"])],
            "wavegen-crds": [*wavegen, str(files["crds"])],
            "wavegen-one": [*wavegen, str(files["one"])],
        }
        if args.with_slow:
            commands["ruamel"] = [python, "-c", RUAMEL, str(files["workloads"])]
            kustomize = shutil.which("kustomize") or str(Path.home() / ".cache/wavegen-tools/bin/kustomize")
            if Path(kustomize).exists():
                kdir = Path(tmp, "k")
                kdir.mkdir()
                shutil.copy(files["workloads"], kdir / "bundle.yaml")
                (kdir / "kustomization.yaml").write_text("resources: [bundle.yaml]\ncommonAnnotations:\n  a: b\n")
                commands["kustomize"] = [kustomize, "build", str(kdir)]
        results = measure(commands, args.runs)

    def ratio(a: str, b: str) -> float:
        return results[a].seconds / results[b].seconds

    checks.append(("workload bundle: wavegen / CSafeLoader baseline (time)", ratio("wavegen", "baseline"), 1.5))
    checks.append(("CRD-heavy bundle: wavegen / baseline (time)", ratio("wavegen-crds", "baseline-crds"), 0.6))
    checks.append(("4x documents: wavegen4x / wavegen (time)", ratio("wavegen4x", "wavegen"), 4.4))
    checks.append(("peak memory: wavegen / baseline", results["wavegen"].peak_rss_kb / results["baseline"].peak_rss_kb, 2.0))
    checks.append(("one document: whole process (seconds)", results["wavegen-one"].seconds, 0.25))
    lines.append("# `wavegen transform` benchmark\n")
    lines.append(f"Command: `python benchmarks/transform_bench.py --runs {args.runs} --count {args.count}`  ")
    machine = f"Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs"
    lines.append(f"{machine}; medians of {args.runs} interleaved runs.\n")
    lines.append("| input | bytes |\n| --- | --- |")
    for name, size in sizes.items():
        lines.append(f"| {name} | {size:,} |")
    lines.append("\n| command | median s | peak RSS MiB |\n| --- | --- | --- |")
    for name, timing in results.items():
        lines.append(f"| {name} | {timing.seconds:.3f} | {timing.peak_rss_kb / 1024:.1f} |")
    lines.append("\n| goal | measured | limit | ok |\n| --- | --- | --- | --- |")
    for label, value, limit in checks:
        lines.append(f"| {label} | {value:.2f} | {limit} | {'yes' if value <= limit else 'NO'} |")
    if "ruamel" in results:
        lines.append(f"\nFor reference: ruamel.yaml round trip {ratio('ruamel', 'baseline'):.1f}x baseline.")
    if "kustomize" in results:
        lines.append(f"For reference: kustomize build with commonAnnotations {ratio('kustomize', 'baseline'):.1f}x baseline.")
    report = "\n".join(lines) + "\n"
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(report)
    print(report)
    if any(value > limit for _, value, limit in checks):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
