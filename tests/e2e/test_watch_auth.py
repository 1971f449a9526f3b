"""`wavegen watch` credentials against the real API server: exec plugin refresh, KUBECONFIG=a:b, rejected credentials."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import Watcher
from tests.e2e.test_watch import (
    SECRET_VALUE,
    WatchFactory,
    assert_no_secret_leak,
    bundle,
    eventually_rollouts,
    rollouts,
    set_secret,
    transform,
)
from tests.support.controlplane import ControlPlane
from tests.support.tools import run

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

PLUGIN = Path(__file__).with_name("exec_plugin.py")
EXIT_AUTH = 5


@pytest.fixture
def exec_identity(controller_manager: ControlPlane, namespace: str, tmp_path: Path) -> Iterator[dict[str, str]]:
    """A ServiceAccount bound to cluster-admin and the environment the exec plugin mints its tokens with."""
    cp, ns = controller_manager, namespace
    cp.kubectl("create", "serviceaccount", "exec-user", "-n", ns)
    binding = f"{ns}-exec-user"[:63]
    cp.kubectl("create", "clusterrolebinding", binding, "--clusterrole=cluster-admin", f"--serviceaccount={ns}:exec-user")
    state = tmp_path / "plugin"
    state.mkdir()
    yield {
        "PLUGIN_KUBECTL": cp.kubectl_bin,
        "PLUGIN_ADMIN_KUBECONFIG": str(cp.kubeconfig),
        "PLUGIN_NAMESPACE": ns,
        "PLUGIN_SERVICE_ACCOUNT": "exec-user",
        "PLUGIN_STATE": str(state),
        "PLUGIN_LIFETIME": "8",
    }
    cp.kubectl("delete", "clusterrolebinding", binding, "--ignore-not-found", check=False)


def plugin_calls(env: dict[str, str]) -> int:
    calls = Path(env["PLUGIN_STATE"]) / "calls"
    return len(calls.read_text().splitlines()) if calls.exists() else 0


def issued(env: dict[str, str]) -> list[str]:
    path = Path(env["PLUGIN_STATE"]) / "issued"
    return path.read_text().split() if path.exists() else []


def run_once(cp: ControlPlane, ns: str, kubeconfig: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`wavegen watch` expected to stop by itself (bad credentials)."""
    return subprocess.run(
        [sys.executable, "-m", "wavegen", "watch", f"--kubeconfig={kubeconfig}", f"--namespaces={ns}",
         "--metrics-address=127.0.0.1:0"],
        capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def assert_one_line(proc: subprocess.CompletedProcess[str], expected: str, secrets: list[str]) -> None:
    output = proc.stdout + proc.stderr
    assert proc.returncode == EXIT_AUTH, output
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("wavegen: error: ") and expected in lines[0], output
    assert "Traceback" not in output
    for secret in secrets:
        assert secret not in output


# ---- (a) exec plugin refreshed mid-run -------------------------------------------------------


def test_exec_plugin_credential_refreshes_mid_run_and_change_rolls_once(
    controller_manager: ControlPlane, namespace: str, watch: WatchFactory, exec_identity: dict[str, str]
) -> None:
    cp, ns = controller_manager, namespace
    kubeconfig = cp.exec_kubeconfig(sys.executable, [str(PLUGIN)], exec_identity)
    set_secret(cp, ns, SECRET_VALUE + "-1")
    cp.apply(transform(bundle(ns, "hello"), ns))
    # The Lease is renewed every second: requests keep flowing, so credentials must be refreshed as they expire.
    w = watch(
        [f"--namespaces={ns}", "--window=1", "--leader-elect", f"--lease-namespace={ns}",
         "--lease-duration=6", "--renew-deadline=4", "--retry-period=1"],
        kubeconfig=kubeconfig,
    )  # fmt: skip
    w.wait_idle(settle=2)
    assert rollouts(cp, ns) == 1
    first_call = time.monotonic()
    assert plugin_calls(exec_identity) >= 1

    # Past the first token's expiry (8 s) and then some: each refresh minted a new token and revoked the last.
    time.sleep(12)
    assert plugin_calls(exec_identity) >= 2, w.tail()
    assert w.proc is not None and w.proc.poll() is None, w.tail()
    assert w.metrics()["wavegen_is_leader"] == 1

    set_secret(cp, ns, SECRET_VALUE + "-2")
    eventually_rollouts(cp, ns, 2)
    w.wait_idle(settle=2)
    assert rollouts(cp, ns) == 2
    m = w.metrics()
    assert m["wavegen_rollouts_total"] == 1
    assert m.get("wavegen_errors_total", 0) == 0, w.tail()
    calls = plugin_calls(exec_identity)
    print(f"exec plugin ran {calls} times in {time.monotonic() - first_call:.1f}s of an 8 s credential lifetime")
    # Refreshed on expiry, not per request: about one run per 8 s lifetime (less its margin), not hundreds.
    assert 3 <= calls <= 2 + (time.monotonic() - first_call) / 5, calls
    text = w.text()
    # A rejected credential is logged with its status (and "Unauthorized"); a bare "401" would
    # also match a random port in the command line or the server address.
    rejected = [r for r in w.records() if 401 in (r.get("status"), r.get("code"))]
    assert not rejected and "Unauthorized" not in text, w.tail()
    assert all(token not in text for token in issued(exec_identity))
    assert_no_secret_leak(w, cp, ns)


# ---- (b) KUBECONFIG=a:b -------------------------------------------------------------------


class EnvWatcher(Watcher):
    """A Watcher that finds its kubeconfig through ``$KUBECONFIG`` instead of ``--kubeconfig``."""

    def __init__(self, cp: ControlPlane, args: list[str], log: Path, kubeconfig_env: str) -> None:
        super().__init__(cp, args, log)
        self.kubeconfig_env = kubeconfig_env

    def start(self, wait_ready: bool = True) -> Watcher:
        argv = [sys.executable, "-m", "wavegen", "watch", *self.args, f"--metrics-address=127.0.0.1:{self.port}"]
        env = {k: v for k, v in os.environ.items() if not k.startswith("WAVEGEN_HMAC")}
        env["KUBECONFIG"] = self.kubeconfig_env
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
        if wait_ready:
            self.wait_ready()
        return self


def test_kubeconfig_list_with_cluster_and_user_in_different_files(
    controller_manager: ControlPlane, namespace: str, tmp_path: Path
) -> None:
    cp, ns = controller_manager, namespace
    a, b = cp.split_kubeconfig(cp.admin_token, "split-admin", ns)
    # kubectl reads the same pair: the files really are split the way it merges them.
    got = run([cp.kubectl_bin, "get", "namespace", ns, "-o", "name"], env={"KUBECONFIG": f"{a}{os.pathsep}{b}"})
    assert got.stdout.strip() == f"namespace/{ns}"
    set_secret(cp, ns, SECRET_VALUE + "-1")
    cp.apply(transform(bundle(ns, "hello"), ns))
    w = EnvWatcher(cp, [f"--namespaces={ns}", "--window=1"], tmp_path / "split.log", f"{a}{os.pathsep}{b}")
    try:
        w.start()
        w.wait_idle(settle=2)
        set_secret(cp, ns, SECRET_VALUE + "-2")
        eventually_rollouts(cp, ns, 2)
        w.wait_idle(settle=2)
        assert rollouts(cp, ns) == 2
        assert w.metrics()["wavegen_rollouts_total"] == 1
        assert cp.admin_token not in w.text()
    finally:
        w.stop()


# ---- (c) credentials that cannot work: one line, exit 5 ------------------------------------------


def test_rejected_token_is_one_line(controller_manager: ControlPlane, namespace: str) -> None:
    token = "wavegen-not-a-valid-token-4f2a9c"
    proc = run_once(controller_manager, namespace, controller_manager.kubeconfig_for_token(token, "nobody"))
    assert_one_line(proc, "rejected the credentials of kubeconfig user 'nobody' (401 Unauthorized)", [token])


def test_exec_plugin_token_rejected_after_one_rerun_is_one_line(
    controller_manager: ControlPlane, namespace: str, tmp_path: Path
) -> None:
    script = tmp_path / "bad-plugin.py"
    calls = tmp_path / "calls"
    script.write_text(
        "import json, pathlib\n"
        f"p = pathlib.Path({str(calls)!r}); p.open('a').write('x\\n')\n"
        "print(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1', 'kind': 'ExecCredential',"
        " 'status': {'token': 'wavegen-bogus-exec-token'}}))\n"
    )
    kubeconfig = controller_manager.exec_kubeconfig(sys.executable, [str(script)])
    proc = run_once(controller_manager, namespace, kubeconfig)
    assert_one_line(proc, "rejected the credentials", ["wavegen-bogus-exec-token"])
    assert len(calls.read_text().splitlines()) == 2, "a 401 re-runs the plugin once, then gives up"


def test_expired_exec_credential_is_one_line(
    controller_manager: ControlPlane, namespace: str, exec_identity: dict[str, str]
) -> None:
    env = {**exec_identity, "PLUGIN_LIFETIME": "-60"}
    proc = run_once(controller_manager, namespace, controller_manager.exec_kubeconfig(sys.executable, [str(PLUGIN)], env))
    assert_one_line(proc, "returned a credential that expired at", issued(env))
    assert issued(env), "the plugin ran and handed out a (revocable, expired-by-timestamp) token"


def test_unrunnable_exec_command_is_one_line(controller_manager: ControlPlane, namespace: str) -> None:
    kubeconfig = controller_manager.exec_kubeconfig("/nonexistent/gke-gcloud-auth-plugin")
    proc = run_once(controller_manager, namespace, kubeconfig)
    assert_one_line(proc, "exec plugin '/nonexistent/gke-gcloud-auth-plugin' cannot be run: No such file or directory", [])


def test_token_revoked_mid_run_stops_with_one_line(controller_manager: ControlPlane, namespace: str, watch: WatchFactory) -> None:
    cp, ns = controller_manager, namespace
    cp.kubectl("create", "serviceaccount", "revoked", "-n", ns)
    cp.kubectl("create", "rolebinding", "revoked", "-n", ns, "--clusterrole=admin", f"--serviceaccount={ns}:revoked")
    cp.kubectl("create", "secret", "generic", "revoked-anchor", "-n", ns)
    token = cp.kubectl(
        "create", "token", "revoked", "-n", ns, "--bound-object-kind=Secret", "--bound-object-name=revoked-anchor"
    ).stdout.strip()
    set_secret(cp, ns, SECRET_VALUE + "-1")
    cp.apply(transform(bundle(ns, "hello"), ns))
    w = watch([f"--namespaces={ns}", "--window=0", "--no-events"], kubeconfig=cp.kubeconfig_for_token(token, "revoked", ns))
    w.wait_idle(settle=1)
    cp.kubectl("delete", "secret", "revoked-anchor", "-n", ns)  # revokes the bound token
    time.sleep(11)  # kube-apiserver caches a successful token authentication for 10 s
    set_secret(cp, ns, SECRET_VALUE + "-2")
    assert w.proc is not None
    code = w.proc.wait(60)
    w.proc = None
    last = w.text().splitlines()[-1]
    assert code == EXIT_AUTH, w.tail()
    assert last == "wavegen: error: the API server rejected the credentials of kubeconfig user 'revoked' (401 Unauthorized)"
    assert token not in w.text() and "Traceback" not in w.text()
