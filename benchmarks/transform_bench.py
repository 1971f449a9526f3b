"""Whole-process benchmark of `wavegen transform` against a PyYAML CSafeLoader baseline, run side by side.

``--corpus``: the real renders of benchmarks/corpus.py and the generated bundles, per input
(results/transform.md); without it: issue 14's generated bundles (results/transform-generated.md).
"""

from __future__ import annotations

import argparse
import json
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
from corpus import input_files
from gen_bundle import crd_bundle, dashboard_list, hand_edited_bundle, quoted_dashboards, workload_bundle
from startup_bench import LAUNCHER, as_installed, clean_site_python, console_script, export_revision, load_average

# PyYAML has no constructor for YAML 1.1's value key, a plain "=" (prometheus-operator's
# bundle.yaml holds one): the baseline reads it as a string, as kubectl's go-yaml does.
_VALUE_AS_TEXT = "yaml.CSafeLoader.add_constructor('tag:yaml.org,2002:value', yaml.CSafeLoader.construct_scalar)"
BASELINE = f"import sys, yaml; {_VALUE_AS_TEXT}; list(yaml.load_all(open(sys.argv[1], 'rb'), Loader=yaml.CSafeLoader))"
# For a directory: the files wavegen reads under it (sorted), each loaded as above; os only (which
# Python imports at start-up anyway), so the baseline pays no import wavegen does not.
BASELINE_TREE = (
    f"import os, sys, yaml\n{_VALUE_AS_TEXT}\n"
    "files = sorted(os.path.join(d, f) for d, _, fs in os.walk(sys.argv[1]) for f in fs"
    " if f.endswith(('.yaml', '.yml', '.json')))\n"
    "for f in files: list(yaml.load_all(open(f, 'rb'), Loader=yaml.CSafeLoader))"
)
RUAMEL = (
    "import sys; from ruamel.yaml import YAML; y = YAML(); "
    "docs = list(y.load_all(open(sys.argv[1]))); y.dump_all(docs, open('/dev/null', 'w'))"
)


@dataclass
class Timing:
    seconds: float
    peak_rss_kb: int
    # user + system time of the process and the children it waited for (wavegen's forked readers)
    cpu_seconds: float = 0.0


# GNU time (Debian package "time"); without it peak RSS is not reported.
GNU_TIME = shutil.which("time")


