"""Benchmark `wavegen watch` memory against a real kube-apiserver: referenced config plus many unrelated large Secrets.

    python benchmarks/watch_memory_bench.py [--workloads 2000] [--secrets 10000] [--secret-kib 32]
                                            [--idle 20] [--baseline-ref 88d3752 | --no-baseline] [--growth]

Starts etcd + kube-apiserver on loopback (binaries from hack/tools.sh) and fills
namespace `bench` with N opted-in Deployments, each reading its own ConfigMap,
plus M Opaque Secrets of K KiB of random data that no workload references.
Then, one after the other on the same cluster, it runs the controller of the
baseline commit (extracted with `git archive`) and the controller of this
working tree, each as `wavegen watch --namespaces=bench --window=0
--max-patches-per-second=0`, and for each records:

- the time until every workload is reconciled (synced, queue empty);
- peak RSS (VmHWM) and steady RSS (VmRSS after --idle seconds without changes);
- patches written while idle (must be 0) and roll patches for --changes ConfigMap
  updates (must equal --changes).

Between the runs the controller's records are removed again, so both runs adopt
every workload. It prints one JSON document with both results and their ratios.

With --growth, each controller runs twice: first before the unrelated Secrets
exist, then after they were created, and the script reports how much steady and
peak RSS the Secrets add (the figure that should not depend on them).
"""

from __future__ import annotations

import argparse
import base64
import http.client
import json
import os
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from watch_bench import deployment, proc_memory  # noqa: E402

from tests.e2e.conftest import parse_metrics  # noqa: E402
from tests.support.controlplane import ControlPlane, free_port, start_control_plane  # noqa: E402
from tests.support.tools import find_tool  # noqa: E402

NS = "bench"
RECORD = ("wavegen.io/live-hash", "wavegen.io/live-refs", "wavegen.io/live-missing")


