"""Cluster access through the official kubernetes client: config loading, credential refresh, raw-JSON requests and watches."""

from __future__ import annotations

import datetime
import importlib
import json
import logging
import os
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ..errors import UsageError, WavegenError

if TYPE_CHECKING:  # the kubernetes package is imported lazily: only `wavegen watch` pays for it
    from kubernetes.client import Configuration

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
USER_AGENT = "wavegen-controller"
EXIT_AUTH = 5
#: A token file (kubeconfig ``tokenFile``, in-cluster bound token) is re-read at least this often (kubelet rotates it).
TOKEN_FILE_REREAD = 60.0
#: Refresh an exec credential this long before its expirationTimestamp (at most a fifth of its lifetime).
EXPIRY_MARGIN = 30.0


class ApiError(Exception):
    """A non-2xx answer from the API server; carries the status code and the Status reason (never bodies of objects)."""

    def __init__(self, status: int, reason: str, message: str) -> None:
        super().__init__(f"{status} {reason}: {message}")
        self.status = status
        self.reason = reason
        self.message = message


class TransportError(OSError):
    """The API server could not be reached or the connection broke (retried by the callers with backoff)."""


class CredentialError(WavegenError):
    """Credentials that cannot be obtained or that the API server rejects: exit code 5, one line, never the token."""

    def __init__(self, message: str) -> None:
        super().__init__(message, exit_code=EXIT_AUTH)


# ---------------------------------------------------------------------------- credential sources


class TokenSource:
    """A bearer token that can be re-obtained: installed as the Configuration's refresh hook, forced again on a 401."""

    def __init__(self, describe: str) -> None:
        self.describe = describe
        self._lock = threading.Lock()
        self._token = ""
        self._valid_until = 0.0  # time.time() after which the token is fetched again
        self.fetches = 0

    def _fetch(self) -> tuple[str, float]:
        """Return (token, time.time() until which to use it)."""
        raise NotImplementedError

    def token(self) -> str:
        with self._lock:
            if not self._token or time.time() >= self._valid_until:
                self._token, self._valid_until = self._fetch()
                self.fetches += 1
            return self._token

    def invalidate(self, used: str) -> bool:
        """After a 401 for ``used``: fetch afresh on the next request; False if the source cannot produce another token."""
        with self._lock:
            if self._token == used:
                self._valid_until = 0.0
        return True

    def hook(self, configuration: Configuration) -> None:
        # Called by the kubernetes client before every request (Configuration.refresh_api_key_hook).
        configuration.api_key["BearerToken"] = "Bearer " + self.token()


class FileToken(TokenSource):
    """``tokenFile`` or the in-cluster ServiceAccount token: bound tokens rotate on disk, so the file is re-read."""

    def __init__(self, path: str, describe: str) -> None:
        super().__init__(describe)
        self.path = path

    def _fetch(self) -> tuple[str, float]:
        try:
            token = Path(self.path).read_text().strip()
        except OSError as err:
            raise CredentialError(f"{self.describe}: cannot read token file {self.path}: {err.strerror}") from None
        if not token:
            raise CredentialError(f"{self.describe}: token file {self.path} is empty")
        return token, time.time() + TOKEN_FILE_REREAD


