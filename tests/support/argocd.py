"""Argo CD on loopback for end-to-end tests: Redis, a git daemon, and the real repo-server, cmp-server and application controller.

One ``argocd`` binary (``hack/tools.sh argocd``) is every component: it picks
its personality from the name it is started under, so ``bin/`` holds symlinks
named ``argocd-repo-server``, ``argocd-cmp-server`` and
``argocd-application-controller``, as the Argo CD image does.  The cmp-server
runs ``plugins/argocd/plugin.yaml`` as shipped, with helm, kustomize and
wavegen on its PATH like the sidecar; the application controller manages the
test's own API server as Argo CD's in-cluster destination
(``https://kubernetes.default.svc``, through ``ARGOCD_FAKE_IN_CLUSTER`` and a
kubeconfig, the way Argo CD's own local set-up runs it).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import Any

import yaml

from tests.support.controlplane import ADMIN_USER, ChildProcess, ControlPlane, free_port, wait_for
from tests.support.tools import REPO_ROOT, run, tools_dir

NAMESPACE = "argocd"
SIDECAR_PATCH = REPO_ROOT / "plugins" / "argocd" / "sidecar-patch.yaml"
PLUGIN = REPO_ROOT / "plugins" / "argocd" / "plugin.yaml"
PLUGIN_NAME = "wavegen-v1"  # metadata.name + "-" + spec.version of plugin.yaml
IN_CLUSTER = "https://kubernetes.default.svc"


def argocd_version() -> str:
    """The pin of ``hack/tools.sh`` (``ARGOCD_VERSION=v3.6.1``)."""
    found = re.search(r"^ARGOCD_VERSION=(v\S+)", (REPO_ROOT / "hack" / "tools.sh").read_text(), re.MULTILINE)
    assert found, "hack/tools.sh pins no ARGOCD_VERSION"
    return found.group(1)


def argocd_crds() -> Path:
    """Argo CD's CRDs from the pinned version's module source, which ``hack/tools.sh`` keeps."""
    return tools_dir() / "src" / f"argo-cd-{argocd_version()}" / "manifests" / "crds"


def _port_open(port: int) -> bool:
    with socket.create_connection(("127.0.0.1", port), timeout=1):
        return True


class RedisServer:
    """Debian's redis-server on a loopback port, nothing saved to disk."""

    def __init__(self, binary: str, workdir: Path) -> None:
        self.port = free_port()
        workdir.mkdir(parents=True, exist_ok=True)
        argv = [binary, "--bind", "127.0.0.1", "--port", str(self.port), "--save", "", "--appendonly", "no"]
        self.process = ChildProcess("redis-server", [*argv, "--dir", str(workdir)], workdir / "redis.log")

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def __enter__(self) -> RedisServer:
        self.process.start()
        wait_for("redis-server PING", lambda: self.command("PING") == b"+PONG\r\n", 30, [self.process])
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.process.stop()

    def command(self, *words: str) -> bytes:
        """One command in Redis' protocol; its raw answer."""
        request = f"*{len(words)}\r\n" + "".join(f"${len(w.encode())}\r\n{w}\r\n" for w in words)
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as conn:
            conn.sendall(request.encode())
            return conn.recv(65536)


class GitServer:
    """A repository the test commits to, served read-only by ``git daemon`` on loopback."""

    def __init__(self, root: Path, name: str = "apps") -> None:
        self.root = root
        self.repo = root / name
        self.port = free_port()
        self.url = f"git://127.0.0.1:{self.port}/{name}"
        self.process = ChildProcess(
            "git-daemon",
            [
                "git", "daemon", "--reuseaddr", "--export-all", "--informative-errors", f"--base-path={root}",
                "--listen=127.0.0.1", f"--port={self.port}", str(root),
            ],
            root / "git-daemon.log",
        )  # fmt: skip

    def git(self, *args: str) -> str:
        env = {
            **os.environ,
            "GIT_AUTHOR_NAME": "wavegen test",
            "GIT_AUTHOR_EMAIL": "test@wavegen.invalid",
            "GIT_COMMITTER_NAME": "wavegen test",
            "GIT_COMMITTER_EMAIL": "test@wavegen.invalid",
            "GIT_CONFIG_NOSYSTEM": "1",
            "HOME": str(self.root),
        }
        return str(run(["git", "-C", str(self.repo), *args], env=env).stdout).strip()

    def __enter__(self) -> GitServer:
        self.repo.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")
        self.process.start()
        wait_for("git daemon", lambda: _port_open(self.port), 30, [self.process])
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.process.stop()

    def commit(self, files: dict[str, str | None], message: str) -> str:
        """Write (or, for None, delete) files, commit them all; the new commit's SHA."""
        for relative, text in files.items():
            path = self.repo / relative
            if text is None:
                path.unlink()
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")

    def read(self, relative: str) -> str:
        return (self.repo / relative).read_text()


