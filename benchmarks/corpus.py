"""Builds the benchmark corpus of real renders: public charts and manifests from Go modules, rendered by the pinned helm.

Everything comes through the Go module proxy (``go mod download``, into Go's module
cache), the only source of upstream projects this machine reaches; the renders are
cached in ``~/.cache/wavegen-bench/corpus``:

    python benchmarks/corpus.py          # build what is missing, print the inputs
    python benchmarks/corpus.py --list   # the inputs and their sizes

Each chart is rendered once with its default values (``helm template --include-crds``,
release ``bench``, namespace ``bench``); a chart's dependencies that live in remote
repositories are dropped, since nothing but the module proxy is reachable. ``mix`` is
every chart's render repeated with the namespace renamed, as a platform team's bundle
of many releases would be. ``mimir-dashboards-list`` is mimir's render (with its dashboards)
as one ``kind: List``, as ``kubectl get -o yaml`` prints objects; ``charts-json-list`` the first
nine charts' objects (but their CRDs) as one JSON List, as ``kubectl get -o json`` prints them.
``styles`` is generated (gen_bundle.styled_bundle).

Not here: kube-prometheus (the module proxy refuses it: 403); its shape, a ConfigMapList of
dashboards, is in ``styles``, and istio's Grafana add-on (``istio-grafana``) holds real
dashboards. prometheus-operator's ``bundle.yaml`` is here; its plain ``=``, for which PyYAML's
safe loader has no constructor, the benchmark's baseline reads as text.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_bundle import styled_bundle

CACHE = Path(os.environ.get("WAVEGEN_BENCH_CACHE", Path.home() / ".cache" / "wavegen-bench"))
CORPUS = CACHE / "corpus"
TOOLS = Path(os.environ.get("WAVEGEN_TOOLS_DIR", Path.home() / ".cache" / "wavegen-tools")) / "bin"
# Some of these modules need a newer Go than the machine's to build; only their zips are
# read, but the go command still checks the version, so let it fetch that toolchain.
GO_TOOLCHAIN = "go1.27.3"


@dataclass(frozen=True)
class Chart:
    name: str
    module: str
    version: str
    path: str  # the chart's directory inside the module
    values: tuple[str, ...] = ()  # --set values a chart needs to render at all
    # Directories of the module copied into the chart (module path, chart path): what a symlink
    # of the chart points to, which the module's zip leaves out.
    copied: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Manifest:
    name: str
    module: str
    version: str
    path: str  # a YAML file inside the module


@dataclass(frozen=True)
class Tree:
    """A directory of hand-written manifests, read as the pre-commit hook and the Action read a
    repository's files: each file its own stream, some without a final line break."""

    name: str
    module: str
    version: str
    path: str  # a directory inside the module


