"""Cold start: wall time of a whole `wavegen transform` process on a 1-document bundle, against `import yaml`.

Every variant runs as a fresh interpreter, interleaved round by round with the baseline so that load on a
shared machine hits them alike. Variants: this tree (``after``); optionally another git revision
(``--before REV``, exported with ``git archive``); optionally this tree with another typer on the path
(``--typer-path DIR``, e.g. ``pip install --no-deps --target DIR typer==0.29.2``).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ONE_DOCUMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: nginx
"""


def export_revision(revision: str, into: Path) -> Path:
    into.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision], capture_output=True, check=True).stdout
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
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        bundle = Path(tmp) / "one.yaml"
        bundle.write_text(ONE_DOCUMENT)
        # An installed wheel runs from .pyc files; PYTHONDONTWRITEBYTECODE (set in some shells and
        # CI images) would make every run here recompile sources instead, so drop it and compile
        # each timed tree up front.
        base_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
        transform = [sys.executable, "-m", "wavegen", "transform", str(bundle)]
        variants: dict[str, tuple[list[str], dict[str, str]]] = {
            "baseline: python -c 'import yaml'": ([sys.executable, "-c", "import yaml"], base_env),
            "after: wavegen transform (this tree)": (transform, {**base_env, "PYTHONPATH": str(ROOT)}),
        }
        if args.before:
            tree = export_revision(args.before, Path(tmp) / "before")
            # PYTHONPATH alone loses to an editable install's import hook, which would time this
            # tree again: put the exported tree first on sys.path explicitly.
            launcher = (
                f"import sys, runpy; sys.path.insert(0, {str(tree)!r}); sys.argv[0] = 'wavegen'; "
                "runpy.run_module('wavegen', run_name='__main__')"
            )
            variants[f"before: wavegen transform ({args.before})"] = (
                [sys.executable, "-c", launcher, "transform", str(bundle)],
                base_env,
            )
        if args.typer_path:
            path = f"{args.typer_path}{os.pathsep}{ROOT}"
            variants["after, typer from --typer-path"] = (transform, {**base_env, "PYTHONPATH": path})
        for tree in {ROOT, *([Path(tmp) / "before"] if args.before else [])}:
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "wavegen")], check=True)
        times: dict[str, list[float]] = {name: [] for name in variants}
        for argv, env in variants.values():  # warm the page cache and .pyc files first
            timed(argv, env)
        for _ in range(args.rounds):
            for name, (argv, env) in variants.items():
                times[name].append(timed(argv, env))

    baseline = statistics.median(next(iter(times.values())))
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs, {args.rounds} rounds, interleaved")
    print(f"{'variant':48} {'median':>9} {'p10':>9} {'p90':>9} {'x baseline':>11}")
    for name, values in times.items():
        deciles = statistics.quantiles(values, n=10)
        median = statistics.median(values)
        spread = f"{deciles[0] * 1000:7.1f}ms {deciles[-1] * 1000:7.1f}ms"
        print(f"{name:48} {median * 1000:7.1f}ms {spread} {median / baseline:10.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
