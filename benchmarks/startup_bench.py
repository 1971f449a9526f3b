"""Cold start: wall time of a whole `wavegen transform` process on a 1-document bundle, against `import yaml`.

Every variant runs as a fresh interpreter, interleaved round by round with the baseline so that load on a
shared machine hits them alike; one variant is what pip's console-script launcher does before wavegen runs,
the floor of any installed wavegen. Variants: this tree (``after``); optionally another git revision
(``--before REV``, exported with ``git archive``); optionally this tree with another typer on the path
(``--typer-path DIR``, e.g. ``pip install --no-deps --target DIR typer==0.29.2``). The bundle is the
"one" case of transform_bench.py (a Deployment from gen_bundle.py referencing a ConfigMap and a Secret).

``--clean-site`` runs every variant in a throwaway virtualenv that sees this interpreter's packages but
not their ``.pth`` start-up hooks: an editable install's hook imports pathlib, re and more into every
process (so an import wavegen avoids would cost nothing here), which an installed wheel does not.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
import venv
from pathlib import Path

from gen_bundle import workload_bundle

ROOT = Path(__file__).resolve().parents[1]
# What pip's console-script launcher runs before it calls wavegen (it strips ".exe" from argv[0]): no
# wavegen installed as a console script starts faster than this. pip 25.0 and later and uv write this
# wrapper; pip before 25.0 (distlib's template) also imported re and compiled a pattern, ~4 ms more.
LAUNCHER = "import sys; sys.argv[0] = sys.argv[0].removesuffix('.exe')"
ONE_DOCUMENT = workload_bundle(1).split("---\n")[-1]  # transform_bench.py's "one" case


def load_average() -> tuple[float, float, float]:
    """The 1, 5 and 15 minute load averages (zeros where the platform has none), for the record."""
    return os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)


def clean_site_python(into: Path) -> str:
    """A virtualenv's python that imports this interpreter's packages without running their .pth hooks."""
    venv.EnvBuilder(with_pip=False).create(into)
    python = into / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # A path listed in a .pth file is added to sys.path, but the .pth files inside it are not run.
    paths = dict.fromkeys(sysconfig.get_paths()[key] for key in ("purelib", "platlib"))
    Path(site, "wavegen-bench-deps.pth").write_text("".join(f"{path}\n" for path in paths))
    return str(python)


def console_script(python: str, tree: Path) -> list[str]:
    """`wavegen` as its installed console script runs it (the wrapper pip writes), from ``tree``.

    Not ``python -m wavegen``: runpy imports importlib.util and contextlib first, start-up
    time an installed `wavegen` does not pay. The tree goes first on sys.path explicitly,
    since PYTHONPATH alone loses to an editable install's import hook. The entry point is
    ``console`` (``main`` in trees from before it had one).
    """
    launcher = (
        f"import sys; sys.path.insert(0, {str(tree)!r}); import wavegen.cli.main as entry; "
        "sys.argv[0] = 'wavegen'; sys.exit(getattr(entry, 'console', entry.main)())"
    )
    return [python, "-c", launcher]


def as_installed(python: str, tree: Path, into: Path) -> Path:
    """A copy of ``tree``'s wavegen package in ``into`` as installing its wheel leaves it: byte-compiled
    (else, with PYTHONDONTWRITEBYTECODE set, every run would compile the sources again) and, for trees
    that have wavegen/cli/preload.py, with the transform path's preload file the wheel build writes."""
    shutil.copytree(tree / "wavegen", into / "wavegen", ignore=shutil.ignore_patterns("__pycache__", "transform-path.*"))
    subprocess.run([python, "-m", "compileall", "-q", str(into / "wavegen")], check=True, stdout=subprocess.DEVNULL)
    if (into / "wavegen" / "cli" / "preload.py").is_file():
        write = (
            "import sys, pathlib; sys.path.insert(0, sys.argv[1]); "
            "from wavegen.cli import preload; preload.write(pathlib.Path(sys.argv[1]))"
        )
        subprocess.run([python, "-c", write, str(into)], check=True)
    return into


def export_revision(revision: str, into: Path, *paths: str) -> Path:
    """The tree of git ``revision`` (only ``paths`` of it, when given) unpacked under ``into``, so that
    the old code runs beside the new (every benchmark's ``--before``)."""
    into.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, *paths], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def timed(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.decode()[-500:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--before", metavar="REV", help="also time this git revision of wavegen (e.g. 88d3752)")
    parser.add_argument("--typer-path", metavar="DIR", help="also time this tree with DIR first on sys.path")
    parser.add_argument("--clean-site", action="store_true", help="run in a virtualenv without .pth hooks (like a wheel)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        python = clean_site_python(Path(tmp) / "venv") if args.clean_site else sys.executable
        bundle = Path(tmp) / "one.yaml"
        bundle.write_text(ONE_DOCUMENT)
        # An installed wheel runs from .pyc files; PYTHONDONTWRITEBYTECODE (set in some shells and
        # CI images) would make every run here recompile sources instead, so drop it and compile
        # each timed tree up front.
        base_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
        this_tree = as_installed(python, ROOT, Path(tmp) / "after")
        transform = [*console_script(python, this_tree), "transform", str(bundle)]
        variants: dict[str, tuple[list[str], dict[str, str]]] = {
            "baseline: python -c 'import yaml'": ([python, "-c", "import yaml"], base_env),
            "after: wavegen transform (this tree)": (transform, base_env),
            # What pip's console-script launcher does before it calls wavegen: the floor.
            "launcher: python, pip 25's wrapper": ([python, "-c", LAUNCHER], base_env),
        }
        if args.before:
            exported = export_revision(args.before, Path(tmp) / "exported")
            tree = as_installed(python, exported, Path(tmp) / "before")
            variants[f"before: wavegen transform ({args.before})"] = (
                [*console_script(python, tree), "transform", str(bundle)],
                base_env,
            )
        if args.typer_path:
            path = f"{args.typer_path}{os.pathsep}{this_tree}"
            variants["after, typer from --typer-path"] = (transform, {**base_env, "PYTHONPATH": path})
        load_before = load_average()
        times: dict[str, list[float]] = {name: [] for name in variants}
        for argv, env in variants.values():  # warm the page cache and .pyc files first
            timed(argv, env)
        for _ in range(args.rounds):
            for name, (argv, env) in variants.items():
                times[name].append(timed(argv, env))

    baseline = statistics.median(next(iter(times.values())))
    site = "clean site (no .pth hooks)" if args.clean_site else "this interpreter's site"
    machine = f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs"
    print(f"{machine}, {args.rounds} interleaved rounds, {site}")
    loads = [" ".join(f"{x:.2f}" for x in load) for load in (load_before, load_average())]
    print(f"load average (1, 5, 15 min): {loads[0]} at start, {loads[1]} at end")
    print(f"{'variant':48} {'median':>9} {'p10':>9} {'p90':>9} {'x baseline':>11}")
    for name, values in times.items():
        deciles = statistics.quantiles(values, n=10)
        median = statistics.median(values)
        spread = f"{deciles[0] * 1000:7.1f}ms {deciles[-1] * 1000:7.1f}ms"
        print(f"{name:48} {median * 1000:7.1f}ms {spread} {median / baseline:10.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