class ExecToken(TokenSource):
    """A kubeconfig ``exec`` credential plugin, run through the kubernetes package's ExecProvider.

    The package runs the plugin once at load, logs (and otherwise ignores) its failures, and re-runs it
    only when ``expirationTimestamp`` is within five minutes, on every request after that. Here the plugin
    runs again shortly before expiry and after a 401, and any failure is one clear error.
    """

    def __init__(self, provider: Any, describe: str, command: str, install_hint: str) -> None:
        super().__init__(describe)
        self.provider = provider
        self.command = command
        self.install_hint = install_hint

    def _fetch(self) -> tuple[str, float]:
        from kubernetes.config.config_exception import ConfigException

        what = f"{self.describe}: exec plugin {self.command!r}"
        try:
            status = self.provider.run()
        except OSError as err:
            hint = f" ({_first_line(self.install_hint)})" if self.install_hint else ""
            raise CredentialError(f"{what} cannot be run: {err.strerror or type(err).__name__}{hint}") from None
        except ConfigException as err:
            raise CredentialError(f"{what} failed: {_first_line(str(err).removeprefix('exec: '))}") from None
        except (ValueError, TypeError, KeyError) as err:  # a plugin answer the package could not take apart
            raise CredentialError(f"{what} returned an unusable ExecCredential ({type(err).__name__})") from None
        token = status.get("token") if isinstance(status, Mapping) else None
        if not isinstance(token, str) or not token:
            raise CredentialError(f"{what} returned no token (client certificates from exec plugins are not supported)")
        expiry = status.get("expirationTimestamp")
        if not expiry:
            return token, float("inf")
        try:
            until = _parse_time(str(expiry))
        except ValueError:
            raise CredentialError(f"{what} returned an unreadable expirationTimestamp") from None
        now = time.time()
        if until <= now:
            raise CredentialError(f"{what} returned a credential that expired at {expiry}")
        return token, until - min(EXPIRY_MARGIN, (until - now) / 5)


def _first_line(text: str, limit: int = 200) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line[:limit]


def _parse_time(text: str) -> float:
    value = datetime.datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=datetime.UTC)
    return value.timestamp()


# ---------------------------------------------------------------------------- loading configuration


class Credentials:
    """Where and how to reach the API server: a kubernetes Configuration plus the token source that refreshes it."""

    def __init__(self, configuration: Configuration, namespace: str, describe: str, source: TokenSource | None = None) -> None:
        self.configuration = configuration
        self.namespace = namespace or "default"
        self.describe = describe
        self.source = source
        if source is not None:
            configuration.refresh_api_key_hook = source.hook  # type: ignore[assignment]
            source.hook(configuration)  # obtain the first token now: a failure stops the start with one line

    @property
    def server(self) -> str:
        return str(self.configuration.host)


def _kubeconfig_paths(kubeconfig: str | None, environ: Mapping[str, str]) -> list[str]:
    if kubeconfig:
        return [kubeconfig]
    return [p for p in environ.get("KUBECONFIG", "").split(os.pathsep) if p]


def load_kubeconfig(path: str | list[str], context: str | None = None) -> Credentials:
    """Credentials from one kubeconfig or a merged list (first definition of a name wins, as in kubectl)."""
    import yaml
    from kubernetes.client import Configuration
    from kubernetes.config.config_exception import ConfigException

    kube_config: Any = importlib.import_module("kubernetes.config.kube_config")
    paths = [path] if isinstance(path, str) else list(path)
    existing = [os.path.expanduser(p) for p in paths if os.path.exists(os.path.expanduser(p))]
    if not existing:
        raise UsageError(f"cannot read kubeconfig {os.pathsep.join(paths)}: no such file")
    label = os.pathsep.join(existing)
    try:
        merger = kube_config.KubeConfigMerger(os.pathsep.join(existing))
        if merger.config is None:
            raise UsageError(f"kubeconfig {label} is empty")
        ctx_name = context or _first_current_context(merger.config_files, existing)
        if not ctx_name:
            raise UsageError(f"kubeconfig {label} has no current-context (use --context)")
        holder: dict[str, TokenSource] = {}
        loader = _loader_class()(config_dict=merger.config, active_context=ctx_name, config_base_path=None)
        loader.wavegen_sources = holder
        configuration = Configuration()
        loader.load_and_set(configuration)
        context_body = loader.current_context.get("context") or {}
    except ConfigException as err:
        raise UsageError(f"kubeconfig {label}: {_first_line(str(err))}") from None
    except yaml.YAMLError:
        raise UsageError(f"kubeconfig {label} is not valid YAML") from None
    except (OSError, ValueError, TypeError, AttributeError, KeyError) as err:
        raise UsageError(f"kubeconfig {label} cannot be used ({type(err).__name__})") from None
    if not configuration.host or configuration.host == "http://localhost":
        raise UsageError(f"kubeconfig {label}: context {ctx_name!r} names a cluster without a server")
    user = str(context_body.get("user") or "")
    describe = f"kubeconfig user {user!r}" if user else "kubeconfig"
    source = holder.get("source")
    if source is not None:
        source.describe = describe
        configuration.api_key.pop("BearerToken", None)
    return Credentials(configuration, str(context_body.get("namespace") or "default"), describe, source)


