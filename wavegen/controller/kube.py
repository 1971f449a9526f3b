"""A small Kubernetes API client on the standard library: kubeconfig or in-cluster auth, JSON requests, watch streams."""

from __future__ import annotations

import base64
import http.client
import json
import os
import socket
import ssl
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from ..errors import UsageError

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
USER_AGENT = "wavegen-controller"


class ApiError(Exception):
    """A non-2xx answer from the API server; carries the status code and the Status reason (never bodies of objects)."""

    def __init__(self, status: int, reason: str, message: str) -> None:
        super().__init__(f"{status} {reason}: {message}")
        self.status = status
        self.reason = reason
        self.message = message


@dataclass
class Credentials:
    """Where and how to reach the API server."""

    server: str
    ca_data: bytes | None = None
    insecure: bool = False
    token: str | None = None
    token_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    namespace: str = "default"

    def bearer(self) -> str | None:
        if self.token_file:
            # Bound ServiceAccount tokens rotate on disk: read the file each time (it is tiny).
            try:
                return Path(self.token_file).read_text().strip()
            except OSError:
                return self.token
        return self.token


def _data_or_file(entry: Mapping[str, Any], data_key: str, file_key: str, base: Path) -> bytes | None:
    data = entry.get(data_key)
    if isinstance(data, str) and data:
        return base64.b64decode(data)
    path = entry.get(file_key)
    if isinstance(path, str) and path:
        full = Path(path) if os.path.isabs(path) else base / path
        try:
            return full.read_bytes()
        except OSError as err:
            raise UsageError(f"kubeconfig: cannot read {file_key} {full}: {err.strerror}") from None
    return None


def _named(items: Any, name: str, what: str) -> Mapping[str, Any]:
    for item in items if isinstance(items, list) else []:
        if isinstance(item, Mapping) and item.get("name") == name:
            body = item.get(what)
            return body if isinstance(body, Mapping) else {}
    raise UsageError(f"kubeconfig: no {what} named {name!r}")


def load_kubeconfig(path: str, context: str | None = None) -> Credentials:
    """Credentials from a kubeconfig file (token, token file, client certificate; exec plugins are not supported)."""
    import yaml

    try:
        doc = yaml.safe_load(Path(path).read_text())
    except OSError as err:
        raise UsageError(f"cannot read kubeconfig {path}: {err.strerror}") from None
    except yaml.YAMLError:
        raise UsageError(f"kubeconfig {path} is not valid YAML") from None
    if not isinstance(doc, Mapping):
        raise UsageError(f"kubeconfig {path} is not a mapping")
    base = Path(path).resolve().parent
    ctx_name = context or doc.get("current-context")
    if not isinstance(ctx_name, str) or not ctx_name:
        raise UsageError(f"kubeconfig {path} has no current-context (use --context)")
    ctx = _named(doc.get("contexts"), ctx_name, "context")
    cluster = _named(doc.get("clusters"), str(ctx.get("cluster", "")), "cluster")
    user = _named(doc.get("users"), str(ctx.get("user", "")), "user") if ctx.get("user") else {}
    server = cluster.get("server")
    if not isinstance(server, str) or not server:
        raise UsageError("kubeconfig: the cluster has no server")
    if "exec" in user or "auth-provider" in user:
        raise UsageError("kubeconfig: exec and auth-provider credentials are not supported; use a token or client certificate")
    creds = Credentials(
        server=server.rstrip("/"),
        ca_data=_data_or_file(cluster, "certificate-authority-data", "certificate-authority", base),
        insecure=bool(cluster.get("insecure-skip-tls-verify")),
        token=user.get("token") if isinstance(user.get("token"), str) else None,
        token_file=str(base / user["tokenFile"]) if isinstance(user.get("tokenFile"), str) else None,
        namespace=str(ctx.get("namespace") or "default"),
    )
    cert = _data_or_file(user, "client-certificate-data", "client-certificate", base)
    key = _data_or_file(user, "client-key-data", "client-key", base)
    if cert and key:
        # ssl can load a certificate chain only from files: keep them in a private directory.
        tmp = Path(tempfile.mkdtemp(prefix="wavegen-kube-"))
        os.chmod(tmp, 0o700)
        (tmp / "client.crt").write_bytes(cert)
        (tmp / "client.key").write_bytes(key)
        os.chmod(tmp / "client.key", 0o600)
        creds.cert_file, creds.key_file = str(tmp / "client.crt"), str(tmp / "client.key")
    return creds


def in_cluster() -> Credentials:
    """Credentials of the pod's ServiceAccount."""
    host, port = os.environ.get("KUBERNETES_SERVICE_HOST"), os.environ.get("KUBERNETES_SERVICE_PORT", "443")
    if not host:
        raise UsageError("not running in a cluster (KUBERNETES_SERVICE_HOST is unset) and no kubeconfig found")
    if ":" in host:
        host = f"[{host}]"
    try:
        ca = (SERVICE_ACCOUNT_DIR / "ca.crt").read_bytes()
        namespace = (SERVICE_ACCOUNT_DIR / "namespace").read_text().strip()
    except OSError as err:
        raise UsageError(f"cannot read the ServiceAccount files in {SERVICE_ACCOUNT_DIR}: {err.strerror}") from None
    return Credentials(
        f"https://{host}:{port}", ca_data=ca, token_file=str(SERVICE_ACCOUNT_DIR / "token"), namespace=namespace or "default"
    )


