"""Generate deterministic benchmark bundles (workloads, CRD-heavy, the styles people write) as YAML streams."""

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


# ---- the styles people write (issue 22): flow collections, quoted strings with escapes,
# folded and literal scalars with indicators, multi-line plain scalars, comments everywhere


def _styled_configmap(i: int) -> str:
    return f"""---
# Source: shop/templates/configmap-{i}.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: styled-config-{i}  # the app's settings
  namespace: bench
  labels: {{app: styled-{i}, tier: "web", version: '1.{i % 7}'}}
  annotations:
    description: a configuration that is described
      over two lines
data:
  LOG_LEVEL: "info"   # quoted
  GREETING: "hello\\tworld\\n \\"quoted\\" \\u00e9"
  SINGLE: 'it''s {i}'
  # a comment between keys
  settings.yaml: |
    server:
      port: 8080
      workers: {i % 16 + 1}

    # a comment inside the literal
  motd: >-
    Welcome to styled {i},
    folded into one line.

    A second paragraph.
  indented.txt: |2
      two more spaces kept
    the base line
  keep-trailing: |+
    kept

"""


def _styled_secret(i: int) -> str:
    return f"""---
# Source: shop/templates/secret-{i}.yaml
apiVersion: v1
kind: Secret
metadata: {{name: styled-secret-{i}, namespace: bench}}
type: Opaque
stringData:
  password: "p@ss-{i}:\\"x\\""
  token: 'tok-{i}'
  url: postgres://db-{i}.bench.svc:5432/app?sslmode=require
"""


def _styled_workload(i: int, kind: str) -> str:
    service = "\n  serviceName: styled-{i}" if kind == "StatefulSet" else ""
    # pod-template annotations: flow style in one workload of four, block style in the others
    annotations = (
        'annotations: {prometheus.io/scrape: "true", prometheus.io/port: "9090"}'
        if i % 4 == 3
        else "annotations:\n        prometheus.io/scrape: \"true\"  # scraped\n        prometheus.io/port: '9090'"
    )
    replicas = "" if kind == "DaemonSet" else "\n  replicas: 2  # two"
    return f"""---
# Source: shop/templates/{kind.lower()}-{i}.yaml
apiVersion: apps/v1
kind: {kind}
metadata:
  name: styled-{i}
  namespace: bench
  labels: {{app: styled-{i}, app.kubernetes.io/managed-by: Helm}}
spec:{replicas}{service}
  selector:
    matchLabels: {{app: styled-{i}}}
  template:
    metadata:
      labels: {{app: styled-{i}}}
      {annotations}
    spec:
      # the main container
      containers:
        - name: app
          image: "registry.example.com/styled:1.{i % 50}"
          imagePullPolicy: IfNotPresent
          args: ["--config", "/etc/app/settings.yaml", "--port=8080", '--name=styled-{i}']
          command:
            - /bin/app   # the binary
            - "--verbose"
          ports: [{{containerPort: 8080, name: http}}, {{containerPort: 9090, name: metrics}}]
          env:
            - {{name: LOG_LEVEL, valueFrom: {{configMapKeyRef: {{name: styled-config-{i}, key: LOG_LEVEL}}}}}}
            - name: PASSWORD
              valueFrom:
                secretKeyRef: {{name: styled-secret-{i}, key: password}}
            - name: BANNER
              value: "line one\\nline two"
            - name: NOTE
              value: >-
                a folded
                note
          envFrom:
            - configMapRef: {{name: styled-config-{i}}}
          resources:
            limits: {{cpu: 500m, memory: 256Mi}}
            requests: {{cpu: 100m, memory: 128Mi}}
          volumeMounts: [{{name: config, mountPath: /etc/app}}]
      volumes:
        - name: config
          configMap:
            name: styled-config-{i}
            items: [{{key: settings.yaml, path: settings.yaml}}]
"""


def _dashboards(count: int) -> str:
    """A ConfigMapList of dashboards, JSON in literal block scalars (as kube-prometheus ships them)."""
    items = []
    for i in range(count):
        target = f'{{"expr": "rate(http_requests_total{{job=\\\\"app-{i}\\\\"}}[5m])"}}'
        panels = ",\n".join(
            f'                  {{"id": {j}, "title": "Panel {j}", "type": "graph", "targets": [{target}]}}' for j in range(20)
        )
        items.append(f"""  - apiVersion: v1
    kind: ConfigMap
    metadata:
      name: dashboard-{i}
      namespace: bench
      labels: {{grafana_dashboard: "1"}}
    data:
      dashboard-{i}.json: |-
        {{
          "title": "Dashboard {i}",
          "panels": [
{panels}
          ]
        }}
""")
    return "---\napiVersion: v1\nkind: ConfigMapList\nitems:\n" + "".join(items)