CHARTS = (
    Chart("cert-manager", "github.com/cert-manager/cert-manager", "v1.21.2", "deploy/charts/cert-manager"),
    Chart("external-secrets", "github.com/external-secrets/external-secrets", "v1.3.2", "deploy/charts/external-secrets"),
    Chart("kyverno", "github.com/kyverno/kyverno", "v1.19.1", "charts/kyverno"),
    Chart("gatekeeper", "github.com/open-policy-agent/gatekeeper/v3", "v3.23.1", "charts/gatekeeper"),
    Chart("ingress-nginx", "k8s.io/ingress-nginx", "v0.0.0-20240708192948-52c50467d67d", "charts/ingress-nginx"),
    Chart("metrics-server", "sigs.k8s.io/metrics-server", "v0.9.0", "charts/metrics-server"),
    Chart("descheduler", "sigs.k8s.io/descheduler", "v0.36.0", "charts/descheduler"),
    Chart("dapr", "github.com/dapr/dapr", "v1.14.0", "charts/dapr"),
    Chart(
        "loki",
        "github.com/grafana/loki/v3",
        "v3.7.8",
        "production/helm/loki",
        (
            "loki.storage.bucketNames.chunks=chunks",
            "loki.storage.bucketNames.ruler=ruler",
            "loki.storage.bucketNames.admin=admin",
            "loki.useTestSchema=true",
        ),
    ),
)
# More public charts, rendered and measured alone but left out of the mix (which stays the
# bundle earlier runs recorded): service meshes and CNIs (istio, cilium), CRD-heavy operators
# whose CRDs come from older controller-gen (flagger, kueue), dashboards in ConfigMaps (grafana).
OTHER_CHARTS = (
    Chart("cilium", "github.com/cilium/cilium", "v1.20.2", "install/kubernetes/cilium"),
    Chart("istio-base", "istio.io/istio", "v0.0.0-20260827124520-eed52ebb66ad", "manifests/charts/base"),
    Chart("istiod", "istio.io/istio", "v0.0.0-20260827124520-eed52ebb66ad", "manifests/charts/istio-control/istio-discovery"),
    Chart("flagger", "github.com/fluxcd/flagger", "v1.36.1", "charts/flagger"),
    Chart("grafana", "github.com/fluxcd/flagger", "v1.36.1", "charts/grafana"),
    Chart("podinfo", "github.com/fluxcd/flagger", "v1.36.1", "charts/podinfo"),
    Chart("kueue", "sigs.k8s.io/kueue", "v0.17.0", "charts/kueue"),
    Chart("sealed-secrets", "github.com/bitnami-labs/sealed-secrets", "v0.40.0", "helm/sealed-secrets"),
    Chart("external-dns", "sigs.k8s.io/external-dns", "v0.23.0", "charts/external-dns", ("policy=sync",)),
    Chart(
        "local-path-provisioner", "github.com/rancher/local-path-provisioner", "v0.0.30", "deploy/chart/local-path-provisioner"
    ),
    # Added with issue 22's last round, as a stand-in for charts nobody tuned for: the other
    # charts the modules above ship (policies only; istio's CNI, gateway and ztunnel; a load
    # tester; cilium's monitoring example, Grafana dashboards in ConfigMaps).
    Chart("kyverno-policies", "github.com/kyverno/kyverno", "v1.19.1", "charts/kyverno-policies"),
    Chart("istio-cni", "istio.io/istio", "v0.0.0-20260827124520-eed52ebb66ad", "manifests/charts/istio-cni"),
    Chart("istio-gateway", "istio.io/istio", "v0.0.0-20260827124520-eed52ebb66ad", "manifests/charts/gateway"),
    Chart("ztunnel", "istio.io/istio", "v0.0.0-20260827124520-eed52ebb66ad", "manifests/charts/ztunnel"),
    Chart("flagger-loadtester", "github.com/fluxcd/flagger", "v1.36.1", "charts/loadtester"),
    Chart("cilium-monitoring", "github.com/cilium/cilium", "v1.20.2", "examples/kubernetes/addons/prometheus"),
    # Added in issue 22's next round from a survey of 24 more charts: those whose shapes the
    # reader or the check then left to libyaml ("!!str 9288" in chaos-mesh's workloads,
    # "maxUnavailable : 25%" in gpu-operator's ClusterPolicy, flow sequences over lines in
    # metallb's and rook's ClusterRoles), and operators of other authors.
    Chart("chaos-mesh", "github.com/chaos-mesh/chaos-mesh", "v0.9.1-0.20260902003049-47411975a8cb", "helm/chaos-mesh"),
    Chart("gpu-operator", "github.com/NVIDIA/gpu-operator", "v0.0.0-20250917190837-d73a0086a6ba", "deployments/gpu-operator"),
    Chart("metallb", "go.universe.tf/metallb", "v0.16.2", "charts/metallb"),
    Chart("rook-ceph", "github.com/rook/rook", "v1.15.0", "deploy/charts/rook-ceph"),
    Chart("eck-operator", "github.com/elastic/cloud-on-k8s/v3", "v3.5.0", "deploy/eck-operator"),
    Chart("node-feature-discovery", "sigs.k8s.io/node-feature-discovery", "v0.17.0", "deployment/helm/node-feature-discovery"),
    Chart("karpenter", "github.com/aws/karpenter-provider-aws", "v1.15.1", "charts/karpenter", ("settings.clusterName=bench",)),
    Chart("postgres-operator", "github.com/zalando/postgres-operator", "v1.14.0", "charts/postgres-operator"),
    # From a survey of every chart in this machine's Go module cache (350 renders): the one whose
    # workload the reader left to libyaml, the old stable/minio chart Argo CD keeps as test data,
    # whose Deployment writes a shell command as a quoted scalar over lines inside a flow sequence.
    Chart("minio", "github.com/argoproj/argo-cd/v3", "v3.6.1", "util/helm/testdata/minio"),
    # Envoy Gateway's CRDs (the gateway-helm chart's crds subchart: 3.9 MB, Gateway API's and
    # its own), whose descriptions hold typographic quotes that make six of them UTF-8 text.
    Chart("envoy-gateway-crds", "github.com/envoyproxy/gateway", "v1.9.1", "charts/gateway-helm/charts/crds"),
    # Envoy Gateway's add-ons chart, its remote subcharts left out: one ConfigMap of Grafana
    # dashboards (300 KB, 9,400 lines of which 1,250 distinct), whose lines, held apart while
    # it was read, took its peak RSS above the bare load's (see fastparse._shared_lines).
    Chart("envoy-gateway-addons", "github.com/envoyproxy/gateway", "v1.9.1", "charts/gateway-addons-helm"),
    # mimir's chart with its meta-monitoring dashboards (`metaMonitoring.dashboards.enabled`):
    # 2.7 MB, 31 ConfigMaps of which 27 hold a dashboard each, labelled for Grafana's sidecar
    # (as kube-prometheus-stack's are) and mounted by nothing, beside 16 workloads. Its
    # `mixins` is a symlink to the compiled mixin, copied in; its remote subcharts (minio, the
    # rollout operator) are left out, and turned off.
    Chart(
        "mimir-dashboards",
        "github.com/grafana/mimir",
        "v1.3.1-0.20260423142704-aced80d74930",
        "operations/helm/charts/mimir-distributed",
        ("metaMonitoring.dashboards.enabled=true", "minio.enabled=false", "rollout_operator.enabled=false"),
        (("operations/mimir-mixin-compiled", "mixins"),),
    ),
)
MANIFESTS = (
    Manifest("argocd-install", "github.com/argoproj/argo-cd/v3", "v3.6.1", "manifests/install.yaml"),
    # istio's Grafana add-on: a render of the grafana chart with istio's dashboards, 190 KB of
    # them in one ConfigMap, as literal block scalars and as double-quoted JSON over many lines.
    Manifest("istio-grafana", "istio.io/istio", "v0.0.0-20260827124520-eed52ebb66ad", "samples/addons/grafana.yaml"),
    # istio's Kiali add-on: a render of kiali's chart, whose templates end every document with
    # a "..." end marker.
    Manifest("istio-kiali", "istio.io/istio", "v0.0.0-20260827124520-eed52ebb66ad", "samples/addons/kiali.yaml"),
    # Argo CD's HA install for one namespace: 150 KB of workloads and config, no CRDs.
    Manifest("argocd-ha-namespace-install", "github.com/argoproj/argo-cd/v3", "v3.6.1", "manifests/ha/namespace-install.yaml"),
    # Argo Rollouts' install (CRD-heavy) and Calico's (as istio's CI installs it: CRDs, a
    # DaemonSet, a ConfigMap of CNI configuration).
    Manifest("argo-rollouts-install", "github.com/argoproj/argo-rollouts", "v1.8.3", "manifests/install.yaml"),
    Manifest("calico", "istio.io/istio", "v0.0.0-20260827124520-eed52ebb66ad", "prow/config/calico.yaml"),
    # Calico's Grafana dashboards: one ConfigMap whose dashboards are JSON on one line each, in
    # literal block scalars, the last running to a line of spaces without a line break (which
    # sent the document to libyaml, loading PyYAML, until the reader took it: f0986a9).
    Manifest(
        "calico-grafana-dashboards",
        "github.com/projectcalico/calico",
        "v1.11.0-cni-plugin.0.20250813170300-a0db560f0520",
        "manifests/grafana-dashboards.yaml",
    ),
    # Knative's RabbitMQ event source (41 KB) and eventing core 1.13.1 (225 KB), as Knative's
    # operator ships them: labels, probes, RBAC verbs and CRD versions shared with anchors,
    # aliases and merge keys (`!!merge <<: *probe`), which sent their documents to libyaml,
    # loading PyYAML, until the reader took them. (Its GitHub source defines an anchor twice in
    # one document, which PyYAML's composer refuses: a bare load of it stops there.)
    Manifest(
        "knative-rabbitmq-source",
        "knative.dev/operator",
        "v0.42.2",
        "cmd/operator/kodata/eventing-source/1.15/rabbitmq/rabbitmq-source.yaml",
    ),
    Manifest(
        "knative-eventing-core",
        "knative.dev/operator",
        "v0.42.2",
        "cmd/operator/kodata/knative-eventing/1.13.1/2-eventing-core.yaml",
    ),
    # prometheus-operator's install (3.4 MB, CRD-heavy: the CRDs kube-prometheus-stack ships),
    # whose AlertmanagerConfig CRD lists "=" among its matchers' operators.
    Manifest("prometheus-operator-bundle", "github.com/prometheus-operator/prometheus-operator", "v0.75.0", "bundle.yaml"),
)
# Argo CD's kustomize base: 70 hand-written files (14 of them without a final line break),
# the sources `kustomize build` renders install.yaml from.
TREES = (Tree("argocd-kustomize-base", "github.com/argoproj/argo-cd/v3", "v3.6.1", "manifests/base"),)
MIX_COPIES = 20
# What wavegen reads under a directory (wavegen.inputs.files.MANIFEST_SUFFIXES).
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")


