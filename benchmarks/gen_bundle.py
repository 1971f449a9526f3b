"""Generate deterministic benchmark bundles (workload bundle, CRD-heavy bundle) as YAML streams."""

from __future__ import annotations

import argparse
import base64
import sys


def _configmap(i: int) -> str:
    return f"""apiVersion: v1
kind: ConfigMap
metadata:
  name: app-config-{i}
  namespace: bench
  labels:
    app: app-{i}
data:
  LOG_LEVEL: "info"
  FEATURE_FLAG: "enabled-{i}"
  settings.yaml: |
    server:
      port: 8080
      workers: {i % 16 + 1}
"""


def _secret(i: int) -> str:
    password = base64.b64encode(f"password-{i}-xyz".encode()).decode()
    token = base64.b64encode(f"token-{i}-abcdefghijklmnop".encode()).decode()
    return f"""apiVersion: v1
kind: Secret
metadata:
  name: app-secret-{i}
  namespace: bench
type: Opaque
data:
  password: {password}
  token: {token}
"""


def _deployment(i: int) -> str:
    return f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-{i}
  namespace: bench
  labels:
    app: app-{i}
spec:
  replicas: 2
  selector:
    matchLabels:
      app: app-{i}
  template:
    metadata:
      labels:
        app: app-{i}
    spec:
      containers:
        - name: app
          image: "registry.example.com/app:1.{i % 50}"
          ports:
            - containerPort: 8080
          env:
            - name: LOG_LEVEL
              valueFrom:
                configMapKeyRef:
                  name: app-config-{i}
                  key: LOG_LEVEL
            - name: PASSWORD
              valueFrom:
                secretKeyRef:
                  name: app-secret-{i}
                  key: password
          envFrom:
            - configMapRef:
                name: app-config-{i}
          volumeMounts:
            - name: config
              mountPath: /etc/app
      volumes:
        - name: config
          configMap:
            name: app-config-{i}
            items:
              - key: settings.yaml
                path: settings.yaml
"""


def _crd(i: int) -> str:
    properties = "".join(
        f"""                field{j}:
                  type: string
                  description: "Field {j} of resource {i}; a long description that real operators ship in their CRDs."
"""
        for j in range(40)
    )
    return f"""apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets{i}.example.com
spec:
  group: example.com
  names:
    kind: Widget{i}
    plural: widgets{i}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
{properties}"""


def workload_bundle(count: int) -> str:
    """Return a stream with ``count`` each of ConfigMap, Secret and Deployment."""
    docs: list[str] = []
    for i in range(count):
        docs.extend((_configmap(i), _secret(i), _deployment(i)))
    return "---\n" + "---\n".join(docs)


def crd_bundle(count: int) -> str:
    """Return a stream where CRDs make up most of the bytes, plus a few workloads."""
    docs: list[str] = []
    for i in range(count):
        docs.append(_crd(i))
        if i % 10 == 0:
            docs.extend((_configmap(i), _secret(i), _deployment(i)))
    return "---\n" + "---\n".join(docs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("shape", choices=["workloads", "crds"])
    parser.add_argument("count", type=int)
    args = parser.parse_args()
    text = workload_bundle(args.count) if args.shape == "workloads" else crd_bundle(args.count)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
