"""Benchmark `wavegen watch` throughput per controller, one controller against two shards, on a real kube-apiserver.

    python benchmarks/watch_shard_bench.py [--workloads 1000] [--rounds 2]

Starts etcd + kube-apiserver on loopback (binaries from hack/tools.sh) and fills
namespaces `shard-a` and `shard-b` with N/2 opted-in Deployments each, every one
reading its own ConfigMap. Two variants run on the same cluster, in turn, for
--rounds rounds each (interleaved: one, shards, one, shards, ...):

- one: a single controller watching both namespaces;
- shards: two controllers, `--namespace-selector wavegen-bench/shard=a` and `=b`
  (the namespaces carry that label), as a sharded chart install runs them.

Each round changes every ConfigMap at once (8 writers) and times the interval from
the first write to the moment the controllers' roll patches reach N: changes
handled per second. It also reports each controller's RSS once idle. One JSON
document: per variant the median changes/s and the ratio shards/one.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from watch_bench import proc_memory  # noqa: E402
from watch_memory_bench import Api, metrics  # noqa: E402

from tests.support.controlplane import ControlPlane, free_port, start_control_plane  # noqa: E402
from tests.support.tools import find_tool  # noqa: E402

LABEL = "wavegen-bench/shard"
SHARDS = ("a", "b")
ROLLS = 'wavegen_patches_total{action="roll"}'


def namespace_of(i: int) -> str:
    return f"shard-{SHARDS[i % 2]}"


def configmap(i: int, value: str) -> dict[str, Any]:
    meta = {"name": f"cm-{i}", "namespace": namespace_of(i)}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"value": value}}


def deployment(i: int) -> dict[str, Any]:
    labels = {"app": f"web-{i}"}
    container = {"name": "app", "image": "registry.invalid/app:1", "envFrom": [{"configMapRef": {"name": f"cm-{i}"}}]}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": f"web-{i}", "namespace": namespace_of(i), "annotations": {"wavegen.io/enabled": "true"}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [container]}},
        },
    }


def populate(api: Api, workloads: int) -> None:
    for shard in SHARDS:
        meta = {"name": f"shard-{shard}", "labels": {LABEL: shard}}
        api.request("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": meta})
    with ThreadPoolExecutor(8) as pool:
        list(
            pool.map(
                lambda i: api.request("POST", f"/api/v1/namespaces/{namespace_of(i)}/configmaps", configmap(i, "0")),
                range(workloads),
            )
        )
        list(
            pool.map(
                lambda i: api.request("POST", f"/apis/apps/v1/namespaces/{namespace_of(i)}/deployments", deployment(i)),
                range(workloads),
            )
        )


class Controller:
    def __init__(self, cp: ControlPlane, selector: str, log: Path) -> None:
        self.port = free_port()
        argv = [
            sys.executable, "-m", "wavegen", "watch", f"--kubeconfig={cp.kubeconfig}", f"--namespace-selector={selector}",
            "--window=0", "--max-patches-per-second=0", f"--metrics-address=127.0.0.1:{self.port}", "--log-level=warning",
        ]  # fmt: skip
        self.log = open(log, "ab")  # noqa: SIM115
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT, cwd=REPO)

    def metrics(self) -> dict[str, float]:
        try:
            return metrics(self.port)
        except OSError:
            return {}

    def idle(self) -> bool:
        m = self.metrics()
        return m.get("wavegen_synced") == 1 and m.get("wavegen_queue_depth") == 0

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(30)
        self.log.close()


def wait_for(check: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.05)


def run_round(cp: ControlPlane, api: Api, variant: str, workloads: int, value: str) -> dict[str, Any]:
    selectors = [LABEL] if variant == "one" else [f"{LABEL}={s}" for s in SHARDS]
    controllers = [Controller(cp, sel, cp.workdir / f"watch-{variant}-{n}.log") for n, sel in enumerate(selectors)]
    try:
        wait_for(lambda: all(c.idle() for c in controllers), 300, "the controllers to sync")
        time.sleep(1)
        before = sum(c.metrics().get(ROLLS, 0) for c in controllers)
        t0 = time.monotonic()
        with ThreadPoolExecutor(8) as pool:
            list(
                pool.map(
                    lambda i: api.request("PUT", f"/api/v1/namespaces/{namespace_of(i)}/configmaps/cm-{i}", configmap(i, value)),
                    range(workloads),
                )
            )
        written = time.monotonic() - t0
        wait_for(lambda: sum(c.metrics().get(ROLLS, 0) for c in controllers) - before >= workloads, 600, "every roll")
        took = time.monotonic() - t0
        rolls = sum(c.metrics().get(ROLLS, 0) for c in controllers) - before
        rss = [round(proc_memory(c.proc.pid)[0], 1) for c in controllers]
        return {"seconds": round(took, 2), "writes_seconds": round(written, 2), "changes_per_second": round(workloads / took, 1),
                "roll_patches": rolls, "rss_mb_per_controller": rss}  # fmt: skip
    finally:
        for c in controllers:
            c.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--workloads", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    tools = {name: find_tool(name) for name in ("etcd", "kube-apiserver", "kubectl")}
    if any(p is None for p in tools.values()):
        print("missing tools (run hack/tools.sh)", file=sys.stderr)
        return 2
    cp = start_control_plane(str(tools["etcd"]), str(tools["kube-apiserver"]), str(tools["kubectl"]))
    try:
        api = Api(cp)
        populate(api, args.workloads)
        # Adopt everything once, so every round starts from recorded workloads.
        first = Controller(cp, LABEL, cp.workdir / "watch-adopt.log")
        wait_for(lambda: first.idle() and first.metrics().get("wavegen_reconciles_total", 0) >= args.workloads, 300, "adoption")
        first.stop()
        results: dict[str, Any] = {"workloads": args.workloads, "cpus": os.cpu_count(), "rounds": []}
        for n in range(args.rounds):
            for variant in ("one", "shards"):
                result = run_round(cp, api, variant, args.workloads, f"{variant}-{n}")
                results["rounds"].append({"variant": variant, **result})
                print(json.dumps(results["rounds"][-1]), flush=True)
        medians = {
            v: statistics.median(r["changes_per_second"] for r in results["rounds"] if r["variant"] == v)
            for v in ("one", "shards")
        }
        results["median_changes_per_second"] = medians
        results["ratio_shards_to_one"] = round(medians["shards"] / medians["one"], 2)
        print(json.dumps(results, indent=2))
        return 0
    finally:
        cp.close()


if __name__ == "__main__":
    raise SystemExit(main())
