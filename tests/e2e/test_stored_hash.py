"""The hash `wavegen transform` gives a bundle is the hash of what the API server stores from it (applied, read back)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.controlplane import ControlPlane

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

# Data whose YAML types differ between YAML 1.1 (PyYAML, wavegen's resolver) and go-yaml
# (kubectl's sigs.k8s.io/yaml): base-60 numbers, dates and timestamps, "=", and keys written
# as decimal integers (ingress-nginx's tcp-services) or dates (the API server refuses a ":" in a key).
CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: schedule
  namespace: {ns}
data:
  backup-time: 12:30
  window: 1:20:30
  release-date: 2024-01-15
  last-run: 2001-12-14T21:59:43.10-05:00
  spaced: 2001-12-14 21:59:43.10 -5
  operator: =
  plain: text
  9000: default/example-go:8080
  2024-01-15: a date
"""
SECRET = """\
apiVersion: v1
kind: Secret
metadata:
  name: window
  namespace: {ns}
stringData:
  opens: 12:30
  until: 2024-01-15
"""
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: backup
  namespace: {ns}
spec:
  selector:
    matchLabels: {{app: backup}}
  template:
    metadata:
      labels: {{app: backup}}
    spec:
      containers:
      - name: backup
        image: registry.invalid/backup:1
        envFrom:
        - configMapRef:
            name: schedule
        - secretRef:
            name: window
"""


def config_hash(bundle: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "wavegen", "transform"], input=bundle, capture_output=True, text=True, check=True
    )
    return next(line.split(":", 1)[1].strip() for line in proc.stdout.splitlines() if "wavegen.io/config-hash" in line)


def stored(cp: ControlPlane, kind: str, name: str, ns: str) -> str:
    """The object as the API server keeps it, as a JSON document of the fields wavegen hashes."""
    live = cp.kubectl_json("get", kind, name, "-n", ns)
    body = {"apiVersion": "v1", "kind": live["kind"], "metadata": {"name": name, "namespace": ns}, "data": live["data"]}
    return json.dumps(body, sort_keys=True)


def test_the_offline_hash_is_the_hash_of_the_stored_objects(control_plane: ControlPlane, namespace: str) -> None:
    cp, ns = control_plane, namespace
    configmap, secret, deployment = (text.format(ns=ns) for text in (CONFIGMAP, SECRET, DEPLOYMENT))
    offline = config_hash("---\n".join((configmap, secret, deployment)))
    cp.apply(configmap)
    cp.apply(secret)
    data = cp.kubectl_json("get", "configmap", "schedule", "-n", ns)["data"]
    assert data["backup-time"] == "12:30" and data["release-date"] == "2024-01-15" and data["9000"] == "default/example-go:8080"
    assert data["2024-01-15"] == "a date" and data["operator"] == "="
    read_back = "\n---\n".join((stored(cp, "configmap", "schedule", ns), stored(cp, "secret", "window", ns), deployment))
    assert config_hash(read_back) == offline