def module_dir(module: str, version: str) -> Path:
    """The module's source, downloaded once into the benchmark cache."""
    go = shutil.which("go") or "/usr/local/go/bin/go"
    # The default module cache: hack/tools.sh fetched the same Go toolchain into it for Argo CD.
    env = {**os.environ, "GOFLAGS": "-mod=mod", "GO111MODULE": "on", "GOTOOLCHAIN": GO_TOOLCHAIN}
    with tempfile.TemporaryDirectory() as work:
        subprocess.run([go, "mod", "init", "wavegen-bench"], cwd=work, env=env, check=True, capture_output=True)
        done = subprocess.run(
            [go, "mod", "download", "-json", f"{module}@{version}"], cwd=work, env=env, capture_output=True, text=True
        )
    info = json.loads(done.stdout or "{}")
    directory = info.get("Dir")
    if not directory or not Path(directory).is_dir():
        raise SystemExit(f"go mod download {module}@{version} failed: {info.get('Error') or done.stderr.strip()}")
    return Path(directory)


def _drop_remote_dependencies(chart: Path, source: Path) -> None:
    """Copy dependencies the module holds beside the chart (``file://../library``) into its charts/
    directory, and remove those that are in neither (remote ones: helm would refuse to render)."""
    meta = chart / "Chart.yaml"
    text = meta.read_text()
    if "dependencies:" not in text:
        return
    import yaml

    data = yaml.safe_load(text)
    for dependency in data.get("dependencies") or []:
        repository = str(dependency.get("repository") or "")
        beside = (source / repository.removeprefix("file://")).resolve()
        if repository.startswith("file://") and beside.is_dir() and not (chart / "charts" / dependency["name"]).exists():
            shutil.copytree(beside, chart / "charts" / dependency["name"])
    present = {p.name for p in (chart / "charts").iterdir()} if (chart / "charts").is_dir() else set()
    data["dependencies"] = [d for d in data.get("dependencies") or [] if d.get("name") in present]
    meta.write_text(yaml.safe_dump(data, sort_keys=False))
    (chart / "Chart.lock").unlink(missing_ok=True)


