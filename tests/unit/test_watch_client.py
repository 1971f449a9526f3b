"""Watch-mode cluster access without a cluster: kubeconfig loading and merging, exec/token-file refresh, 401 retry, metrics."""

from __future__ import annotations

import json
import os
import stat
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from wavegen.controller.kube import EXIT_AUTH, ApiError, Client, CredentialError, load_kubeconfig, resolve_credentials
from wavegen.controller.telemetry import Metrics, change_queued_at
from wavegen.errors import UsageError

# ---- helpers -----------------------------------------------------------------------------


def write(path: Path, doc: Any) -> Path:
    path.write_text(yaml.safe_dump(doc))
    return path


def config(server: str, user: dict[str, Any], *, cluster: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "current-context": "c",
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u", "namespace": "team"}}],
        "clusters": [{"name": "k", "cluster": cluster or {"server": server}}],
        "users": [{"name": "u", "user": user}],
    }


def plugin(tmp_path: Path, body: str) -> Path:
    """An exec credential plugin: a Python script; it appends one line to ``calls`` per run."""
    script = tmp_path / "plugin.py"
    script.write_text(
        f"#!{sys.executable}\n"
        "import json, sys, time, datetime, pathlib\n"
        f"calls = pathlib.Path({str(tmp_path / 'calls')!r})\n"
        "n = len(calls.read_text().splitlines()) + 1 if calls.exists() else 1\n"
        "with calls.open('a') as f: f.write('x\\n')\n"
        "def at(seconds):\n"
        "    t = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=seconds)\n"
        "    return t.strftime('%Y-%m-%dT%H:%M:%SZ')\n"
        "def out(status):\n"
        "    print(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1', 'kind': 'ExecCredential', 'status': status}))\n"
        + body
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def exec_user(script: Path) -> dict[str, Any]:
    return {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": str(script), "interactiveMode": "Never"}}


def calls(tmp_path: Path) -> int:
    f = tmp_path / "calls"
    return len(f.read_text().splitlines()) if f.exists() else 0


class FakeServer:
    """A loopback HTTP server that accepts the bearer tokens in ``accepted`` and records the ones it saw."""

    def __init__(self) -> None:
        self.accepted: set[str] = set()
        self.seen: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                token = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
                outer.seen.append(token)
                if token not in outer.accepted:
                    body = json.dumps({"kind": "Status", "reason": "Unauthorized", "message": "Unauthorized"}).encode()
                    self.send_response(401)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                if "watch=1" in self.path:
                    self.send_response(200)
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    # One event split across chunks, then two events in one chunk: framing must not matter.
                    first = json.dumps({"type": "ADDED", "object": {"metadata": {"name": "a"}}}).encode() + b"\n"
                    parts = [first[:10], first[10:], b'{"type":"BOOKMARK","object":{}}\n{"type":"DELETED","object":{}}\n']
                    for part in parts:
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                        self.wfile.flush()
                    self.wfile.write(b"0\r\n\r\n")
                    return
                body = json.dumps({"kind": "ConfigMapList", "items": [], "path": self.path}).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


@pytest.fixture
def server() -> Iterator[FakeServer]:
    s = FakeServer()
    yield s
    s.httpd.shutdown()


# ---- kubeconfig ----------------------------------------------------------------------------


def test_kubeconfig_token_relative_ca_and_namespace(tmp_path: Path) -> None:
    (tmp_path / "ca.crt").write_text("CA")
    cluster = {
        "server": "https://127.0.0.1:6443/",
        "certificate-authority": "ca.crt",
        "tls-server-name": "api.internal",
        "proxy-url": "http://proxy.internal:3128",
    }
    path = write(tmp_path / "config", config("", {"token": "t0k"}, cluster=cluster))
    creds = load_kubeconfig(str(path))
    cfg = creds.configuration
    assert (creds.server, creds.namespace, cfg.ssl_ca_cert, cfg.tls_server_name) == (
        "https://127.0.0.1:6443",
        "team",
        str(tmp_path / "ca.crt"),
        "api.internal",
    )
    assert cfg.proxy == "http://proxy.internal:3128"
    assert cfg.auth_settings()["BearerToken"]["value"] == "Bearer t0k"


def test_kubeconfig_list_merges_cluster_and_user_from_different_files(tmp_path: Path, server: FakeServer) -> None:
    server.accepted.add("from-b")
    a = write(
        tmp_path / "a",
        {
            "current-context": "c",
            "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u", "namespace": "from-a"}}],
            "clusters": [{"name": "k", "cluster": {"server": server.url}}],
        },
    )
    # b names another current-context and redefines the context: kubectl keeps the first file's choices.
    b = write(
        tmp_path / "b",
        {
            "current-context": "other",
            "contexts": [{"name": "c", "context": {"cluster": "nope", "user": "nope"}}],
            "users": [{"name": "u", "user": {"token": "from-b"}}],
        },
    )
    creds = resolve_credentials(None, None, {"KUBECONFIG": f"{a}{os.pathsep}{tmp_path / 'missing'}{os.pathsep}{b}"})
    assert (creds.server, creds.namespace) == (server.url, "from-a")
    assert Client(creds).request("GET", "/api/v1/configmaps")["kind"] == "ConfigMapList"