class Api:
    """Minimal JSON over HTTPS as the admin, one connection per thread (independent of the controller's client)."""

    def __init__(self, cp: ControlPlane) -> None:
        self.host, port = cp.server.removeprefix("https://").split(":")
        self.port = int(port)
        self.token = cp.admin_token
        self.ctx = ssl.create_default_context(cafile=str(cp.ca_file))
        self.local = threading.local()

    def request(self, method: str, path: str, body: Any = None, content_type: str = "application/json") -> Any:
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json", "Content-Type": content_type}
        payload = json.dumps(body).encode() if body is not None else None
        for attempt in (1, 2):
            conn = getattr(self.local, "conn", None)
            if conn is None:
                conn = self.local.conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=60)
            try:
                conn.request(method, path, body=payload, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
            except (OSError, http.client.HTTPException):
                conn.close()
                self.local.conn = None  # the server closed an idle kept-alive connection: once more on a new one
                if attempt == 2:
                    raise
                continue
            if resp.status >= 300:
                raise RuntimeError(f"{method} {path}: {resp.status} {data[:200]!r}")
            return json.loads(data) if data else {}
        raise AssertionError("unreachable")


def metrics(port: int) -> dict[str, float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
        return parse_metrics(resp.read().decode())


def configmap(i: int, value: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{i}", "namespace": NS}, "data": {"value": value}}


def secret(i: int, size: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "Opaque",
        "metadata": {"name": f"unrelated-{i}", "namespace": NS},
        "data": {"blob": base64.b64encode(os.urandom(size)).decode()},
    }


def populate(api: Api, workloads: int, secrets: int, size: int) -> float:
    t0 = time.monotonic()
    api.request("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: api.request("POST", f"/api/v1/namespaces/{NS}/configmaps", configmap(i, "0")), range(workloads)))
        list(
            pool.map(
                lambda i: api.request("POST", f"/apis/apps/v1/namespaces/{NS}/deployments", deployment(i, fanout=0)),
                range(workloads),
            )
        )
    return time.monotonic() - t0 + add_secrets(api, secrets, size)


def add_secrets(api: Api, secrets: int, size: int) -> float:
    t0 = time.monotonic()
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: api.request("POST", f"/api/v1/namespaces/{NS}/secrets", secret(i, size)), range(secrets)))
    return time.monotonic() - t0


def clear_records(api: Api, workloads: int) -> None:
    patch = {"metadata": {"annotations": dict.fromkeys(RECORD)}}
    with ThreadPoolExecutor(8) as pool:
        list(
            pool.map(
                lambda i: api.request(
                    "PATCH", f"/apis/apps/v1/namespaces/{NS}/deployments/web-{i}", patch, "application/merge-patch+json"
                ),
                range(workloads),
            )
        )


def baseline_source(ref: str, into: Path) -> Path:
    """The baseline commit's `wavegen` package, extracted (no checkout, no worktree)."""
    archive = subprocess.run(["git", "-C", str(REPO), "archive", ref, "wavegen"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def run_controller(cp: ControlPlane, api: Api, src: Path, label: str, args: argparse.Namespace) -> dict[str, Any]:
    port = free_port()
    argv = [
        sys.executable, "-m", "wavegen", "watch", f"--kubeconfig={cp.kubeconfig}", f"--namespaces={NS}", "--window=0",
        "--max-patches-per-second=0", f"--metrics-address=127.0.0.1:{port}", "--log-level=warning",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(src)}
    log = open(cp.workdir / f"watch-{label}.log", "wb")  # noqa: SIM115
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=src, env=env)
    try:
        while True:
            try:
                m = metrics(port)
                if (
                    m.get("wavegen_synced") == 1
                    and m.get("wavegen_reconciles_total", 0) >= args.workloads
                    and m.get("wavegen_queue_depth") == 0
                ):
                    break
            except OSError:
                pass
            if proc.poll() is not None:
                raise SystemExit(f"{label} controller exited; see {cp.workdir / f'watch-{label}.log'}")
            time.sleep(0.5)
        ready = time.monotonic() - t0
        adopted = m.get('wavegen_patches_total{action="adopt"}', 0)
        before = metrics(port)
        time.sleep(args.idle)
        after = metrics(port)
        idle_writes = after.get("wavegen_patches_total", 0) - before.get("wavegen_patches_total", 0)
        rss_steady, _ = proc_memory(proc.pid)
        for n in range(args.changes):
            api.request("PUT", f"/api/v1/namespaces/{NS}/configmaps/cm-{n}", configmap(n, f"changed-{label}-{n}"))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            rolls = metrics(port).get('wavegen_patches_total{action="roll"}', 0)
            if rolls >= args.changes:
                break
            time.sleep(0.2)
        time.sleep(1)
        end = metrics(port)
        rss_end, hwm = proc_memory(proc.pid)
        return {
            "seconds_to_reconcile_all": round(ready, 1),
            "adopt_patches": adopted,
            "rss_mb_steady": round(rss_steady, 1),
            "rss_mb_after_changes": round(rss_end, 1),
            "rss_mb_peak": round(hwm, 1),
            "steady_state_patches": idle_writes,
            "roll_patches_for_changes": end.get('wavegen_patches_total{action="roll"}', 0),
            "sources_indexed": end.get("wavegen_sources_indexed", 0),
        }
    finally:
        proc.terminate()
        proc.wait(30)
        log.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--workloads", type=int, default=2000)
    parser.add_argument("--secrets", type=int, default=10000)
    parser.add_argument("--secret-kib", type=int, default=32)
    parser.add_argument("--idle", type=float, default=20.0)
    parser.add_argument("--changes", type=int, default=20)
    parser.add_argument("--baseline-ref", default="88d3752", help="commit whose controller is the baseline")
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--growth", action="store_true", help="also run each controller before the Secrets exist")
    parser.add_argument("--current-src", default=str(REPO), help="directory holding the `wavegen` package to measure")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(143))

    tools = {name: find_tool(name) for name in ("etcd", "kube-apiserver", "kubectl")}
    missing = [n for n, p in tools.items() if p is None]
    if missing:
        print(f"missing tools: {', '.join(missing)} (run hack/tools.sh)", file=sys.stderr)
        return 2
    cp = start_control_plane(str(tools["etcd"]), str(tools["kube-apiserver"]), str(tools["kubectl"]))
    try:
        api = Api(cp)
        took = populate(api, args.workloads, 0 if args.growth else args.secrets, args.secret_kib * 1024)
        print(f"created {args.workloads} ConfigMaps + Deployments in {took:.1f}s", flush=True)
        results: dict[str, Any] = {
            "workloads": args.workloads,
            "unrelated_secrets": args.secrets,
            "secret_kib": args.secret_kib,
            "cpus": os.cpu_count(),
        }
        with tempfile.TemporaryDirectory(prefix="wavegen-baseline-") as tmp:
            runs: list[tuple[str, Path]] = []
            if not args.no_baseline:
                runs.append((f"baseline {args.baseline_ref}", baseline_source(args.baseline_ref, Path(tmp))))
            runs.append(("current", Path(args.current_src)))
            phases = [" without secrets", ""] if args.growth else [""]
            done = 0
            for phase in phases:
                if phase == "" and args.growth:
                    took = add_secrets(api, args.secrets, args.secret_kib * 1024)
                    print(f"created {args.secrets} Secrets of {args.secret_kib} KiB in {took:.1f}s", flush=True)
                for label, src in runs:
                    if done:
                        clear_records(api, args.workloads)
                    done += 1
                    print(f"running the {label} controller{phase}", flush=True)
                    # each run its own tag: the ConfigMap changes of a run must differ from the last run's
                    results[label + phase] = run_controller(cp, api, src, f"{label.split()[0]}-{done}", args)
                    print(json.dumps({label + phase: results[label + phase]}), flush=True)
        if args.growth:
            for label, _ in runs:
                without, with_ = results[label + " without secrets"], results[label]
                results[label + " growth_mb"] = {k: round(with_[k] - without[k], 1) for k in ("rss_mb_steady", "rss_mb_peak")}
        if not args.no_baseline:
            base, cur = results[f"baseline {args.baseline_ref}"], results["current"]
            results["ratio_current_to_baseline"] = {
                k: round(cur[k] / base[k], 3) for k in ("rss_mb_steady", "rss_mb_peak") if base[k]
            }
        print(json.dumps(results, indent=2))
        return 0
    finally:
        cp.close()


if __name__ == "__main__":
    raise SystemExit(main())
