"""CPU time of the pure core's plan() on a generated bundle: this checkout against a git revision, side by side."""

from __future__ import annotations

import argparse
import os
import pickle
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_bundle import workload_bundle
from startup_bench import export_revision

ROOT = Path(__file__).resolve().parents[1]

# Run in a child process per side: the child puts one tree first on sys.path (an explicit
# insert wins over the editable install's finder, PYTHONPATH does not), loads the parsed
# objects, and prints one line per plan() call: its CPU seconds and a digest of the result.
CHILD = """
import gc, hashlib, pickle, sys, time
sys.path.insert(0, sys.argv[1])
import wavegen
assert wavegen.__file__.startswith(sys.argv[1]), wavegen.__file__
from wavegen.core.plan import Options, plan
objects = pickle.load(open(sys.argv[2], "rb"))
options = Options(profile=sys.argv[3], namespace="bench", missing=sys.argv[4])
gc.disable()  # as Engine.run does
for _ in range(int(sys.argv[5])):
    start = time.process_time()
    result = plan(objects, options)
    elapsed = time.process_time() - start
    shown = repr((result.sources, result.workloads, result.findings)).encode()
    print(elapsed, hashlib.sha256(shown).hexdigest()[:16])
"""


def parse_objects(count: int, path: Path) -> int:
    """Parse the generated bundle once with this checkout's reader; pickle the objects for both sides."""
    from wavegen.core.plan import Options
    from wavegen.stream.engine import Engine, InputDocument

    engine = Engine(Options())
    engine.add(InputDocument("bundle.yaml", workload_bundle(count).encode()))
    path.write_bytes(pickle.dumps(engine.objects))
    return len(engine.objects)


def run_side(tree: Path, objects: Path, profile: str, missing: str, calls: int) -> tuple[list[float], set[str]]:
    env = {**os.environ, "PYTHONHASHSEED": "0"}  # frozenset reprs in the digest must not vary between runs
    argv = [sys.executable, "-c", CHILD, str(tree), str(objects), profile, missing, str(calls)]
    done = subprocess.run(argv, check=True, capture_output=True, text=True, env=env)
    times, digests = [], set()
    for line in done.stdout.splitlines():
        seconds, digest = line.split()
        times.append(float(seconds))
        digests.add(digest)
    return times, digests


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--before", default="66e5603", help="git revision to compare against (default 66e5603)")
    parser.add_argument("--count", type=int, default=2000, help="ConfigMap+Secret+Deployment triples (default 2000)")
    parser.add_argument("--rounds", type=int, default=5, help="child processes per side, interleaved (default 5)")
    parser.add_argument("--calls", type=int, default=5, help="plan() calls per child process (default 5)")
    parser.add_argument("--profile", action="append", choices=("wavegen", "wave"), help="profile(s) to time (default both)")
    args = parser.parse_args()
    profiles = args.profile or ["wavegen", "wave"]
    with tempfile.TemporaryDirectory() as tmp:
        objects_path = Path(tmp) / "objects.pickle"
        count = parse_objects(args.count, objects_path)
        before_tree = export_revision(args.before, Path(tmp), "wavegen")
        print(
            f"plan() over {count} objects ({args.count} ConfigMap+Secret+Deployment triples); python {platform.python_version()}"
        )
        print(f"{args.rounds} rounds x {args.calls} calls per side, interleaved; CPU seconds (time.process_time), gc off")
        print()
        print("| profile | before median s | after median s | after / before | same result |")
        print("| --- | --- | --- | --- | --- |")
        for profile in profiles:
            samples: dict[str, list[float]] = {"before": [], "after": []}
            digests: dict[str, set[str]] = {"before": set(), "after": set()}
            for _ in range(args.rounds):
                for side, tree in (("before", before_tree), ("after", ROOT)):
                    times, seen = run_side(tree, objects_path, profile, "warn", args.calls)
                    samples[side].extend(times)
                    digests[side] |= seen
            before = statistics.median(samples["before"])
            after = statistics.median(samples["after"])
            same = "yes" if digests["before"] == digests["after"] and len(digests["after"]) == 1 else "NO"
            print(f"| {profile} | {before:.4f} | {after:.4f} | {after / before:.2f} | {same} |")


if __name__ == "__main__":
    main()