def test_kubeconfig_errors_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file"):
        load_kubeconfig(str(tmp_path / "absent"))
    path = write(tmp_path / "config", config("https://x", {"token": "t"}))
    with pytest.raises(UsageError, match="nope"):
        load_kubeconfig(str(path), context="nope")
    (tmp_path / "bad").write_text("{not: [yaml")
    with pytest.raises(UsageError, match="not valid YAML"):
        load_kubeconfig(str(tmp_path / "bad"))


# ---- credential sources --------------------------------------------------------------------


def test_exec_plugin_runs_again_before_expiry_not_per_request(tmp_path: Path) -> None:
    script = plugin(tmp_path, "out({'token': f'tok-{n}', 'expirationTimestamp': at(3)})\n")
    creds = load_kubeconfig(str(write(tmp_path / "config", config("https://x", exec_user(script)))))
    assert creds.source is not None
    assert calls(tmp_path) == 1
    first = creds.configuration.auth_settings()["BearerToken"]["value"]
    for _ in range(5):
        assert creds.configuration.auth_settings()["BearerToken"]["value"] == first == "Bearer tok-1"
    assert calls(tmp_path) == 1, "a valid credential must not re-run the plugin"
    deadline = time.monotonic() + 10
    while creds.configuration.auth_settings()["BearerToken"]["value"] == first and time.monotonic() < deadline:
        time.sleep(0.2)
    assert creds.configuration.auth_settings()["BearerToken"]["value"] == "Bearer tok-2"
    assert calls(tmp_path) == 2


def test_401_reruns_the_plugin_and_retries_once(tmp_path: Path, server: FakeServer) -> None:
    script = plugin(tmp_path, "out({'token': f'tok-{n}', 'expirationTimestamp': at(3600)})\n")
    creds = load_kubeconfig(str(write(tmp_path / "config", config(server.url, exec_user(script)))))
    server.accepted.add("tok-2")  # the first token has been revoked already
    client = Client(creds)
    assert client.request("GET", "/api/v1/configmaps")["kind"] == "ConfigMapList"
    assert server.seen == ["tok-1", "tok-2"] and calls(tmp_path) == 2
    assert client.auth_failure is None

    server.accepted.clear()  # now nothing is accepted: one retry, then a recorded failure
    with pytest.raises(ApiError) as err:
        client.request("GET", "/api/v1/configmaps")
    assert err.value.status == 401
    assert server.seen[2:] == ["tok-2", "tok-3"]
    assert client.auth_failure is not None and "tok-" not in client.auth_failure


def test_static_token_401_is_not_retried(tmp_path: Path, server: FakeServer) -> None:
    creds = load_kubeconfig(str(write(tmp_path / "config", config(server.url, {"token": "s3cret-token"}))))
    client = Client(creds)
    with pytest.raises(CredentialError) as err:
        client.check()
    assert err.value.exit_code == EXIT_AUTH and "s3cret-token" not in str(err.value)
    assert server.seen == ["s3cret-token"]


def test_token_file_is_reread_after_401(tmp_path: Path, server: FakeServer) -> None:
    (tmp_path / "token").write_text("old\n")
    creds = load_kubeconfig(str(write(tmp_path / "config", config(server.url, {"tokenFile": "token"}))))
    server.accepted.add("new")
    (tmp_path / "token").write_text("new\n")  # the kubelet rotated the bound token
    assert Client(creds).request("GET", "/api/v1/configmaps")["kind"] == "ConfigMapList"
    assert server.seen == ["old", "new"]


@pytest.mark.parametrize(
    ("body", "command", "expected"),
    [
        ("out({'token': 'leak-me', 'expirationTimestamp': at(-60)})\n", None, "expired at"),
        ("sys.stderr.write('no SSO session\\nmore detail\\n'); sys.exit(3)\n", None, "returned 3. no SSO session"),
        ("out({'expirationTimestamp': at(60)})\n", None, "returned no token"),
        ("", "/nonexistent/aws-iam-authenticator", "cannot be run: No such file or directory (install it)"),
    ],
)
def test_unusable_exec_credentials_are_one_line(tmp_path: Path, body: str, command: str | None, expected: str) -> None:
    user = exec_user(plugin(tmp_path, body))
    if command:
        user["exec"]["command"] = command
        user["exec"]["installHint"] = "install it\nfrom somewhere"
    with pytest.raises(CredentialError) as err:
        load_kubeconfig(str(write(tmp_path / "config", config("https://x", user))))
    message = str(err.value)
    assert expected in message and "\n" not in message and "leak-me" not in message
    assert err.value.exit_code == EXIT_AUTH