def _dashboard_json(index: int, panels: int) -> str:
    """A Grafana dashboard's JSON as kube-prometheus writes it: pretty-printed, 4-space indents."""
    query = f'sum(rate(container_cpu_usage_seconds_total{{namespace=\\"$namespace\\", pod=~\\"app-{index}.*\\"}}[5m])) by (pod)'
    lines = ["{", '    "editable": false,', '    "panels": [']
    for panel in range(panels):
        lines += [
            "        {",
            '            "datasource": "$datasource",',
            '            "gridPos": {',
            f'                "h": 8, "w": 12, "x": {12 * (panel % 2)}, "y": {8 * (panel // 2)}',
            "            },",
            f'            "id": {panel + 1},',
            '            "targets": [',
            "                {",
            f'                    "expr": "{query}",',
            '                    "legendFormat": "{{pod}}",',
            '                    "refId": "A"',
            "                }",
            "            ],",
            f'            "title": "Panel {panel + 1}",',
            '            "type": "timeseries"',
            "        }" + ("," if panel + 1 < panels else ""),
        ]
    lines += ["    ],", '    "schemaVersion": 39,', f'    "title": "Dashboard {index}",', f'    "uid": "dash-{index}"', "}"]
    return "\n".join(lines)


def dashboard_list(count: int, panels: int = 60) -> str:
    """A ConfigMapList of ``count`` Grafana dashboards (about 1,000 lines of JSON each, in
    literal block scalars) and the Grafana Deployment that mounts them, as kube-prometheus's
    ``grafana-dashboardDefinitions.yaml`` and ``grafana-deployment.yaml`` ship them."""
    items = []
    for i in range(count):
        body = "\n".join("        " + line for line in _dashboard_json(i, panels).split("\n"))
        items.append(
            f"- apiVersion: v1\n  data:\n    dashboard-{i}.json: |-\n{body}\n  kind: ConfigMap\n  metadata:\n"
            f"    labels:\n      app.kubernetes.io/name: grafana\n    name: grafana-dashboard-{i}\n    namespace: monitoring\n"
        )
    mounts = "".join(
        f"        - mountPath: /grafana-dashboard-definitions/0/dashboard-{i}\n          name: grafana-dashboard-{i}\n"
        for i in range(count)
    )
    volumes = "".join(
        f"      - configMap:\n          name: grafana-dashboard-{i}\n        name: grafana-dashboard-{i}\n" for i in range(count)
    )
    deployment = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: grafana\n  namespace: monitoring\nspec:\n"
        "  replicas: 1\n  selector:\n    matchLabels:\n      app.kubernetes.io/name: grafana\n  template:\n"
        "    metadata:\n      labels:\n        app.kubernetes.io/name: grafana\n    spec:\n      containers:\n"
        "      - image: grafana/grafana:11.2.0\n        name: grafana\n        volumeMounts:\n"
        f"{mounts}      volumes:\n{volumes}"
    )
    return "---\napiVersion: v1\nitems:\n" + "".join(items) + "kind: ConfigMapList\n---\n" + deployment


def quoted_dashboards(count: int, panels: int = 60) -> str:
    """``count`` ConfigMaps of one Grafana dashboard each, its JSON one double-quoted line as
    helm's ``{{ .Files.Get "dashboards/x.json" | toJson }}`` writes it (its line breaks and
    quotes escaped), and the Deployment that mounts them."""
    import json

    configmaps = "".join(
        f"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dashboard-{i}\n  namespace: monitoring\n"
        f"data:\n  dashboard-{i}.json: {json.dumps(_dashboard_json(i, panels))}\n"
        for i in range(count)
    )
    volumes = "".join(f"      - name: d{i}\n        configMap:\n          name: dashboard-{i}\n" for i in range(count))
    return configmaps + (
        "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: grafana\n  namespace: monitoring\nspec:\n"
        "  template:\n    spec:\n      containers:\n      - name: grafana\n        image: grafana/grafana:11.2.0\n"
        f"      volumes:\n{volumes}"
    )


def styled_bundle(documents: int) -> str:
    """About ``documents`` documents in the styles people write, and a ConfigMapList of dashboards."""
    kinds = ("Deployment", "StatefulSet", "DaemonSet", "Deployment")
    docs: list[str] = []
    for i in range(documents // 3):
        docs.extend((_styled_configmap(i), _styled_secret(i), _styled_workload(i, kinds[i % len(kinds)])))
    return "".join(docs) + _dashboards(max(1, documents // 100))


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


_NGINX_CONF = "server {\n\tlisten 8080;\n\tlocation / {\n\t\troot /usr/share/nginx/html;\n\t}\n}\n"


def hand_edited_bundle() -> str:
    """A small hand-written file as editors on Windows save it: CRLF line breaks, an nginx
    configuration indented with tabs in a ConfigMap, and no line break after the last line."""
    conf = "".join(f"    {line}\n" for line in _NGINX_CONF.splitlines())
    text = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-conf\ndata:\n  nginx.conf: |\n"
        f"{conf}---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n"
        "  selector:\n    matchLabels:\n      app: web\n  template:\n    metadata:\n      labels:\n        app: web\n"
        "    spec:\n      containers:\n        - name: nginx\n          image: nginx:1.27\n          ports:\n"
        "            - containerPort: 8080\n          volumeMounts:\n            - name: conf\n"
        "              mountPath: /etc/nginx/conf.d\n      volumes:\n        - name: conf\n          configMap:\n"
        "            name: web-conf\n"
    )
    return text.rstrip("\n").replace("\n", "\r\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("shape", choices=["workloads", "crds", "styles", "dashboards"])
    parser.add_argument("count", type=int)
    args = parser.parse_args()
    makers = {"workloads": workload_bundle, "crds": crd_bundle, "styles": styled_bundle, "dashboards": dashboard_list}
    text = makers[args.shape](args.count)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
