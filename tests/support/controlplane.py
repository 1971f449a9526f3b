"""A real Kubernetes control plane on loopback: etcd, kube-apiserver and,
on request, kube-controller-manager, built by ``hack/tools.sh``.

There is no kubelet: pods stay Pending, but Deployments, ReplicaSets,
ServiceAccounts, tokens, RBAC, watches and admission are all the real thing.

Authentication: a static admin token (user ``wavegen-admin`` in group
``system:masters``) via ``--token-auth-file``, client certificates signed by
the test CA via ``--client-ca-file``, and ServiceAccount tokens signed with a
generated key (``kubectl create token`` works, also bound to an object so that
deleting the object revokes the token).  Kubeconfigs for a token, for a
``KUBECONFIG=a:b`` split and for an ``exec`` credential plugin are written on
request.  Authorization: ``Node,RBAC``.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.tools import ToolError, run

ADMIN_USER = "wavegen-admin"
SERVICE_CLUSTER_IP_RANGE = "10.0.0.0/24"
SERVICE_ACCOUNT_ISSUER = "https://kubernetes.default.svc.cluster.local"

#: (component, seconds) for every start, printed in pytest's terminal summary.
STARTUP_TIMES: list[tuple[str, float]] = []


class ControlPlaneError(RuntimeError):
    pass


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class ChildProcess:
    """A child process in its own process group, logging to a file."""

    name: str
    argv: list[str]
    log: Path
    popen: subprocess.Popen[bytes] | None = None
    env: dict[str, str] | None = None  # the whole environment; None: this process's

    def start(self) -> None:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log, "ab") as out:
            out.write(f"\n==== start {time.strftime('%H:%M:%S')}: {' '.join(self.argv)}\n".encode())
            out.flush()
            self.popen = subprocess.Popen(
                self.argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # own process group: killpg reaches children too
                preexec_fn=_die_with_parent,
                env=self.env,
            )

    def running(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def stop(self, timeout: float = 15) -> None:
        p = self.popen
        if p is None:
            return
        self.popen = None
        if p.poll() is None:
            _killpg(p.pid, signal.SIGTERM)
            try:
                p.wait(timeout)
            except subprocess.TimeoutExpired:
                _killpg(p.pid, signal.SIGKILL)
                p.wait(timeout)
        else:
            _killpg(p.pid, signal.SIGKILL)  # stragglers of an exited leader

    def tail(self, lines: int = 40) -> str:
        try:
            text = self.log.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


def _die_with_parent() -> None:
    """In the child: be killed when pytest dies, even by SIGKILL (Linux)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _killpg(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def _openssl(*args: str, cwd: Path) -> None:
    openssl = shutil.which("openssl")
    if openssl is None:
        raise ControlPlaneError("openssl is required to generate the control plane's keys")
    run([openssl, *args], cwd=cwd, timeout=60)


def _make_pki(pki: Path) -> None:
    """CA, API server serving certificate, ServiceAccount signing key pair."""
    pki.mkdir(parents=True)
    _openssl(
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "7",
        "-keyout", "ca.key", "-out", "ca.crt", "-subj", "/CN=wavegen-test-ca",
        cwd=pki,
    )  # fmt: skip
    (pki / "apiserver.ext").write_text(
        "subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,"
        "DNS:kubernetes.default,DNS:kubernetes.default.svc\n"
        "extendedKeyUsage=serverAuth\n"
        "keyUsage=critical,digitalSignature,keyEncipherment\n"
    )
    _openssl(
        "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "apiserver.key",
        "-out", "apiserver.csr", "-subj", "/CN=kube-apiserver",
        cwd=pki,
    )  # fmt: skip
    _openssl(
        "x509", "-req", "-in", "apiserver.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
        "-CAcreateserial", "-days", "7", "-out", "apiserver.crt", "-extfile", "apiserver.ext",
        cwd=pki,
    )  # fmt: skip
    _openssl("genrsa", "-out", "sa.key", "2048", cwd=pki)
    _openssl("rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=pki)


def _kubeconfig(server: str, ca_file: Path, user: str, token: str, namespace: str = "default") -> str:
    """A kubeconfig (JSON is valid YAML) for one token."""
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "wavegen-test",
                "cluster": {"server": server, "certificate-authority": str(ca_file)},
            }
        ],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [
            {
                "name": f"{user}@wavegen-test",
                "context": {
                    "cluster": "wavegen-test",
                    "user": user,
                    "namespace": namespace,
                },
            }
        ],
        "current-context": f"{user}@wavegen-test",
        "preferences": {},
    }
    return json.dumps(doc, indent=2) + "\n"