def _first_current_context(files: Mapping[str, Any], order: list[str]) -> str:
    # The package lets the last file's current-context win; kubectl takes the first non-empty one.
    for p in order:
        doc = files.get(p)
        if isinstance(doc, Mapping) and isinstance(doc.get("current-context"), str) and doc["current-context"]:
            return str(doc["current-context"])
    return ""


_LOADER: type | None = None


def _loader_class() -> type:
    """The package's KubeConfigLoader, with exec plugins and token files handed to refreshing sources."""
    global _LOADER
    if _LOADER is not None:
        return _LOADER
    # The package is untyped: reached through Any so mypy --strict checks our side only.
    exec_provider: Any = importlib.import_module("kubernetes.config.exec_provider")
    kube_config: Any = importlib.import_module("kubernetes.config.kube_config")

    class Loader(kube_config.KubeConfigLoader):  # type: ignore[misc]
        wavegen_sources: dict[str, TokenSource]

        _user: Any
        _cluster: Any

        def _load_user_token(self) -> bool | None:
            token_file = self._user.safe_get("tokenFile") if self._user else None
            if token_file and not self._user.safe_get("token"):
                base = self._get_base_path(self._user.path)
                self.wavegen_sources["source"] = FileToken(os.path.normpath(os.path.join(base, token_file)), "kubeconfig")
                self.token = "Bearer pending"  # replaced by the source before the first request
                return True
            result: bool | None = super()._load_user_token()
            return result

        def _load_from_exec_plugin(self) -> bool | None:
            if "exec" not in self._user:
                return None
            exec_config = self._user["exec"]
            base = self._get_base_path(self._cluster.path)
            provider = exec_provider.ExecProvider(exec_config, base, self._cluster)
            command = str(exec_config.safe_get("command") or "")
            hint = str(exec_config.safe_get("installHint") or "")
            self.wavegen_sources["source"] = ExecToken(provider, "kubeconfig", command, hint)
            self.token = "Bearer pending"
            return True

    _LOADER = Loader
    return Loader


def in_cluster(environ: Mapping[str, str] | None = None) -> Credentials:
    """Credentials of the pod's ServiceAccount (the bound token is re-read as the kubelet rotates it)."""
    from kubernetes.client import Configuration
    from kubernetes.config.config_exception import ConfigException

    incluster: Any = importlib.import_module("kubernetes.config.incluster_config")
    env = dict(environ if environ is not None else os.environ)
    if not env.get("KUBERNETES_SERVICE_HOST"):
        raise UsageError("not running in a cluster (KUBERNETES_SERVICE_HOST is unset) and no kubeconfig found")
    env.setdefault("KUBERNETES_SERVICE_PORT", "443")
    token_file = str(SERVICE_ACCOUNT_DIR / "token")
    configuration = Configuration()
    try:
        incluster.InClusterConfigLoader(
            token_file, str(SERVICE_ACCOUNT_DIR / "ca.crt"), try_refresh_token=False, environ=env
        ).load_and_set(configuration)
        namespace = (SERVICE_ACCOUNT_DIR / "namespace").read_text().strip()
    except ConfigException as err:
        raise UsageError(f"in-cluster config: {_first_line(str(err))}") from None
    except OSError as err:
        raise UsageError(f"cannot read the ServiceAccount files in {SERVICE_ACCOUNT_DIR}: {err.strerror}") from None
    configuration.api_key.pop("BearerToken", None)
    return Credentials(configuration, namespace, "in-cluster ServiceAccount", FileToken(token_file, "in-cluster ServiceAccount"))