def resolve_credentials(kubeconfig: str | None, context: str | None, environ: Mapping[str, str]) -> Credentials:
    """``--kubeconfig``, then ``$KUBECONFIG`` (first entry), then in-cluster, then ``~/.kube/config``."""
    path = kubeconfig or (environ.get("KUBECONFIG", "").split(os.pathsep)[0] or None)
    if path:
        return load_kubeconfig(path, context)
    if environ.get("KUBERNETES_SERVICE_HOST"):
        return in_cluster()
    default = Path.home() / ".kube" / "config"
    if default.is_file():
        return load_kubeconfig(str(default), context)
    return in_cluster()


class Client:
    """JSON over HTTPS to one API server; one keep-alive connection per thread."""

    def __init__(self, creds: Credentials, timeout: float = 30.0) -> None:
        self.creds = creds
        self.timeout = timeout
        parts = urlsplit(creds.server)
        self._https = parts.scheme == "https"
        self._host = parts.hostname or "localhost"
        self._port = parts.port or (443 if self._https else 80)
        self._prefix = parts.path.rstrip("/")
        self._ssl = self._context() if self._https else None
        self._local = threading.local()

    def _context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context()
        if self.creds.insecure:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        elif self.creds.ca_data:
            ctx = ssl.create_default_context(cadata=self.creds.ca_data.decode("ascii", "replace"))
        if self.creds.cert_file and self.creds.key_file:
            ctx.load_cert_chain(self.creds.cert_file, self.creds.key_file)
        return ctx

    def _new_connection(self, timeout: float) -> http.client.HTTPConnection:
        if self._https:
            return http.client.HTTPSConnection(self._host, self._port, timeout=timeout, context=self._ssl)
        return http.client.HTTPConnection(self._host, self._port, timeout=timeout)

    def _headers(self, content_type: str | None = None) -> dict[str, str]:
        headers = {"Accept": "application/json", "User-Agent": USER_AGENT}
        token = self.creds.bearer()
        if token:
            headers["Authorization"] = f"Bearer {token}"
        if content_type:
            headers["Content-Type"] = content_type
        return headers

    def url(self, path: str, query: Mapping[str, str | int] | None = None) -> str:
        q = {k: str(v) for k, v in (query or {}).items() if v not in ("", None)}
        return self._prefix + path + ("?" + urlencode(q) if q else "")

    def request(
        self,
        method: str,
        path: str,
        query: Mapping[str, str | int] | None = None,
        body: Any = None,
        content_type: str = "application/json",
    ) -> Any:
        """Send one request and return the decoded JSON answer; raises ApiError on non-2xx, OSError on transport failure."""
        payload = json.dumps(body, separators=(",", ":")).encode() if body is not None else None
        target = self.url(path, query)
        headers = self._headers(content_type if payload is not None else None)
        for attempt in (1, 2):
            conn: http.client.HTTPConnection | None = getattr(self._local, "conn", None)
            if conn is None:
                conn = self._local.conn = self._new_connection(self.timeout)
            try:
                conn.request(method, target, body=payload, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
            except (OSError, http.client.HTTPException):
                conn.close()
                self._local.conn = None
                # A kept-alive connection the server closed fails on first use: retry once on a fresh one.
                if attempt == 2:
                    raise
                continue
            if resp.will_close:
                conn.close()
                self._local.conn = None
            return _decode(resp.status, data)
        raise AssertionError("unreachable")

    def watch(self, path: str, query: Mapping[str, str | int], read_timeout: float) -> Iterator[dict[str, Any]]:
        """Yield watch events (dicts with ``type`` and ``object``) until the server ends the stream."""
        conn = self._new_connection(read_timeout)
        try:
            conn.request("GET", self.url(path, {**query, "watch": "1"}), headers=self._headers())
            resp = conn.getresponse()
            if resp.status != 200:
                _decode(resp.status, resp.read())
            while True:
                line = resp.readline()
                if not line:
                    return
                line = line.strip()
                if line:
                    event = json.loads(line)
                    if isinstance(event, dict):
                        yield event
        finally:
            conn.close()


def _decode(status: int, data: bytes) -> Any:
    try:
        doc = json.loads(data) if data else {}
    except ValueError:
        doc = {}
    if 200 <= status < 300:
        return doc
    reason = doc.get("reason", "") if isinstance(doc, dict) else ""
    message = doc.get("message", "") if isinstance(doc, dict) else ""
    raise ApiError(status, str(reason), str(message)[:300])


def resource_path(api_version: str, plural: str, namespace: str | None = None, name: str | None = None) -> str:
    """``/api/v1/...`` or ``/apis/group/version/...`` for a collection or one object."""
    base = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
    path = base + (f"/namespaces/{quote(namespace)}" if namespace else "") + f"/{plural}"
    return path + (f"/{quote(name)}" if name else "")


def is_transport_error(err: BaseException) -> bool:
    return isinstance(err, (OSError, http.client.HTTPException, socket.timeout, ValueError))


def now_rfc3339(micro: bool = False) -> str:
    t = time.time()
    base = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t))
    return f"{base}.{int((t % 1) * 1_000_000):06d}Z" if micro else base + "Z"