def render_chart(chart: Chart) -> Path:
    target = CORPUS / f"{chart.name}.yaml"
    if target.exists():
        return target
    module = module_dir(chart.module, chart.version)
    source = module / chart.path
    with tempfile.TemporaryDirectory() as work:
        copy = Path(work) / chart.name
        shutil.copytree(source, copy)
        for inside, into in chart.copied:
            shutil.copytree(module / inside, copy / into)
        _drop_remote_dependencies(copy, source)
        for path in copy.rglob("*"):
            path.chmod(0o755 if path.is_dir() else 0o644)
        env = {**os.environ, **{f"HELM_{k}_HOME": str(Path(work) / k.lower()) for k in ("CACHE", "CONFIG", "DATA")}}
        argv = [str(TOOLS / "helm3"), "template", "bench", str(copy), "--namespace", "bench", "--include-crds"]
        argv += [arg for value in chart.values for arg in ("--set", value)]
        done = subprocess.run(argv, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"helm template {chart.name} failed: {done.stderr.strip()}")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(done.stdout)
    return target


def copy_manifest(manifest: Manifest) -> Path:
    target = CORPUS / f"{manifest.name}.yaml"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(module_dir(manifest.module, manifest.version) / manifest.path, target)
    return target


def copy_tree(tree: Tree) -> Path:
    """The tree's manifest files, copied with their paths (and bytes) as they are."""
    target = CORPUS / tree.name
    if not target.exists():
        source = module_dir(tree.module, tree.version) / tree.path
        with tempfile.TemporaryDirectory(dir=CORPUS.parent) as work:
            staging = Path(work) / tree.name
            for path in input_files(source):
                copy = staging / path.relative_to(source)
                copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, copy)
            staging.rename(target)
    return target


