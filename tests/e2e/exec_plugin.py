"""A kubeconfig exec credential plugin for the e2e tests: each run mints a new bound ServiceAccount token and revokes the last.

Environment (set in the kubeconfig's ``exec.env``): ``PLUGIN_KUBECTL`` and ``PLUGIN_ADMIN_KUBECONFIG``
(how to mint), ``PLUGIN_NAMESPACE`` and ``PLUGIN_SERVICE_ACCOUNT`` (whom for), ``PLUGIN_STATE`` (a directory:
``calls`` gets one line per run, ``issued`` every token handed out) and ``PLUGIN_LIFETIME`` (seconds until the
advertised ``expirationTimestamp``; negative for an already expired credential).

Each token is bound to a Secret ``<sa>-cred-<n>``; deleting the previous Secret revokes the previous token at
the API server, so a client that kept using an old token would be refused.
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
from pathlib import Path


def main() -> int:
    env = os.environ
    kubectl = [env["PLUGIN_KUBECTL"], f"--kubeconfig={env['PLUGIN_ADMIN_KUBECONFIG']}", "-n", env["PLUGIN_NAMESPACE"]]
    state = Path(env["PLUGIN_STATE"])
    sa = env["PLUGIN_SERVICE_ACCOUNT"]
    calls = state / "calls"
    n = (len(calls.read_text().splitlines()) if calls.exists() else 0) + 1
    with calls.open("a") as f:
        f.write(f"{datetime.datetime.now(datetime.UTC).isoformat()}\n")
    secret = f"{sa}-cred-{n}"
    subprocess.run([*kubectl, "create", "secret", "generic", secret], check=True, capture_output=True)
    token = subprocess.run(
        [*kubectl, "create", "token", sa, "--duration=10m", "--bound-object-kind=Secret", f"--bound-object-name={secret}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    if n > 1:
        subprocess.run([*kubectl, "delete", "secret", f"{sa}-cred-{n - 1}", "--wait=false"], check=True, capture_output=True)
    with (state / "issued").open("a") as f:
        f.write(token + "\n")
    expires = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=float(env.get("PLUGIN_LIFETIME", "8")))
    credential = {
        "apiVersion": "client.authentication.k8s.io/v1",
        "kind": "ExecCredential",
        "status": {"token": token, "expirationTimestamp": expires.strftime("%Y-%m-%dT%H:%M:%SZ")},
    }
    sys.stdout.write(json.dumps(credential) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