def resolve_credentials(kubeconfig: str | None, context: str | None, environ: Mapping[str, str]) -> Credentials:
    """``--kubeconfig``, then ``$KUBECONFIG`` (every entry, merged), then in-cluster, then ``~/.kube/config``."""
    paths = _kubeconfig_paths(kubeconfig, environ)
    if paths:
        return load_kubeconfig(paths, context)
    if environ.get("KUBERNETES_SERVICE_HOST"):
        return in_cluster(environ)
    default = Path.home() / ".kube" / "config"
    if default.is_file():
        return load_kubeconfig(str(default), context)
    return in_cluster(environ)


# ---------------------------------------------------------------------------- the client


class Client:
    """JSON requests and watch streams through the kubernetes ApiClient, read as raw JSON (no model objects).

    A 401 re-obtains the credential (exec plugin, token file) and retries once; a second 401 is recorded in
    ``auth_failure`` so the process can stop with one line instead of retrying forever.
    """

    def __init__(self, creds: Credentials, timeout: float = 30.0) -> None:
        from kubernetes.client import ApiClient

        # urllib3 logs each retried connection on the root logger: stderr must stay JSON lines.
        logging.getLogger("urllib3").setLevel(logging.ERROR)
        self.creds = creds
        self.timeout = timeout
        self.api = ApiClient(creds.configuration)
        self.api.user_agent = USER_AGENT
        self.auth_failure: str | None = None

    def _open(
        self, method: str, path: str, query: Mapping[str, str | int] | None, body: Any, content_type: str | None, timeout: Any
    ) -> Any:
        """Send one request; return the unread urllib3 response of a 2xx answer. Raises ApiError or TransportError."""
        import urllib3
        from kubernetes.client.exceptions import ApiException

        params = [(k, v) for k, v in (query or {}).items() if v not in ("", None)]
        for attempt in (1, 2):
            headers = {"Accept": "application/json"}
            if body is not None:
                headers["Content-Type"] = content_type or "application/json"
            try:
                request = self.api.param_serialize(
                    method, path, query_params=params, header_params=headers, body=body, auth_settings=["BearerToken"]
                )
            except CredentialError as err:  # the refresh hook could not obtain a credential mid-run
                self.auth_failure = err.message
                raise ApiError(401, "Unauthorized", err.message) from None
            try:
                resp = self.api.call_api(*request, _request_timeout=timeout).response
            except urllib3.exceptions.HTTPError as err:
                raise TransportError(f"{type(err).__name__} talking to {self.creds.server}") from None
            except ApiException as err:  # TLS failures arrive as status 0
                raise TransportError(_first_line(str(err.reason or "connection failed"))) from None
            if 200 <= resp.status < 300:
                return resp
            data = _drain(resp)
            if resp.status == 401:
                used = str(request[2].get("authorization", "")).removeprefix("Bearer ")
                source = self.creds.source
                if attempt == 1 and source is not None and source.invalidate(used):
                    continue
                self.auth_failure = f"the API server rejected the credentials of {self.creds.describe} (401 Unauthorized)"
            raise _api_error(resp.status, data)
        raise AssertionError("unreachable")

    def request(
        self,
        method: str,
        path: str,
        query: Mapping[str, str | int] | None = None,
        body: Any = None,
        content_type: str | None = "application/json",
    ) -> Any:
        """Send one request and return the decoded JSON answer; raises ApiError on non-2xx, TransportError (OSError) otherwise."""
        resp = self._open(method, path, query, body, content_type, (self.timeout, self.timeout))
        data = _drain(resp)
        try:
            return json.loads(data) if data else {}
        except ValueError:
            raise TransportError(f"{method} {path}: the answer is not JSON") from None

    def list_page(self, path: str, query: Mapping[str, str | int]) -> ListPage:
        """One page of a list, read item by item as it arrives (see ListPage); raises like :meth:`request`."""
        resp = self._open("GET", path, query, None, None, (self.timeout, self.timeout))
        return ListPage(resp, f"GET {path}")

    def watch(self, path: str, query: Mapping[str, str | int], read_timeout: float) -> Iterator[dict[str, Any]]:
        """Yield watch events (dicts with ``type`` and ``object``) until the server ends the stream."""
        import urllib3

        resp = self._open("GET", path, {**query, "watch": "1"}, None, None, (self.timeout, read_timeout))
        buffer = b""
        try:
            # Chunked answers are read chunk by chunk: each event is yielded as soon as the server flushes it.
            for chunk in resp.stream(65536, decode_content=True):
                buffer += chunk
                # While suspended at ``yield`` the frame keeps its locals: drop the raw bytes
                # first, so a Secret's encoded data lives only in the event the caller empties.
                chunk = b""
                while True:
                    line, sep, buffer = buffer.partition(b"\n")
                    if not sep:
                        buffer = line
                        break
                    event = json.loads(line) if line.strip() else None
                    line = b""
                    if isinstance(event, dict):
                        yield event
                    event = None
            if buffer.strip():
                event = json.loads(buffer)
                if isinstance(event, dict):
                    yield event
        except urllib3.exceptions.HTTPError as err:
            raise TransportError(f"watch {path}: {type(err).__name__}") from None
        finally:
            resp.release_conn()
            resp.close()

    def check(self) -> None:
        """One authenticated request (``/version`` needs no RBAC): a rejected credential stops the start with one line."""
        try:
            self.request("GET", "/version")
        except ApiError as err:
            if err.status == 401:
                raise CredentialError(self.auth_failure or "the API server rejected the credentials") from None
            raise