# ---- the client --------------------------------------------------------------------------


def test_client_reads_a_chunked_watch_stream_line_by_line(tmp_path: Path, server: FakeServer) -> None:
    server.accepted.add("tok")
    client = Client(load_kubeconfig(str(write(tmp_path / "config", config(server.url, {"token": "tok"})))))
    events = list(client.watch("/api/v1/configmaps", {"resourceVersion": "1"}, 5))
    assert [e["type"] for e in events] == ["ADDED", "BOOKMARK", "DELETED"]


def test_client_encodes_query_parameters(tmp_path: Path, server: FakeServer) -> None:
    server.accepted.add("tok")
    client = Client(load_kubeconfig(str(write(tmp_path / "config", config(server.url, {"token": "tok"})))))
    answer = client.request("GET", "/api/v1/secrets", {"fieldSelector": "type!=helm.sh/release.v1", "continue": "a+b=", "x": ""})
    assert answer["path"] == "/api/v1/secrets?fieldSelector=type%21%3Dhelm.sh/release.v1&continue=a%2Bb%3D"


# ---- metrics -------------------------------------------------------------------------------


def test_metrics_keep_series_names_and_add_histogram_and_standard_collectors() -> None:
    m = Metrics()
    m.inc("wavegen_patches_total", action="roll")
    m.gauge_callbacks["wavegen_queue_depth"] = lambda: 3.0
    change_queued_at(time.monotonic() - 0.02)
    m.inc("wavegen_rollouts_total")
    text = m.render()
    assert 'wavegen_patches_total{action="roll"} 1.0' in text
    assert "wavegen_queue_depth 3.0" in text
    assert "wavegen_rollouts_total 1.0" in text
    assert "wavegen_holds_total 0.0" in text
    assert "wavegen_change_to_patch_seconds_count 1.0" in text
    assert 'wavegen_change_to_patch_seconds_bucket{le="0.01"} 0.0' in text
    assert 'wavegen_change_to_patch_seconds_bucket{le="0.025"} 1.0' in text
    for standard in ("process_resident_memory_bytes", "python_info", "python_gc_objects_collected_total"):
        assert standard in text
    assert "_created" not in text
    assert m.value("wavegen_patches_total", action="roll") == 1 and m.value("wavegen_queue_depth") == 3
    assert m.total("wavegen_patches_total") == 1
    # Two Metrics in one process (tests, benchmarks) must not collide: each has its own registry.
    assert Metrics().value("wavegen_patches_total", action="roll") == 0


def test_in_cluster_token_is_reread_as_the_kubelet_rotates_it(
    tmp_path: Path, server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from wavegen.controller import kube

    (tmp_path / "token").write_text("bound-1")
    (tmp_path / "ca.crt").write_text("CA")
    (tmp_path / "namespace").write_text("wavegen-system\n")
    monkeypatch.setattr(kube, "SERVICE_ACCOUNT_DIR", tmp_path)
    host, port = server.url.removeprefix("http://").split(":")
    creds = resolve_credentials(None, None, {"KUBERNETES_SERVICE_HOST": host, "KUBERNETES_SERVICE_PORT": port})
    assert (creds.server, creds.namespace, creds.describe) == (
        f"https://{host}:{port}",
        "wavegen-system",
        "in-cluster ServiceAccount",
    )
    assert creds.configuration.ssl_ca_cert == str(tmp_path / "ca.crt")
    (tmp_path / "token").write_text("bound-2")
    assert creds.source is not None and creds.source.invalidate("bound-1")
    assert creds.configuration.auth_settings()["BearerToken"]["value"] == "Bearer bound-2"


def test_client_certificate_data_becomes_files_for_tls(tmp_path: Path) -> None:
    import base64

    user = {
        "client-certificate-data": base64.b64encode(b"CERT").decode(),
        "client-key-data": base64.b64encode(b"KEY").decode(),
    }
    creds = load_kubeconfig(str(write(tmp_path / "config", config("https://127.0.0.1:6443", user))))
    cfg = creds.configuration
    assert Path(cfg.cert_file).read_bytes() == b"CERT" and Path(cfg.key_file).read_bytes() == b"KEY"
    assert creds.source is None and "BearerToken" not in cfg.api_key