def run_once(argv: list[str], stdin: Path | None = None) -> Timing:
    """Wall time of one run (reading ``stdin`` from that file, if given), its peak RSS and CPU time.

    Peak RSS comes from GNU time: a child of this (large) benchmark process would
    report this process's high-water mark as its own, whatever it really used. It is
    the largest of the process and the children it waited for, not their sum.
    """
    with tempfile.NamedTemporaryFile("r") as rss_file:
        wrapped = [GNU_TIME, "-f", "%M", "-o", rss_file.name, *argv] if GNU_TIME else argv
        with open(stdin or os.devnull, "rb") as given:
            start = time.perf_counter()
            process = subprocess.Popen(wrapped, stdin=given, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            # wait4: CPU time to the microsecond (GNU time prints hundredths), GNU time's own included
            _, status, usage = os.wait4(process.pid, 0)
            elapsed = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            raise SystemExit(f"benchmark command failed ({process.returncode}): {' '.join(argv)}")
        text = rss_file.read().strip().splitlines()
        peak = int(text[-1]) if text and text[-1].isdigit() else 0
    return Timing(elapsed, peak, usage.ru_utime + usage.ru_stime)


def write_report(lines: list[str], output: Path) -> None:
    """The report's lines written to ``output`` (its directory made) and printed."""
    report = "\n".join(lines) + "\n"
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(report)
    print(report)


def measure(commands: dict[str, list[str]], runs: int, stdin: dict[str, Path] | None = None) -> dict[str, Timing]:
    """Median wall time and max peak RSS per command, interleaving commands so drift hits all alike;
    ``stdin``: the file a command (by name) reads on its standard input."""
    given = stdin or {}
    samples: dict[str, list[Timing]] = {name: [] for name in commands}
    for name, argv in commands.items():
        run_once(argv, given.get(name))  # warm the page cache
    for _ in range(runs):
        for name, argv in commands.items():
            samples[name].append(run_once(argv, given.get(name)))
    return {
        name: Timing(
            statistics.median(t.seconds for t in ts), max(t.peak_rss_kb for t in ts), statistics.median(t.cpu_seconds for t in ts)
        )
        for name, ts in samples.items()
    }


# The commit issue 14 started from: "before" in the results table.
BEFORE_REV = "88d3752"


@dataclass
class Case:
    name: str
    path: Path
    # (label, limit on after/baseline time) or None when the case only feeds another check
    goal: float | None


def installed_copy(python: str, tree: Path, into: Path) -> tuple[Path, tuple[tuple[str, int, int], ...]]:
    """``tree``'s wavegen as installing its wheel leaves it (startup_bench.as_installed: byte-compiled, with
    its preload file), and its sources' stamp (see unchanged). Compiled bytecode matters: with
    PYTHONDONTWRITEBYTECODE set (as on CI machines and here), every run would compile wavegen's
    sources again, tens of milliseconds that an installed wavegen never pays and the baseline
    (PyYAML, installed) does not pay either."""
    copy = as_installed(python, tree, into)
    return copy, sources_stamp(copy / "wavegen")


def sources_stamp(package: Path) -> tuple[tuple[str, int, int], ...]:
    """Each source file's name, size and modification time."""
    stats = ((str(path), path.stat()) for path in package.rglob("*.py"))
    return tuple(sorted((name, stat.st_size, stat.st_mtime_ns) for name, stat in stats))


def unchanged(package: Path, stamp: tuple[tuple[str, int, int], ...]) -> None:
    """Refuse the figures when a source changed while measuring: its bytecode, compiled before, is
    stale, so every later run of that side compiled it again (tens of milliseconds, megabytes)."""
    if sources_stamp(package) != stamp:
        raise SystemExit(f"{package} changed while measuring: its bytecode went stale, the figures are void; run again")


def wavegen_command(python: str, code_dir: Path) -> list[str]:
    """`wavegen transform` as the installed console script runs it, from a tree installed_copy made."""
    return [*console_script(python, code_dir), "transform"]


ACCEPTANCE = """
import collections, json, sys
sys.path.insert(0, sys.argv[1])
from wavegen.core.plan import Options
from wavegen.stream import engine, fastparse
from wavegen.stream.engine import InputDocument, run
try:
    from wavegen.stream import jsonread  # (documents written as JSON: read by the json module)
except ImportError:
    jsonread = None
counts = collections.Counter()
def counting(module, name, key):
    original = getattr(module, name, None)
    if original is None:
        return
    def counted(text, *args, **kwargs):
        found = original(text, *args, **kwargs)
        if any(line.strip(" ") not in ("", "---") and line.lstrip(" ")[0] != "#" for line in text.splitlines()):
            counts[key, found is not None and found is not False] += 1  # helm's comment-only pieces not counted
        return found
    setattr(module, name, counted)
counting(fastparse, "parse", "parse")
counting(jsonread, "read", "parse")
counting(fastparse, "check_passed_through", "check_passed_through")
sys.path.insert(0, sys.argv[3])
from corpus import input_files
from pathlib import Path
run([InputDocument(str(f), f.read_bytes()) for f in input_files(Path(sys.argv[2]))], Options(missing="ignore"))
print(json.dumps([[counts[name, True], counts[name, True] + counts[name, False]] for name in ("parse", "check_passed_through")]))
"""


def acceptance(python: str, tree: Path, path: Path) -> tuple[tuple[int, int], tuple[int, int]]:
    """Documents the subset reader accepted, of those offered to it, and documents passed through
    that fastparse.check_passed_through vouched for, of those asked about, in one run of this tree."""
    here = str(Path(__file__).resolve().parent)
    done = subprocess.run([python, "-c", ACCEPTANCE, str(tree), str(path), here], capture_output=True, text=True, check=True)
    (read, offered), (checked, asked) = json.loads(done.stdout)
    return (int(read), int(offered)), (int(checked), int(asked))


def crd_share(path: Path) -> float:
    """The share of an input's bytes in CustomResourceDefinition documents."""
    text = "\n".join(file.read_text() for file in input_files(path))
    documents = text.split("\n---")
    return sum(len(d) for d in documents if "\nkind: CustomResourceDefinition" in d) / max(len(text), 1)


# Renders of the corpus also timed with CRLF line breaks: the chart mix, and a small chart.
CRLF_RENDERS = ("mix", "istiod")


def corpus_main(args: argparse.Namespace) -> None:
    """Every input of benchmarks/corpus.py and the generated bundles: time, peak RSS and reader share."""
    from corpus import corpus

    rendered = dict(corpus())
    inputs = dict(rendered)
    if args.only:
        inputs = {name: path for name, path in inputs.items() if name in args.only.split(",")}
    root = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory() as tmp:
        # Renders as a checkout on Windows leaves them (git's core.autocrlf): CRLF line breaks.
        for name in CRLF_RENDERS:
            if name in rendered and not (args.only and f"{name}-crlf" not in args.only.split(",")):
                inputs[f"{name}-crlf"] = Path(tmp, f"{name}-crlf.yaml")
                inputs[f"{name}-crlf"].write_bytes(rendered[name].read_bytes().replace(b"\n", b"\r\n"))
        generated = {
            "generated-workloads": workload_bundle(args.count),
            "generated-crds": crd_bundle(300),
            "generated-dashboards": dashboard_list(20),
            "generated-quoted-dashboards": quoted_dashboards(20),
            "one-document": workload_bundle(1).split("---\n")[-1],
            "hand-edited": hand_edited_bundle(),
        }
        for name, text in generated.items():
            if args.only and name not in args.only.split(","):
                continue
            inputs[name] = Path(tmp, f"{name}.yaml")
            inputs[name].write_bytes(text.encode())  # as it is: CRLF line breaks stay
        python = clean_site_python(Path(tmp, "venv"))
        exported = export_revision(args.before, Path(tmp, "exported"), "wavegen")
        before_dir = installed_copy(python, exported, Path(tmp, "before"))[0]
        root, stamp = installed_copy(python, root, Path(tmp, "after"))
        empty = Path(tmp, "empty.yaml")
        empty.write_bytes(b"")
        commands: dict[str, list[str]] = {
            "launcher": [python, "-c", LAUNCHER],
            "start-up": [*wavegen_command(python, root), str(empty)],
        }
        for name, path in inputs.items():
            commands[f"baseline/{name}"] = [python, "-c", BASELINE_TREE if path.is_dir() else BASELINE, str(path)]
            commands[f"before/{name}"] = [*wavegen_command(python, before_dir), str(path)]
            commands[f"after/{name}"] = [*wavegen_command(python, root), str(path)]
        shares = {name: acceptance(python, root, path) for name, path in inputs.items()}
        shares_before = {name: acceptance(python, before_dir, path) for name, path in inputs.items()}
        sizes = {name: sum(file.stat().st_size for file in input_files(path)) for name, path in inputs.items()}
        documents = {
            name: sum(file.read_text().count("\n---") + 1 for file in input_files(path)) for name, path in inputs.items()
        }
        heavy = {name: crd_share(path) >= 0.5 for name, path in inputs.items()}
        load_before = load_average()
        results = measure(commands, args.runs)
        unchanged(root / "wavegen", stamp)

    def seconds(side: str, name: str) -> float:
        return results[f"{side}/{name}"].seconds

    def rss(side: str, name: str) -> float:
        return results[f"{side}/{name}"].peak_rss_kb / 1024

    def cpu(side: str, name: str) -> float:
        return results[f"{side}/{name}"].cpu_seconds / max(results[f"baseline/{name}"].cpu_seconds, 1e-9)

    lines = ["# `wavegen transform` on real renders and generated bundles\n"]
    lines.append(
        f"Command: `python benchmarks/transform_bench.py --corpus --runs {args.runs} --count {args.count}"
        f" --before {args.before}`  "
    )
    machine = f"Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs, clean site"
    machine += " (no .pth start-up hooks, as with a wheel install), load average before: "
    machine += ", ".join(f"{load:.2f}" for load in load_before)
    machine += f", WAVEGEN_JOBS={os.environ.get('WAVEGEN_JOBS', 'auto (unset)')}"
    lines.append(f"{machine}; medians of {args.runs} interleaved runs.  ")
    if args.load_note:
        lines.append(f"Load while measuring: {args.load_note}  ")
    lines.append(
        "Baseline: a bare PyYAML `CSafeLoader` `load_all` of the same bytes, whole process (a plain `=` read as "
        "text, as kubectl reads it: PyYAML has no constructor for it). "
        f"Before: wavegen at `{args.before}`. After: this checkout. Both are copied and installed as their "
        "wheels would be (byte-compiled, and with the transform path's preload file where the tree writes "
        "one). Launcher: what pip's console-script "
        "launcher does before it calls wavegen (start Python; pip 25 and later, and uv), timed in the "
        "same rounds: the least any wavegen installed as a console script can take. Start-up: this checkout's "
        "`wavegen transform` of an empty file (the launcher and wavegen's imports), what every input pays. Real renders: "
        "`benchmarks/corpus.py` (charts and manifests from Go modules through the module proxy, rendered by "
        "the pinned helm); `mix-crlf` and `istiod-crlf` are two of them with CRLF line breaks, as a checkout "
        "on Windows leaves them. Reader: reads the subset reader (for documents written as JSON, the json module's "
        "reader) accepted / documents offered to it (workloads, "
        "ConfigMaps, Secrets; and documents passed through that the check below declined, in inputs up to "
        "engine.READ_PASSED_THROUGH_CHARS). Checked: documents passed through that "
        "fastparse.check_passed_through vouched for / those asked about (the rest go to the reader or libyaml). "
        "CPU: user and system time, the forked readers' included, as a ratio of the baseline's. "
        "Peak RSS: the largest process's (GNU time), not the sum while forked readers run. "
        "Goals (issue 22): time ≤ 0.5x the baseline (≤ 0.35x where CRDs are most of the bytes), "
        "peak RSS ≤ 1.0x, one document not slower than before.\n"
    )
    lines.append(
        "| input | bytes | docs | baseline s | launcher x | start-up x | before x | after x | CPU before x | CPU after x"
        " | RSS before x | RSS after x | reader before | reader after | checked | goals |"
    )
    lines.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    missed = []
    launcher = results["launcher"].seconds
    startup = results["start-up"].seconds
    for name in inputs:
        base = seconds("baseline", name)
        before_ratio, after_ratio = seconds("before", name) / base, seconds("after", name) / base
        rss_before, rss_after = rss("before", name) / rss("baseline", name), rss("after", name) / rss("baseline", name)
        if name == "one-document":
            met = seconds("after", name) <= seconds("before", name) * 1.05
            goal = f"{'met' if met else 'MISSED'} (after/before {seconds('after', name) / seconds('before', name):.2f})"
        else:
            limit = 0.35 if heavy[name] else 0.5
            met = after_ratio <= limit and rss_after <= 1.0
            goal = f"{'met' if met else 'MISSED'} (≤ {limit}x{', CRD-heavy' if heavy[name] else ''})"
            if not met and launcher / base > limit:
                goal += "; the launcher alone takes more"
            elif not met and startup / base > limit:
                goal += "; the start-up alone takes more"
        if not met:
            missed.append(name)
        (a0, o0), _ = shares_before[name]
        (a1, o1), (c1, k1) = shares[name]
        lines.append(
            f"| {name} | {sizes[name]:,} | {documents[name]:,} | {base:.3f} | {launcher / base:.2f} | {startup / base:.2f} | "
            f"{before_ratio:.2f} | "
            f"{after_ratio:.2f} | {cpu('before', name):.2f} | {cpu('after', name):.2f} | {rss_before:.2f} | {rss_after:.2f} | "
            f"{a0}/{o0} | {a1}/{o1} | {c1}/{k1} | {goal} |"
        )
    write_report(lines, args.output)
    if missed:
        raise SystemExit(f"goals missed: {', '.join(missed)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", action="store_true", help="real renders (benchmarks/corpus.py) and generated bundles")
    parser.add_argument("--only", default="", help="with --corpus: these inputs only (names, comma-separated)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--count", type=int, default=2000, help="ConfigMaps, Secrets and Deployments each")
    parser.add_argument("--linear-factor", type=int, default=10, help="the linearity case has this many times the documents")
    parser.add_argument("--before", default=BEFORE_REV, help="git revision timed as 'before'")
    parser.add_argument("--no-argocd", action="store_true", help="skip Argo CD's install.yaml (needs the Go module proxy once)")
    parser.add_argument("--load-note", default="", help="what else ran on the machine, for the record")
    parser.add_argument(
        "--output",
        type=Path,
        default=None,
        help="the report (default: results/transform.md with --corpus, else results/transform-generated.md)",
    )
    parser.add_argument("--with-slow", action="store_true", help="also time ruamel.yaml and kustomize for reference")
    parser.add_argument(
        "--clean-site",
        action="store_true",
        help="run every command in a virtualenv without .pth start-up hooks, as after installing a wheel",
    )
    args = parser.parse_args()
    results = Path(__file__).parent / "results"
    if args.corpus:
        args.output = args.output or results / "transform.md"
        corpus_main(args)
        return
    args.output = args.output or results / "transform-generated.md"
    python = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        if args.clean_site:
            # The editable install's hook would import pathlib and more into every process,
            # the baseline's included; a wheel install has no such hook.
            python = clean_site_python(Path(tmp, "venv"))
        exported = export_revision(args.before, Path(tmp, "exported"), "wavegen")
        before_dir = installed_copy(python, exported, Path(tmp, "before"))[0]
        this_tree, stamp = installed_copy(python, Path(__file__).resolve().parent.parent, Path(tmp, "after"))
        this_package = this_tree / "wavegen"
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
        unchanged(this_package, stamp)

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
        "Baseline: a bare PyYAML `CSafeLoader` `load_all` of the same bytes, whole process (a plain `=` read as "
        "text, as kubectl reads it: PyYAML has no constructor for it). "
        f"Before: wavegen at `{args.before}` (exported with `git archive`). After: this checkout. "
        "Both wavegen trees are copied and installed as their wheels would be first (byte-compiled, and with "
        "the transform path's preload file where the tree writes one). "
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
    write_report(lines, args.output)
    if any(after > limit for _, _, after, limit in checks):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
