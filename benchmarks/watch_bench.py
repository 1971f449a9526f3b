"""Benchmark `wavegen watch` against a real kube-apiserver: change-to-patch latency, RSS, steady-state writes, patches per change.

    python benchmarks/watch_bench.py [--workloads 2000] [--samples 200] [--idle 30] [--fanout 20]

Starts etcd + kube-apiserver on loopback (binaries from hack/tools.sh), creates N
opted-in Deployments each reading its own ConfigMap (the first --fanout also read
one shared ConfigMap), runs `wavegen watch --window 0` as a subprocess, waits for
it to adopt everything, then:

- steady state: counts the controller's patches over --idle seconds of no changes;
- latency: updates one random ConfigMap at a time and measures from the update's
  response (the API server accepted it) to the moment a watch on Deployments sees
  that workload's pod-template wavegen.io/live-hash change;
- patches per change: roll patches issued for the samples, and for one change of
  the shared ConfigMap (which has --fanout dependents);
- memory: the controller's VmRSS and VmHWM from /proc.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.controlplane import free_port, start_control_plane  # noqa: E402
from tests.support.tools import find_tool  # noqa: E402
from wavegen.controller.kube import Client, load_kubeconfig, resource_path  # noqa: E402

NS = "bench"
LIVE = "wavegen.io/live-hash"


def metrics(port: int) -> dict[str, float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
        text = resp.read().decode()
    out: dict[str, float] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            series, _, value = line.rpartition(" ")
            out[series] = float(value)
    return out


def proc_memory(pid: int) -> tuple[float, float]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def deployment(i: int, fanout: int) -> dict[str, Any]:
    env_from: list[dict[str, Any]] = [{"configMapRef": {"name": f"cm-{i}"}}]
    if i < fanout:
        env_from.append({"configMapRef": {"name": "shared"}})
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": f"web-{i}", "namespace": NS, "annotations": {"wavegen.io/enabled": "true"}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": f"web-{i}"}},
            "template": {
                "metadata": {"labels": {"app": f"web-{i}"}},
                "spec": {"containers": [{"name": "app", "image": "registry.invalid/app:1", "envFrom": env_from}]},
            },
        },
    }


def configmap(name: str, value: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": NS}, "data": {"value": value}}


class DeploymentWatch:
    """Records, per Deployment, the monotonic time its pod-template live-hash last changed."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.seen: dict[str, tuple[str, float]] = {}
        self.cond = threading.Condition()
        self.stop = False

    def run(self, rv: str) -> None:
        path = resource_path("apps/v1", "deployments", NS)
        while not self.stop:
            for event in self.client.watch(path, {"resourceVersion": rv, "timeoutSeconds": 600}, 630):
                now = time.monotonic()
                obj = event.get("object") or {}
                rv = (obj.get("metadata") or {}).get("resourceVersion", rv)
                value = (((obj.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("annotations", {}).get(LIVE)
                name = (obj.get("metadata") or {}).get("name")
                if value and name:
                    with self.cond:
                        if self.seen.get(name, ("", 0.0))[0] != value:
                            self.seen[name] = (value, now)
                            self.cond.notify_all()

    def wait_change(self, name: str, old: str | None, timeout: float = 10) -> float | None:
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                current = self.seen.get(name)
                if current and current[0] != old:
                    return current[1]
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                self.cond.wait(remaining)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", type=int, default=2000)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--idle", type=float, default=30.0)
    parser.add_argument("--fanout", type=int, default=20)
    args = parser.parse_args()
    # A SIGTERM (e.g. from timeout) must still run the finally below and stop the control plane.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(143))

    tools = {name: find_tool(name) for name in ("etcd", "kube-apiserver", "kubectl")}
    missing = [n for n, p in tools.items() if p is None]
    if missing:
        print(f"missing tools: {', '.join(missing)} (run hack/tools.sh)", file=sys.stderr)
        return 2
    cp = start_control_plane(str(tools["etcd"]), str(tools["kube-apiserver"]), str(tools["kubectl"]))
    controller: subprocess.Popen[bytes] | None = None
    try:
        client = Client(load_kubeconfig(str(cp.kubeconfig)))
        client.request("POST", "/api/v1/namespaces", body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        t0 = time.monotonic()
        with ThreadPoolExecutor(8) as pool:
            list(
                pool.map(
                    lambda i: client.request("POST", resource_path("v1", "configmaps", NS), body=configmap(f"cm-{i}", "0")),
                    range(args.workloads),
                )
            )
            client.request("POST", resource_path("v1", "configmaps", NS), body=configmap("shared", "0"))
            list(
                pool.map(
                    lambda i: client.request(
                        "POST", resource_path("apps/v1", "deployments", NS), body=deployment(i, args.fanout)
                    ),
                    range(args.workloads),
                )
            )
        print(f"created {args.workloads} ConfigMaps + {args.workloads} Deployments in {time.monotonic() - t0:.1f}s", flush=True)

        port = free_port()
        log = open(cp.workdir / "watch.log", "wb")  # noqa: SIM115
        argv = [
            sys.executable, "-m", "wavegen", "watch", f"--kubeconfig={cp.kubeconfig}", f"--namespaces={NS}", "--window=0",
            "--max-patches-per-second=0", f"--metrics-address=127.0.0.1:{port}", "--log-level=warning",
        ]  # fmt: skip
        print("controller:", " ".join(argv[2:]), flush=True)
        t0 = time.monotonic()
        controller = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        while True:
            try:
                m = metrics(port)
                if (
                    m.get("wavegen_synced") == 1
                    and m.get('wavegen_patches_total{action="adopt"}', 0) >= args.workloads
                    and m.get("wavegen_queue_depth") == 0
                ):
                    break
            except OSError:
                pass
            if controller.poll() is not None:
                raise SystemExit("controller exited; see " + str(cp.workdir / "watch.log"))
            time.sleep(0.5)
        print(f"adopted {args.workloads} workloads (metadata-only patches) in {time.monotonic() - t0:.1f}s", flush=True)

        before = metrics(port)
        time.sleep(args.idle)
        after = metrics(port)
        idle_writes = sum(v for k, v in after.items() if k.startswith("wavegen_patches_total")) - sum(
            v for k, v in before.items() if k.startswith("wavegen_patches_total")
        )
        rss_idle, _ = proc_memory(controller.pid)

        watcher = DeploymentWatch(Client(load_kubeconfig(str(cp.kubeconfig))))
        rv = client.request("GET", resource_path("apps/v1", "deployments", NS), {"limit": 1})["metadata"]["resourceVersion"]
        threading.Thread(target=watcher.run, args=(rv,), daemon=True).start()
        time.sleep(0.5)
        rolls_before = after.get('wavegen_patches_total{action="roll"}', 0)
        latencies: list[float] = []
        timeouts = 0
        rng = random.Random(6)
        for n in range(args.samples):
            i = rng.randrange(args.fanout, args.workloads)  # single-dependent ConfigMaps
            name = f"web-{i}"
            old = watcher.seen.get(name, ("", 0.0))[0] or None
            client.request("PUT", resource_path("v1", "configmaps", NS, f"cm-{i}"), body=configmap(f"cm-{i}", f"v{n}"))
            accepted = time.monotonic()
            seen = watcher.wait_change(name, old)
            if seen is None:
                timeouts += 1
            else:
                latencies.append((seen - accepted) * 1000)
            time.sleep(0.05)
        time.sleep(1)
        m = metrics(port)
        roll_patches = m.get('wavegen_patches_total{action="roll"}', 0) - rolls_before
        fan_before = m.get('wavegen_patches_total{action="roll"}', 0)
        client.request("PUT", resource_path("v1", "configmaps", NS, "shared"), body=configmap("shared", "1"))
        time.sleep(3)
        m2 = metrics(port)
        fan_patches = m2.get('wavegen_patches_total{action="roll"}', 0) - fan_before
        rss, hwm = proc_memory(controller.pid)

        latencies.sort()

        def pct(p: float) -> float:
            return latencies[min(len(latencies) - 1, round(p / 100 * (len(latencies) - 1)))]

        result = {
            "workloads": args.workloads,
            "configmaps": args.workloads + 1,
            "samples": len(latencies),
            "timeouts": timeouts,
            "latency_ms_p50": round(pct(50), 1),
            "latency_ms_p90": round(pct(90), 1),
            "latency_ms_p99": round(pct(99), 1),
            "latency_ms_max": round(latencies[-1], 1),
            "latency_ms_mean": round(statistics.mean(latencies), 1),
            "steady_state_patches": idle_writes,
            "steady_state_seconds": args.idle,
            "roll_patches_for_samples": roll_patches,
            "fanout_dependents": args.fanout,
            "roll_patches_for_fanout_change": fan_patches,
            "controller_rss_mb_idle": round(rss_idle, 1),
            "controller_rss_mb_end": round(rss, 1),
            "controller_rss_mb_peak": round(hwm, 1),
            "cpus": os.cpu_count(),
        }
        print(json.dumps(result, indent=2))
        watcher.stop = True
        return 0
    finally:
        if controller is not None:
            controller.terminate()
            controller.wait(20)
        cp.close()


if __name__ == "__main__":
    raise SystemExit(main())