class ListPage:
    """The items of one list answer, decoded one at a time; ``metadata`` is complete once they are exhausted.

    A page of 500 large Secrets decoded at once costs tens of MB that the allocator keeps afterwards;
    read this way only one item is ever decoded, and the index keeps what it needs of it.
    """

    def __init__(self, resp: Any, describe: str) -> None:
        self._resp = resp
        self._describe = describe
        self.metadata: dict[str, Any] = {}

    def __iter__(self) -> Iterator[dict[str, Any]]:
        import urllib3

        from .liststream import ListStream, ListStreamError

        stream = ListStream(self._resp.stream(65536, decode_content=True))
        try:
            yield from stream
        except ListStreamError as err:
            raise TransportError(f"{self._describe}: the answer is not a list ({err})") from None
        except urllib3.exceptions.HTTPError as err:
            raise TransportError(f"{self._describe}: {type(err).__name__}") from None
        finally:
            self._resp.release_conn()
            self._resp.close()
        metadata = stream.fields.get("metadata")
        self.metadata = metadata if isinstance(metadata, dict) else {}


def _drain(resp: Any) -> bytes:
    try:
        return bytes(resp.data or b"")
    except Exception as err:  # a connection dropped mid-body
        raise TransportError(f"reading the answer failed: {type(err).__name__}") from None
    finally:
        resp.release_conn()


def _api_error(status: int, data: bytes) -> ApiError:
    try:
        doc = json.loads(data) if data else {}
    except ValueError:
        doc = {}
    reason = doc.get("reason", "") if isinstance(doc, dict) else ""
    message = doc.get("message", "") if isinstance(doc, dict) else ""
    return ApiError(status, str(reason), str(message)[:300])


def resource_path(api_version: str, plural: str, namespace: str | None = None, name: str | None = None) -> str:
    """``/api/v1/...`` or ``/apis/group/version/...`` for a collection or one object."""
    base = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
    path = base + (f"/namespaces/{quote(namespace)}" if namespace else "") + f"/{plural}"
    return path + (f"/{quote(name)}" if name else "")


def is_transport_error(err: BaseException) -> bool:
    return isinstance(err, (OSError, ValueError))


def now_rfc3339(micro: bool = False) -> str:
    t = time.time()
    base = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t))
    return f"{base}.{int((t % 1) * 1_000_000):06d}Z" if micro else base + "Z"


__all__ = [
    "ApiError",
    "Client",
    "CredentialError",
    "Credentials",
    "EXIT_AUTH",
    "TransportError",
    "in_cluster",
    "is_transport_error",
    "load_kubeconfig",
    "now_rfc3339",
    "resource_path",
    "resolve_credentials",
]