def wait_for(what: str, check: Any, timeout: float, procs: Sequence[ChildProcess] = ()) -> None:
    """Poll ``check()`` until truthy; fail early if one of ``procs`` died."""
    deadline = time.monotonic() + timeout
    last: BaseException | None = None
    while time.monotonic() < deadline:
        for p in procs:
            if not p.running():
                raise ControlPlaneError(f"{p.name} exited while waiting for {what}:\n{p.tail()}")
        try:
            if check():
                return
        except (
            OSError,
            urllib.error.URLError,
            ssl.SSLError,
            subprocess.SubprocessError,
        ) as e:
            last = e
        time.sleep(0.2)
    tails = "\n".join(f"--- {p.name} ({p.log}) ---\n{p.tail()}" for p in procs)
    raise ControlPlaneError(f"timed out after {timeout:.0f}s waiting for {what} (last error: {last})\n{tails}")


def _http_ok(url: str, context: ssl.SSLContext | None, token: str | None = None) -> bool:
    req = urllib.request.Request(url)
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(req, timeout=5, context=context) as resp:
        return bool(resp.status == 200)


@dataclass
class ControlPlane:
    """etcd + kube-apiserver (+ optionally kube-controller-manager) on 127.0.0.1.

    Attributes tests use: ``kubeconfig`` (admin kubeconfig path), ``server``
    (``https://127.0.0.1:PORT``), ``admin_token``, ``ca_file``, ``workdir``.
    """

    etcd_bin: str
    apiserver_bin: str
    kubectl_bin: str
    controller_manager_bin: str = ""
    workdir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="wavegen-cp-")))
    admin_token: str = field(default_factory=lambda: secrets.token_hex(24))
    etcd_port: int = field(default_factory=free_port)
    etcd_peer_port: int = field(default_factory=free_port)
    apiserver_port: int = field(default_factory=free_port)

    def __post_init__(self) -> None:
        self.pki = self.workdir / "pki"
        self.logs = self.workdir / "logs"
        self.ca_file = self.pki / "ca.crt"
        self.server = f"https://127.0.0.1:{self.apiserver_port}"
        self.kubeconfig = self.workdir / "admin.kubeconfig"
        self._etcd: ChildProcess | None = None
        self._apiserver: ChildProcess | None = None
        self._controller_manager: ChildProcess | None = None
        self.controller_manager_port: int | None = None

    # ---- life cycle -------------------------------------------------------

    def start(self) -> ControlPlane:
        t0 = time.monotonic()
        try:
            _make_pki(self.pki)
            (self.workdir / "tokens.csv").write_text(f'{self.admin_token},{ADMIN_USER},{ADMIN_USER},"system:masters"\n')
            self.kubeconfig.write_text(_kubeconfig(self.server, self.ca_file, ADMIN_USER, self.admin_token))
            self._start_etcd()
            self.start_apiserver(record=False)
        except BaseException:
            self.close()
            raise
        STARTUP_TIMES.append(("etcd + kube-apiserver", time.monotonic() - t0))
        return self

    def _start_etcd(self) -> None:
        client = f"http://127.0.0.1:{self.etcd_port}"
        peer = f"http://127.0.0.1:{self.etcd_peer_port}"
        self._etcd = ChildProcess(
            "etcd",
            [
                self.etcd_bin,
                "--name=wavegen",
                f"--data-dir={self.workdir / 'etcd'}",
                f"--listen-client-urls={client}",
                f"--advertise-client-urls={client}",
                f"--listen-peer-urls={peer}",
                f"--initial-advertise-peer-urls={peer}",
                f"--initial-cluster=wavegen={peer}",
                "--unsafe-no-fsync",
                "--log-level=warn",
            ],
            self.logs / "etcd.log",
        )
        self._etcd.start()
        wait_for("etcd /health", lambda: _http_ok(f"{client}/health", None), 60, [self._etcd])

    def _apiserver_argv(self) -> list[str]:
        pki = self.pki
        return [
            self.apiserver_bin,
            f"--etcd-servers=http://127.0.0.1:{self.etcd_port}",
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
            # v1.37 refuses a loopback advertise address with the endpoint reconciler;
            # nothing here needs the kubernetes Service's endpoints.
            "--endpoint-reconciler-type=none",
            f"--secure-port={self.apiserver_port}",
            f"--tls-cert-file={pki / 'apiserver.crt'}",
            f"--tls-private-key-file={pki / 'apiserver.key'}",
            f"--client-ca-file={pki / 'ca.crt'}",
            f"--token-auth-file={self.workdir / 'tokens.csv'}",
            "--authorization-mode=Node,RBAC",
            f"--service-account-issuer={SERVICE_ACCOUNT_ISSUER}",
            f"--service-account-key-file={pki / 'sa.pub'}",
            f"--service-account-signing-key-file={pki / 'sa.key'}",
            f"--service-cluster-ip-range={SERVICE_CLUSTER_IP_RANGE}",
            "--allow-privileged=true",
            "--profiling=false",
            "--v=1",
        ]

    def start_apiserver(self, *, record: bool = True, timeout: float = 90) -> float:
        """Start kube-apiserver (again) on the same port; wait for /readyz; return seconds."""
        if self._apiserver is not None and self._apiserver.running():
            raise ControlPlaneError("kube-apiserver is already running")
        t0 = time.monotonic()
        self._apiserver = ChildProcess("kube-apiserver", self._apiserver_argv(), self.logs / "kube-apiserver.log")
        self._apiserver.start()
        ctx = ssl.create_default_context(cafile=str(self.ca_file))
        assert self._etcd is not None
        wait_for(
            "kube-apiserver /readyz",
            lambda: _http_ok(f"{self.server}/readyz", ctx, self.admin_token),
            timeout,
            [self._etcd, self._apiserver],
        )
        elapsed = time.monotonic() - t0
        if record:
            STARTUP_TIMES.append(("kube-apiserver restart", elapsed))
        return elapsed

    def stop_apiserver(self) -> None:
        """Stop kube-apiserver (SIGTERM to its process group); etcd keeps the data."""
        if self._apiserver is not None:
            self._apiserver.stop()

    def restart_apiserver(self, downtime: float = 0.0) -> float:
        """Stop kube-apiserver, stay down ``downtime`` seconds, start it, wait for /readyz.

        Returns the seconds from the stop until it was ready again.  Clients
        (watches, the controller manager) see their connections drop.
        """
        t0 = time.monotonic()
        self.stop_apiserver()
        if downtime:
            time.sleep(downtime)
        self.start_apiserver()
        return time.monotonic() - t0

    def start_controller_manager(self, timeout: float = 90) -> float:
        """Add kube-controller-manager (all default controllers); wait until it works."""
        kcm_bin = self.controller_manager_bin
        if not kcm_bin:
            raise ControlPlaneError("no kube-controller-manager binary was given")
        if self._controller_manager is not None and self._controller_manager.running():
            return 0.0
        t0 = time.monotonic()
        self.controller_manager_port = self.controller_manager_port or free_port()
        pki = self.pki
        self._controller_manager = ChildProcess(
            "kube-controller-manager",
            [
                kcm_bin,
                f"--kubeconfig={self.kubeconfig}",
                f"--authentication-kubeconfig={self.kubeconfig}",
                f"--authorization-kubeconfig={self.kubeconfig}",
                "--controllers=*",
                "--use-service-account-credentials=false",
                "--leader-elect=false",
                f"--service-account-private-key-file={pki / 'sa.key'}",
                f"--root-ca-file={pki / 'ca.crt'}",
                f"--cluster-signing-cert-file={pki / 'ca.crt'}",
                f"--cluster-signing-key-file={pki / 'ca.key'}",
                f"--service-cluster-ip-range={SERVICE_CLUSTER_IP_RANGE}",
                "--bind-address=127.0.0.1",
                f"--secure-port={self.controller_manager_port}",
                f"--cert-dir={self.workdir / 'kcm-certs'}",
                "--v=1",
            ],
            self.logs / "kube-controller-manager.log",
        )
        self._controller_manager.start()
        insecure = ssl.create_default_context()
        insecure.check_hostname = False
        insecure.verify_mode = ssl.CERT_NONE  # its serving cert is self-signed
        procs = [p for p in (self._etcd, self._apiserver, self._controller_manager) if p is not None]
        wait_for(
            "kube-controller-manager /healthz",
            lambda: _http_ok(f"https://127.0.0.1:{self.controller_manager_port}/healthz", insecure),
            timeout,
            procs,
        )
        # the serviceaccount controller creating "default" shows the controllers run
        wait_for(
            "ServiceAccount default/default",
            lambda: self.kubectl("get", "serviceaccount", "default", "-n", "default", check=False).returncode == 0,
            timeout,
            procs,
        )
        elapsed = time.monotonic() - t0
        STARTUP_TIMES.append(("kube-controller-manager", elapsed))
        return elapsed

    def stop_controller_manager(self) -> None:
        if self._controller_manager is not None:
            self._controller_manager.stop()

    @property
    def controller_manager_running(self) -> bool:
        return self._controller_manager is not None and self._controller_manager.running()

    def close(self) -> None:
        """Stop everything (process groups) and remove the work directory."""
        for p in (self._controller_manager, self._apiserver, self._etcd):
            if p is not None:
                p.stop()
        if os.environ.get("WAVEGEN_KEEP_CONTROL_PLANE"):
            print(f"control plane files kept in {self.workdir}")
        else:
            shutil.rmtree(self.workdir, ignore_errors=True)

    # ---- clients ----------------------------------------------------------

    def kubectl(
        self,
        *args: str,
        input: str | None = None,
        check: bool = True,
        timeout: float = 60,
        kubeconfig: str | os.PathLike[str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run kubectl as admin (or with ``kubeconfig``); raise ToolError on failure if ``check``."""
        return run(
            [self.kubectl_bin, f"--kubeconfig={kubeconfig or self.kubeconfig}", *args],
            input=input,
            check=check,
            timeout=timeout,
        )

    def kubectl_json(self, *args: str, kubeconfig: str | os.PathLike[str] | None = None) -> Any:
        """``kubectl ARGS -o json`` parsed."""
        return json.loads(self.kubectl(*args, "-o", "json", kubeconfig=kubeconfig).stdout)

    def apply(self, manifest: str | dict[str, Any], *extra: str) -> subprocess.CompletedProcess[str]:
        """``kubectl apply -f -`` of a YAML/JSON string or a single object."""
        text = manifest if isinstance(manifest, str) else json.dumps(manifest)
        return self.kubectl("apply", "-f", "-", *extra, input=text)

    def create_namespace(self, name: str) -> None:
        """Create namespace ``name`` (if missing) with its ``default`` ServiceAccount.

        kube-controller-manager would create that ServiceAccount too, but
        without it (or before it gets there) pods are refused by admission.
        """
        created = self.kubectl("create", "namespace", name, check=False)
        if created.returncode != 0 and "already exists" not in created.stderr.lower():
            raise ToolError(f"kubectl create namespace {name} failed:\n{created.stderr}")
        sa = self.kubectl("create", "serviceaccount", "default", "-n", name, check=False)
        if sa.returncode != 0 and "already exists" not in sa.stderr.lower():
            raise ToolError(f"kubectl create serviceaccount default -n {name} failed:\n{sa.stderr}")

    def kubeconfig_for_token(self, token: str, user: str, namespace: str = "default") -> Path:
        """Write a kubeconfig that authenticates with ``token``; return its path."""
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in f"{user}-{namespace}")
        path = self.workdir / "kubeconfigs" / f"{safe}-{secrets.token_hex(3)}.kubeconfig"
        path.parent.mkdir(exist_ok=True)
        path.write_text(_kubeconfig(self.server, self.ca_file, user, token, namespace))
        return path

    def split_kubeconfig(self, token: str, user: str, namespace: str = "default") -> tuple[Path, Path]:
        """Two files for ``KUBECONFIG=a:b``: the cluster and context in ``a``, the user and its token in ``b``."""
        doc = json.loads(_kubeconfig(self.server, self.ca_file, user, token, namespace))
        users = doc.pop("users")
        folder = self.workdir / "kubeconfigs" / f"split-{secrets.token_hex(3)}"
        folder.mkdir(parents=True)
        (folder / "a").write_text(json.dumps(doc, indent=2) + "\n")
        (folder / "b").write_text(json.dumps({"apiVersion": "v1", "kind": "Config", "users": users}, indent=2) + "\n")
        return folder / "a", folder / "b"

    def exec_kubeconfig(self, command: str, args: Sequence[str] = (), env: dict[str, str] | None = None) -> Path:
        """A kubeconfig whose user is an ``exec`` credential plugin (``client.authentication.k8s.io/v1``)."""
        doc = json.loads(_kubeconfig(self.server, self.ca_file, "exec-user", "unused"))
        plugin: dict[str, Any] = {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": command,
            "args": list(args),
            "env": [{"name": k, "value": v} for k, v in (env or {}).items()],
            "interactiveMode": "Never",
        }
        doc["users"] = [{"name": "exec-user", "user": {"exec": plugin}}]
        path = self.workdir / "kubeconfigs" / f"exec-{secrets.token_hex(3)}.kubeconfig"
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(doc, indent=2) + "\n")
        return path

    def service_account_token(self, namespace: str, name: str, duration: str = "2h") -> str:
        """A bound token for ServiceAccount ``namespace/name`` (TokenRequest API)."""
        return self.kubectl("create", "token", name, "-n", namespace, f"--duration={duration}").stdout.strip()

    def service_account_kubeconfig(self, namespace: str, name: str, *, create: bool = False, duration: str = "2h") -> Path:
        """A kubeconfig acting as ServiceAccount ``namespace/name``; ``create`` makes the SA first."""
        if create:
            self.kubectl("create", "serviceaccount", name, "-n", namespace)
        token = self.service_account_token(namespace, name, duration)
        return self.kubeconfig_for_token(token, f"system:serviceaccount:{namespace}:{name}", namespace)

    def env(self) -> dict[str, str]:
        """Environment for a child process that should talk to this cluster as admin."""
        return {"KUBECONFIG": str(self.kubeconfig)}


def start_control_plane(etcd: str, apiserver: str, kubectl: str, controller_manager: str = "") -> ControlPlane:
    cp = ControlPlane(
        etcd_bin=etcd,
        apiserver_bin=apiserver,
        kubectl_bin=kubectl,
        controller_manager_bin=controller_manager,
    )
    return cp.start()
