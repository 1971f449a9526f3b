"""End-to-end fixtures: the real control plane (shared support code) and `wavegen watch` run as a subprocess."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

try:
    import tests.support  # noqa: F401
except ImportError:  # e.g. --import-mode=importlib without the repo root on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.support.controlplane import ControlPlane, free_port


def parse_metrics(text: str) -> dict[str, float]:
    """Prometheus text -> {'name{labels}': value}, plus per-name totals under the bare name."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        series, _, value = line.rpartition(" ")
        out[series] = float(value)
        name = series.split("{", 1)[0]
        if "{" in series:
            out[name] = out.get(name, 0.0) + float(value)
    return out


class Watcher:
    """One `wavegen watch` subprocess with its log file and metrics endpoint."""

    def __init__(self, cp: ControlPlane, args: list[str], log: Path, kubeconfig: Path | None = None) -> None:
        self.cp = cp
        self.args = args
        self.log = log
        self.kubeconfig = kubeconfig or cp.kubeconfig
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, wait_ready: bool = True) -> Watcher:
        self.port = free_port()
        # Ours come last: argparse keeps the last value, so they override a rendered Deployment's args.
        argv = [
            sys.executable, "-m", "wavegen", "watch", *self.args, f"--kubeconfig={self.kubeconfig}",
            f"--metrics-address=127.0.0.1:{self.port}", "--log-level=debug",
        ]  # fmt: skip
        env = {k: v for k, v in os.environ.items() if not k.startswith("WAVEGEN_HMAC")}
        with open(self.log, "ab") as out:
            out.write(f"\n==== start {time.strftime('%H:%M:%S')}: {' '.join(argv)}\n".encode())
            out.flush()
            self.proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
        if wait_ready:
            self.wait_ready()
        return self

    def stop(self) -> int | None:
        proc, self.proc = self.proc, None
        if proc is None:
            return None
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                return proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                return proc.wait(10)
        return proc.returncode

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(10)
            self.proc = None

    def get(self, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=5) as resp:
                return int(resp.status), resp.read().decode()
        except urllib.error.HTTPError as err:
            return int(err.code), err.read().decode()

    def metrics(self) -> dict[str, float]:
        return parse_metrics(self.get("/metrics")[1])

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc is None or self.proc.poll() is not None:
                raise AssertionError(f"wavegen watch exited:\n{self.tail()}")
            try:
                if self.get("/readyz")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise AssertionError(f"wavegen watch not ready after {timeout}s:\n{self.tail()}")

    def wait_idle(self, settle: float, timeout: float = 60) -> None:
        """Synced, nothing queued, and then ``settle`` more seconds for anything in flight."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = self.metrics()
            if m.get("wavegen_synced") == 1 and m.get("wavegen_queue_depth") == 0:
                time.sleep(settle)
                if self.metrics().get("wavegen_queue_depth") == 0:
                    return
            time.sleep(0.2)
        raise AssertionError(f"wavegen watch never went idle:\n{self.tail()}")

    def text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def records(self) -> list[dict[str, Any]]:
        out = []
        for line in self.text().splitlines():
            if line.startswith("{"):
                with contextlib.suppress(ValueError):
                    out.append(json.loads(line))
        return out

    def tail(self, lines: int = 60) -> str:
        return "\n".join(self.text().splitlines()[-lines:])


@pytest.fixture
def watch(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[..., Watcher]]:
    """Factory: ``watch(args, kubeconfig=None)`` -> a started Watcher; all are stopped afterwards."""
    cp: ControlPlane = request.getfixturevalue("controller_manager")
    started: list[Watcher] = []

    def make(args: list[str], kubeconfig: Path | None = None, start: bool = True) -> Watcher:
        w = Watcher(cp, args, tmp_path / f"watch-{len(started)}.log", kubeconfig)
        started.append(w)
        return w.start() if start else w

    yield make
    for w in started:
        w.stop()