def input_files(path: Path) -> list[Path]:
    """An input's files: the file itself, or the manifest files under a directory as wavegen finds them (sorted)."""
    if not path.is_dir():
        return [path]
    return sorted(p for p in path.rglob("*") if p.suffix in MANIFEST_SUFFIXES and p.is_file())


def _without_crds(text: str) -> str:
    documents = re.split(r"(?m)^(?=---$)", text)
    return "".join(doc for doc in documents if "\nkind: CustomResourceDefinition\n" not in doc)


def mix(renders: list[Path]) -> Path:
    """Every chart's render but its CRDs (installed once, not per release), MIX_COPIES times, each copy in namespace bench-N."""
    target = CORPUS / "mix.yaml"
    if target.exists():
        return target
    texts = [_without_crds(path.read_text()) for path in renders]
    parts = []
    for copy in range(MIX_COPIES):
        for text in texts:
            parts.append(re.sub(r"\bnamespace: bench\b", f"namespace: bench-{copy}", text))
    target.write_text("".join(part if part.endswith("\n") else part + "\n" for part in parts))
    return target


LIST_TAIL = 'metadata:\n  resourceVersion: ""\n'


def as_list(render: Path, name: str, head: str = "apiVersion: v1\nkind: List\n", tail: str = LIST_TAIL) -> Path:
    """A render's documents as the items of one ``kind: List``, as ``kubectl get -o yaml``
    prints objects (its text kept: each document's lines indented under its item's dash);
    ``head`` and ``tail``: the list's lines before ``items:`` and after them."""
    target = CORPUS / f"{name}.yaml"
    if target.exists():
        return target
    items = []
    for document in re.split(r"(?m)^---[^\n]*\n", render.read_text()):
        lines = document.rstrip("\n").split("\n")
        while lines and (not lines[0].strip() or lines[0].startswith("#")):
            lines.pop(0)  # helm's "# Source:" comment, blank lines
        if lines:
            items.append("\n".join(["- " + lines[0], *("  " + line if line else "" for line in lines[1:])]) + "\n")
    target.write_text(head + "items:\n" + "".join(items) + tail)
    return target


def as_json_list(renders: list[Path], name: str) -> Path:
    """The objects of renders (their CRDs left out) as one JSON ``kind: List``, as ``kubectl get
    -o json`` prints objects (4-space indentation) and jsonnet writes manifests."""
    target = CORPUS / f"{name}.json"
    if target.exists():
        return target
    import json

    import yaml

    items = [
        document
        for path in renders
        for document in yaml.load_all(_without_crds(path.read_text()), Loader=yaml.CSafeLoader)
        if isinstance(document, dict)
    ]
    listed = {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}
    target.write_text(json.dumps(listed, indent=4) + "\n")
    return target


def styles(documents: int = 6000) -> Path:
    target = CORPUS / f"styles-{documents}.yaml"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(styled_bundle(documents))
    return target


def corpus() -> dict[str, Path]:
    """Every input of the corpus by name, built where missing."""
    renders = [render_chart(chart) for chart in CHARTS]
    inputs = {chart.name: path for chart, path in zip(CHARTS, renders, strict=True)}
    inputs.update({chart.name: render_chart(chart) for chart in OTHER_CHARTS})
    inputs.update({m.name: copy_manifest(m) for m in MANIFESTS})
    inputs.update({tree.name: copy_tree(tree) for tree in TREES})
    inputs["mix"] = mix(renders)
    inputs["mimir-dashboards-list"] = as_list(inputs["mimir-dashboards"], "mimir-dashboards-list")
    inputs["charts-json-list"] = as_json_list(renders, "charts-json-list")
    inputs["styles"] = styles()
    return inputs


if __name__ == "__main__":
    for name, path in corpus().items():
        texts = [file.read_text() for file in input_files(path)]
        size = sum(len(text.encode()) for text in texts)
        documents = sum(text.count(chr(10) + "---") + 1 for text in texts)
        print(f"{name:28} {size:>11,} bytes {documents:>6} documents  {path}")