class ArgoCD:
    """Argo CD's CRDs and settings in the cluster, and its three components as local processes."""

    def __init__(
        self,
        cp: ControlPlane,
        binary: str,
        workdir: Path,
        redis: RedisServer,
        tools: dict[str, str],
        *,
        namespace: str = NAMESPACE,
        sidecar_image: str = "",
    ) -> None:
        self.cp = cp
        self.namespace = namespace
        self.binary = binary
        self.tools = tools
        # "": the cmp-server runs on the host; an image: the sidecar of sidecar-patch.yaml, in that image
        self.sidecar_image = sidecar_image
        self.sidecar_container = ""
        self.workdir = workdir
        self.redis = redis
        self.bin = workdir / "bin"
        self.plugin_path = workdir / "plugin-path"  # what the sidecar has on PATH: helm, kustomize, wavegen
        self.sockets = workdir / "plugin-sockets"
        self.plugin_config = workdir / "cmp-config"
        self.repo_server_port = free_port()
        self.controller_metrics_port = free_port()
        self.processes: list[ChildProcess] = []
        for directory in (self.bin, self.plugin_path, self.sockets, self.plugin_config, workdir / "home", workdir / "tmp"):
            directory.mkdir(parents=True, exist_ok=True)
        for personality in ("argocd-repo-server", "argocd-cmp-server", "argocd-application-controller"):
            (self.bin / personality).symlink_to(binary)
        for name, path in tools.items():
            (self.plugin_path / name).symlink_to(path)
        # The repo-server runs git-verify-wrapper.sh for every revision (v3.6 still does, for its
        # deprecated signature field) and fails generation without it; Argo CD's image has it in
        # /usr/local/bin. The module source keeps it, without its executable bit.
        for script in ("git-verify-wrapper.sh", "gpg-wrapper.sh"):
            shutil.copyfile(argocd_crds().parents[1] / "hack" / script, self.bin / script)
            (self.bin / script).chmod(0o755)
        shutil.copyfile(PLUGIN, self.plugin_config / "plugin.yaml")  # exactly as shipped
        self.kubeconfig = cp.kubeconfig_for_token(cp.admin_token, ADMIN_USER, namespace)

    # ---- life cycle ---------------------------------------------------------

    def _env(self, **extra: str) -> dict[str, str]:
        home = self.workdir / "home"
        return {
            "PATH": f"{self.plugin_path}:{self.bin}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(home),
            "TMPDIR": str(self.workdir / "tmp"),
            "ARGOCD_GPG_ENABLED": "false",
            "ARGOCD_TLS_DATA_PATH": str(home / "tls"),
            "ARGOCD_SSH_DATA_PATH": str(home / "ssh"),
            "ARGOCD_PLUGINSOCKFILEPATH": str(self.sockets),
            "HELM_CACHE_HOME": str(home / "helm" / "cache"),
            "HELM_CONFIG_HOME": str(home / "helm" / "config"),
            "HELM_DATA_HOME": str(home / "helm" / "data"),
            **extra,
        }

    def _start(self, name: str, argv: list[str], env: dict[str, str]) -> ChildProcess:
        process = ChildProcess(name, [str(self.bin / name), *argv], self.workdir / "logs" / f"{name}.log", env=env)
        process.start()
        self.processes.append(process)
        return process

    def install(self) -> None:
        """CRDs of the pinned version, the argocd namespace, its settings and the default project."""
        self.cp.create_namespace(self.namespace)
        # -k: the directory's kustomization lists the CRDs (too big for client-side apply's annotation)
        self.cp.kubectl("apply", "--server-side", "-k", str(argocd_crds()), timeout=120)
        for crd in ("applications.argoproj.io", "appprojects.argoproj.io"):
            wait_for(f"CRD {crd} established", lambda crd=crd: self._established(crd), 60)
        part_of = {"app.kubernetes.io/part-of": "argocd"}
        self.cp.apply(
            {
                "apiVersion": "v1",
                "kind": "List",
                "items": [
                    {
                        "apiVersion": "v1",
                        "kind": "ConfigMap",
                        "metadata": {"name": "argocd-cm", "namespace": self.namespace, "labels": part_of},
                        "data": {},
                    },
                    {
                        "apiVersion": "v1",
                        "kind": "Secret",
                        "metadata": {"name": "argocd-secret", "namespace": self.namespace, "labels": part_of},
                        "data": {},
                    },
                    {
                        "apiVersion": "argoproj.io/v1alpha1",
                        "kind": "AppProject",
                        "metadata": {"name": "default", "namespace": self.namespace},
                        "spec": {
                            "sourceRepos": ["*"],
                            "destinations": [{"server": "*", "namespace": "*"}],
                            "clusterResourceWhitelist": [{"group": "*", "kind": "*"}],
                        },
                    },
                ],
            }
        )

    def _established(self, crd: str) -> bool:
        # `kubectl wait` fails outright while a new CRD has no conditions yet
        conditions = self.cp.kubectl_json("get", "crd", crd).get("status", {}).get("conditions") or []
        return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)

    def _start_sidecar(self) -> ChildProcess:
        """The ``wavegen`` container of sidecar-patch.yaml, run by buildah from the image as the patch says.

        Its command, environment, user and mount points come from the patch; each volume is a
        host directory here (the repo-server's shared ``var-files`` holds argocd-cmp-server, as
        Argo CD's own init container leaves it; ``wavegen-tools`` holds helm and kustomize, as the
        patch's init container copies them).
        """
        patch = yaml.safe_load(SIDECAR_PATCH.read_text())
        sidecar = next(c for c in patch["spec"]["template"]["spec"]["containers"] if c["name"] == "wavegen")
        side = self.workdir / "sidecar"
        sources = {
            "var-files": side / "var-files",
            "plugins": self.sockets,
            "wavegen-cmp-plugin": PLUGIN,
            "wavegen-tools": side / "tools",
            "wavegen-tmp": side / "tmp",
        }
        (side / "var-files").mkdir(parents=True)
        shutil.copyfile(self.binary, side / "var-files" / "argocd-cmp-server")
        (side / "var-files" / "argocd-cmp-server").chmod(0o755)
        (side / "tools").mkdir()
        for name in ("helm", "kustomize"):
            shutil.copyfile(self.tools[name], side / "tools" / name)
            (side / "tools" / name).chmod(0o755)
        (side / "tmp").mkdir()
        for directory in (side / "tmp", self.sockets):
            directory.chmod(0o1777)  # the container's user writes there
        volumes = []
        for mount in sidecar["volumeMounts"]:
            # The image's /var/run is a symlink to /run: a kubelet's runtime resolves it in the
            # container's root, buildah's chroot mounts its own /run over it, so aim at /run.
            target = re.sub(r"^/var/run/", "/run/", mount["mountPath"])
            volumes.append(f"--volume={sources[mount['name']]}:{target}")
        user = sidecar["securityContext"]["runAsUser"]
        env = [f"--env={e['name']}={e['value']}" for e in sidecar.get("env", [])]
        self.sidecar_container = str(run(["buildah", "from", "--pull=never", "--quiet", self.sidecar_image]).stdout).strip()
        argv = ["buildah", "run", "--isolation=chroot", f"--user={user}:{user}", *env, *volumes, self.sidecar_container, "--"]
        process = ChildProcess("sidecar", [*argv, *sidecar["command"]], self.workdir / "logs" / "sidecar.log")
        process.start()
        self.processes.append(process)
        return process

    def start(self) -> ArgoCD:
        if self.sidecar_image:
            cmp = self._start_sidecar()
        else:
            cmp = self._start(
                "argocd-cmp-server", ["--config-dir-path", str(self.plugin_config), "--loglevel", "info"], self._env()
            )
        wait_for("the cmp-server's socket", (self.sockets / f"{PLUGIN_NAME}.sock").exists, 60, [cmp])
        in_cluster = {"KUBECONFIG": str(self.kubeconfig), "ARGOCD_FAKE_IN_CLUSTER": "true"}
        repo = self._start(
            "argocd-repo-server",
            [
                "--port", str(self.repo_server_port), "--metrics-port", str(free_port()),
                "--redis", self.redis.address, "--loglevel", "debug",
            ],
            self._env(**in_cluster),
        )  # fmt: skip
        wait_for("argocd-repo-server's port", lambda: _port_open(self.repo_server_port), 60, [repo])
        controller = self._start(
            "argocd-application-controller",
            [
                "--repo-server", f"127.0.0.1:{self.repo_server_port}", "--redis", self.redis.address,
                "--metrics-port", str(self.controller_metrics_port), "--loglevel", "info",
                # The test asks for each refresh itself (hard refresh after a commit); a short
                # resync only covers what the annotation might miss.
                "--app-resync", "20", "--app-resync-jitter", "0", "--self-heal-timeout-seconds", "2",
                "--status-processors", "4", "--operation-processors", "2",
            ],
            self._env(**in_cluster),
        )  # fmt: skip
        wait_for("the application controller's port", lambda: _port_open(self.controller_metrics_port), 90, [controller])
        return self

    def stop(self) -> None:
        for process in reversed(self.processes):
            process.stop()
        self.processes.clear()
        if self.sidecar_container:
            run(["buildah", "rm", self.sidecar_container], check=False)
            self.sidecar_container = ""

    def logs(self, lines: int = 30) -> str:
        return "\n".join(f"--- {p.name} ---\n{p.tail(lines)}" for p in self.processes)

    def check_running(self) -> None:
        for process in self.processes:
            assert process.running(), f"{process.name} exited:\n{process.tail()}"

    # ---- Applications ---------------------------------------------------------

    def create_application(
        self, name: str, repo_url: str, path: str, destination: str, parameters: list[dict[str, Any]] | None = None
    ) -> None:
        plugin: dict[str, Any] = {"name": PLUGIN_NAME}
        if parameters:
            plugin["parameters"] = parameters
        self.cp.create_namespace(destination)
        self.cp.apply(
            {
                "apiVersion": "argoproj.io/v1alpha1",
                "kind": "Application",
                "metadata": {"name": name, "namespace": self.namespace},
                "spec": {
                    "project": "default",
                    "source": {"repoURL": repo_url, "targetRevision": "main", "path": path, "plugin": plugin},
                    "destination": {"server": IN_CLUSTER, "namespace": destination},
                    # prune: an empty manifest list from a failed render would delete everything
                    "syncPolicy": {"automated": {"prune": True, "selfHeal": True}},
                },
            }
        )

    def application(self, name: str) -> dict[str, Any]:
        found: dict[str, Any] = self.cp.kubectl_json("get", "application", name, "-n", self.namespace)
        return found

    def refresh(self, *names: str) -> None:
        """Ask for a hard refresh (no manifest cache), as the UI's button does."""
        for name in names:
            self.cp.kubectl(
                "annotate", "application", name, "-n", self.namespace, "argocd.argoproj.io/refresh=hard", "--overwrite"
            )

    def wait_synced(self, name: str, revision: str, timeout: float = 120) -> dict[str, Any]:
        """The Application compared and in sync at ``revision``, with no operation running."""
        state: dict[str, Any] = {}

        def synced() -> bool:
            nonlocal state
            self.check_running()
            state = self.application(name)
            status = state.get("status", {})
            sync = status.get("sync", {})
            operation = status.get("operationState", {})
            return bool(
                sync.get("status") == "Synced"
                and sync.get("revision") == revision
                and operation.get("phase") in ("Succeeded", None)
                and "operation" not in state
            )

        _poll(synced, f"Application {name} Synced at {revision[:8]}", timeout, lambda: _brief(state) + "\n" + self.logs())
        return state

    def wait_condition(self, name: str, revision: str, pattern: str, timeout: float = 120) -> str:
        """The message of a condition of the Application, compared at ``revision``, that matches ``pattern``."""
        state: dict[str, Any] = {}
        found = ""

        def failed() -> bool:
            nonlocal state, found
            self.check_running()
            state = self.application(name)
            status = state.get("status", {})
            messages = [c.get("message", "") for c in status.get("conditions", [])]
            found = next((m for m in messages if re.search(pattern, m)), "")
            return bool(found)

        _poll(failed, f"a condition of {name} matching {pattern!r}", timeout, lambda: _brief(state) + "\n" + self.logs())
        return found


def _brief(state: dict[str, Any]) -> str:
    status = state.get("status", {})
    return json.dumps(
        {
            "sync": status.get("sync"),
            "operationState": {k: v for k, v in status.get("operationState", {}).items() if k in ("phase", "message")},
            "conditions": status.get("conditions"),
        },
        indent=1,
    )[:4000]


def _poll(check: Any, what: str, timeout: float, explain: Any) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.5)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}:\n{explain()}")


def wavegen_command() -> str:
    """The installed ``wavegen`` entry point of this interpreter's environment (what the sidecar image runs)."""
    beside = Path(sys.executable).parent / "wavegen"
    if beside.is_file():
        return str(beside)
    found = shutil.which("wavegen")
    assert found, "no wavegen command installed beside this Python"
    return found
