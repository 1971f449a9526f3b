"""Benchmark `wavegen watch` against a real kube-apiserver: change-to-patch latency, RSS, steady-state writes, patches per change.

    python benchmarks/watch_bench.py [--workloads 2000] [--samples 200] [--idle 30] [--fanout 20] [--baseline GIT_REF]

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

With --baseline REF the controller of that git revision runs against the same
cluster and objects: its own steady-state window, and latency samples in blocks
that alternate with the current tree's (so load from other jobs hits both alike);
the output then has both results and candidate/baseline ratios.
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
sys.path.insert(0, str(REPO / "benchmarks"))

from startup_bench import export_revision  # noqa: E402

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


def patches(m: dict[str, float]) -> float:
    return sum(v for k, v in m.items() if k.startswith("wavegen_patches_total"))


class Controller:
    """`wavegen watch` from a source tree (``python -m wavegen`` resolves the package from its working directory)."""

    def __init__(self, name: str, kubeconfig: Path, cwd: Path, log: Path) -> None:
        self.name = name
        self.port = free_port()
        argv = [
            sys.executable, "-m", "wavegen", "watch", f"--kubeconfig={kubeconfig}", f"--namespaces={NS}", "--window=0",
            "--max-patches-per-second=0", f"--metrics-address=127.0.0.1:{self.port}", "--log-level=warning",
        ]  # fmt: skip
        print(f"{name} controller ({cwd}):", " ".join(argv[2:]), flush=True)
        self.log = log
        with open(log, "ab") as out:
            self.proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, cwd=cwd)

    def wait_synced(self, workloads: int, adopt: bool) -> None:
        """Every initial list done, every workload reconciled (and, on the first start, adopted), nothing queued."""
        while True:
            try:
                m = metrics(self.port)
                reconciled = sum(v for k, v in m.items() if k.startswith("wavegen_reconciles_total"))
                adopted = m.get('wavegen_patches_total{action="adopt"}', 0)
                if (
                    m.get("wavegen_synced") == 1
                    and reconciled >= workloads
                    and (adopted >= workloads or not adopt)
                    and m.get("wavegen_queue_depth") == 0
                ):
                    return
            except OSError:
                pass
            if self.proc.poll() is not None:
                raise SystemExit(f"{self.name} controller exited; see {self.log}")
            time.sleep(0.5)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(20)


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
            try:
                for event in self.client.watch(path, {"resourceVersion": rv, "timeoutSeconds": 600}, 630):
                    rv = self._record(event, rv)
            except OSError:
                if self.stop:
                    return  # the control plane is going away at the end of the run
                raise

    def _record(self, event: dict[str, Any], rv: str) -> str:
        now = time.monotonic()
        obj = event.get("object") or {}
        value = (((obj.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("annotations", {}).get(LIVE)
        name = (obj.get("metadata") or {}).get("name")
        if value and name:
            with self.cond:
                if self.seen.get(name, ("", 0.0))[0] != value:
                    self.seen[name] = (value, now)
                    self.cond.notify_all()
        return str((obj.get("metadata") or {}).get("resourceVersion", rv))

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
    parser.add_argument(
        "--baseline", default="", metavar="GIT_REF", help="also run this revision's controller, interleaved, and print ratios"
    )
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

        base_dir = export_revision(args.baseline, cp.workdir / "baseline") if args.baseline else None
        variants = ["candidate"] + (["baseline"] if base_dir else [])
        running: Controller | None = None

        def switch(name: str) -> Controller:
            nonlocal running, controller
            if running is not None and running.name == name:
                return running
            if running is not None:
                running.stop()
            cwd = REPO if name == "candidate" else base_dir
            assert cwd is not None
            running = Controller(name, cp.kubeconfig, cwd, cp.workdir / f"watch-{name}.log")
            controller = running.proc
            t0 = time.monotonic()
            running.wait_synced(args.workloads, adopt=name == "candidate" and name not in stats)
            stats.setdefault(name, {"sync_s": round(time.monotonic() - t0, 1), "latencies": [], "rolls": 0.0})
            return running

        stats: dict[str, dict[str, Any]] = {}
        t0 = time.monotonic()
        switch("candidate")
        print(f"adopted {args.workloads} workloads (metadata-only patches) in {time.monotonic() - t0:.1f}s", flush=True)
        for name in variants:
            ctl = switch(name)
            before = metrics(ctl.port)
            time.sleep(args.idle)
            after = metrics(ctl.port)
            stats[name]["idle_writes"] = patches(after) - patches(before)
            print(f"{name}: {stats[name]['idle_writes']:g} writes in {args.idle:g}s idle", flush=True)

        watcher = DeploymentWatch(Client(load_kubeconfig(str(cp.kubeconfig))))
        rv = client.request("GET", resource_path("apps/v1", "deployments", NS), {"limit": 1})["metadata"]["resourceVersion"]
        threading.Thread(target=watcher.run, args=(rv,), daemon=True).start()
        time.sleep(0.5)
        timeouts = 0
        rng = random.Random(6)
        # Blocks alternate between the variants so that load from other jobs on the machine hits both alike.
        blocks = 4 if base_dir else 1
        for block in range(blocks):
            name = variants[block % len(variants)]
            ctl = switch(name)
            rolls_before = metrics(ctl.port).get('wavegen_patches_total{action="roll"}', 0)
            for n in range(block * args.samples // blocks, (block + 1) * args.samples // blocks):
                i = rng.randrange(args.fanout, args.workloads)  # single-dependent ConfigMaps
                name_i = f"web-{i}"
                old = watcher.seen.get(name_i, ("", 0.0))[0] or None
                client.request("PUT", resource_path("v1", "configmaps", NS, f"cm-{i}"), body=configmap(f"cm-{i}", f"v{n}"))
                accepted = time.monotonic()
                seen = watcher.wait_change(name_i, old)
                if seen is None:
                    timeouts += 1
                else:
                    stats[name]["latencies"].append((seen - accepted) * 1000)
                time.sleep(0.05)
            time.sleep(1)
            stats[name]["rolls"] += metrics(ctl.port).get('wavegen_patches_total{action="roll"}', 0) - rolls_before
            stats[name]["rss"] = proc_memory(ctl.proc.pid)

        ctl = switch("candidate")
        m = metrics(ctl.port)
        fan_before = m.get('wavegen_patches_total{action="roll"}', 0)
        client.request("PUT", resource_path("v1", "configmaps", NS, "shared"), body=configmap("shared", "1"))
        time.sleep(3)
        m2 = metrics(ctl.port)
        fan_patches = m2.get('wavegen_patches_total{action="roll"}', 0) - fan_before

        def summary(name: str) -> dict[str, Any]:
            lat = sorted(stats[name]["latencies"])

            def pct(p: float) -> float:
                return round(lat[min(len(lat) - 1, round(p / 100 * (len(lat) - 1)))], 1)

            rss, hwm = stats[name]["rss"]
            return {
                "samples": len(lat),
                "latency_ms_p50": pct(50),
                "latency_ms_p90": pct(90),
                "latency_ms_p99": pct(99),
                "latency_ms_max": round(lat[-1], 1),
                "latency_ms_mean": round(statistics.mean(lat), 1),
                "steady_state_patches": stats[name]["idle_writes"],
                "roll_patches_for_samples": stats[name]["rolls"],
                "sync_seconds": stats[name]["sync_s"],
                "controller_rss_mb": round(rss, 1),
                "controller_rss_mb_peak": round(hwm, 1),
            }

        result: dict[str, Any] = {
            "workloads": args.workloads,
            "configmaps": args.workloads + 1,
            "steady_state_seconds": args.idle,
            "timeouts": timeouts,
            "fanout_dependents": args.fanout,
            "roll_patches_for_fanout_change": fan_patches,
            # The controller's own view (prometheus histogram): first change queued -> roll patch answered.
            "controller_change_to_patch_count": m2.get("wavegen_change_to_patch_seconds_count"),
            "cpus": os.cpu_count(),
            "load_average_1m_at_end": round(os.getloadavg()[0], 2),
            "candidate": summary("candidate"),
        }
        if base_dir:
            result["baseline"] = {"ref": args.baseline, **summary("baseline")}
            result["ratio_candidate_to_baseline"] = {
                key: round(result["candidate"][key] / result["baseline"][key], 2)
                for key in ("latency_ms_p50", "latency_ms_p99", "latency_ms_mean", "controller_rss_mb")
                if result["baseline"][key]
            }
        print(json.dumps(result, indent=2))
        watcher.stop = True
        if running is not None:
            running.stop()
            controller = None
        return 0
    finally:
        if controller is not None:
            controller.terminate()
            controller.wait(20)
        cp.close()


if __name__ == "__main__":
    raise SystemExit(main())
