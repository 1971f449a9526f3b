"""The Helm chart against real helm 3 and helm 4: lint, schema, sharding, its README, and one truth with `wavegen manifests`."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.tools import REPO_ROOT, tool
from wavegen import __version__
from wavegen.cli.watch import parse_watch_flags

CHART = REPO_ROOT / "charts" / "wavegen"
HELMS = ["helm3", "helm4"]
# Labels that only say who rendered an object; everything else must agree.
RENDERER_LABELS = ("app.kubernetes.io/managed-by", "helm.sh/chart")
# Objects only the chart renders (a Service for scraping, the Leases `helm uninstall` must remove).
CHART_ONLY = ("Service", "ServiceMonitor", "Lease")


def helm_template(
    helm: str, values: dict[str, Any], tmp_path: Path, chart: Path = CHART, namespace: str = "wavegen-system"
) -> str:
    values_file = tmp_path / "values.yaml"
    values_file.write_text(yaml.safe_dump(values))
    proc = subprocess.run(
        [tool(helm), "template", "wavegen", str(chart), "-n", namespace, "-f", str(values_file)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def manifests(*argv: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "wavegen", "manifests", *argv], capture_output=True, text=True, check=True)
    return proc.stdout


def objects(text: str) -> dict[tuple[str, str, str], dict[str, Any]]:
    out = {}
    for doc in yaml.safe_load_all(text):
        if doc:
            meta = doc["metadata"]
            out[(doc["kind"], meta.get("namespace", ""), meta["name"])] = doc
    return out


def normalised(doc: dict[str, Any]) -> dict[str, Any]:
    doc = yaml.safe_load(yaml.safe_dump(doc))
    labelled = [doc["metadata"]]
    if doc["kind"] == "Deployment":
        labelled.append(doc["spec"]["template"]["metadata"])
        container = doc["spec"]["template"]["spec"]["containers"][0]
        # IfNotPresent is what Kubernetes defaults a tagged image to; the chart only spells it out.
        assert container.pop("imagePullPolicy", "IfNotPresent") == "IfNotPresent"
        args = container.pop("args")
        # Flag order is not meaning: the same flags with the same values, and the same parse.
        container["args"] = sorted(Counter(args).items())
        container["parsed"] = sorted(vars(parse_watch_flags(args[1:])).items())
    for meta in labelled:
        for label in RENDERER_LABELS:
            (meta.get("labels") or {}).pop(label, None)
    return doc


def differences(chart_text: str, manifests_text: str) -> list[str]:
    chart = {k: v for k, v in objects(chart_text).items() if k[0] not in CHART_ONLY}
    plain = objects(manifests_text)
    problems = [f"only in the chart: {k}" for k in chart.keys() - plain.keys()]
    problems += [f"only in wavegen manifests: {k}" for k in plain.keys() - chart.keys()]
    for key in sorted(chart.keys() & plain.keys()):
        if normalised(chart[key]) != normalised(plain[key]):
            problems.append(f"{key}:\n{yaml.safe_dump(normalised(chart[key]))}\n!=\n{yaml.safe_dump(normalised(plain[key]))}")
    return problems


ALL_KINDS = "Deployment,StatefulSet,DaemonSet,CronJob"
EQUIVALENT: dict[str, tuple[list[str], dict[str, Any]]] = {
    "defaults": (["--", "--kinds", ALL_KINDS], {}),
    "namespaced": (
        ["--scope", "namespace", "--", "--namespaces", "shop,pay", "--kinds", "Deployment"],
        {"scope": "namespace", "watchNamespaces": ["shop", "pay"], "kinds": ["Deployment"]},
    ),
    "namespaced-own-namespace": (
        ["--scope", "namespace", "--", "--kinds", "StatefulSet,Rollout"],
        {"scope": "namespace", "kinds": ["StatefulSet", "Rollout"]},
    ),
    "replicas-hmac-selector-extra": (
        [
            "--replicas", "3", "--hmac-key-secret", "hk", "--image", "registry.example/wg:7",
            "--", "--kinds", "Deployment,ReplicaSet", "--namespace-selector", "team=a", "--window", "5", "--all-workloads",
        ],
        {
            "replicas": 3, "hmacKeySecret": "hk", "image": {"repository": "registry.example/wg", "tag": "7"},
            "kinds": ["Deployment", "ReplicaSet"], "namespaceSelector": "team=a",
            "extraArgs": ["--window", "5", "--all-workloads"],
        },
    ),
}  # fmt: skip


@pytest.mark.parametrize("helm", HELMS)
def test_lint_strict(helm: str) -> None:
    proc = subprocess.run([tool(helm), "lint", "--strict", str(CHART)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("helm", HELMS)
@pytest.mark.parametrize("case", sorted(EQUIVALENT))
def test_chart_and_manifests_render_the_same_objects(helm: str, case: str, tmp_path: Path) -> None:
    flags, values = EQUIVALENT[case]
    chart_text = helm_template(helm, {**values, "metrics": {"service": {"enabled": False}}}, tmp_path)
    assert differences(chart_text, manifests(*flags)) == []


def test_a_drifted_chart_is_caught(tmp_path: Path) -> None:
    """The comparison can fail: a chart whose RBAC lost a verb no longer equals `wavegen manifests`."""
    drifted = tmp_path / "chart"
    shutil.copytree(CHART, drifted)
    helpers = drifted / "templates" / "_helpers.tpl"
    helpers.write_text(helpers.read_text().replace('verbs: ["get", "list", "watch", "patch"]', 'verbs: ["get", "list", "watch"]'))
    problems = differences(helm_template("helm3", {}, tmp_path, chart=drifted), manifests("--", "--kinds", ALL_KINDS))
    assert any("ClusterRole" in p for p in problems)


@pytest.mark.parametrize("helm", HELMS)
@pytest.mark.parametrize(
    ("values", "complaint"),
    [
        ({"replicas": "two"}, "replicas"),
        ({"replica": 2}, "replica"),
        ({"scope": "galaxy"}, "scope"),
        ({"kinds": ["Pod"]}, "kinds"),
        ({"image": {"repository": "x", "digest": "sha256:0"}}, "digest"),
        ({"shards": [{"name": "a"}]}, "namespaceSelector"),
        ({"shards": [{"name": "a", "namespaceSelector": "s=a"}], "scope": "namespace"}, "shards need scope: cluster"),
        ({"namespaceSelector": "s=a", "watchNamespaces": ["x"]}, "cannot be combined"),
    ],
)
def test_bad_values_are_refused(helm: str, values: dict[str, Any], complaint: str, tmp_path: Path) -> None:
    (tmp_path / "values.yaml").write_text(yaml.safe_dump(values))
    proc = subprocess.run(
        [tool(helm), "template", "wavegen", str(CHART), "-f", str(tmp_path / "values.yaml")], capture_output=True, text=True
    )
    assert proc.returncode != 0
    assert complaint in proc.stderr, proc.stderr


@pytest.mark.parametrize("helm", HELMS)
def test_shards_are_one_deployment_and_lease_each(helm: str, tmp_path: Path) -> None:
    shards = [{"name": "a", "namespaceSelector": "shard=a"}, {"name": "b", "namespaceSelector": "shard=b"}]
    values = {"shards": shards, "replicas": 2}
    found = objects(helm_template(helm, values, tmp_path))
    ns = "wavegen-system"
    for shard in ("a", "b"):
        dep = found[("Deployment", ns, f"wavegen-{shard}")]
        args = dep["spec"]["template"]["spec"]["containers"][0]["args"]
        parsed = parse_watch_flags(args[1:])
        assert (parsed.lease_name, parsed.namespace_selector, parsed.leader_elect) == (f"wavegen-{shard}", f"shard={shard}", True)
        assert dep["spec"]["selector"]["matchLabels"]["wavegen.io/shard"] == shard
        assert ("Lease", ns, f"wavegen-{shard}") in found
        assert ("PodDisruptionBudget", ns, f"wavegen-{shard}") in found
    assert ("Deployment", ns, "wavegen") not in found
    election = found[("Role", ns, "wavegen-leader-election")]
    assert election["rules"][1]["resourceNames"] == ["wavegen-a", "wavegen-b"]
    cluster_rules = found[("ClusterRole", "", "wavegen")]["rules"]
    assert {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["list", "watch"]} in cluster_rules


def test_chart_version_is_the_package_version() -> None:
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    assert (chart["version"], chart["appVersion"]) == (__version__, __version__)


def test_readme_lists_every_value() -> None:
    script = REPO_ROOT / "hack" / "chart_readme.py"
    proc = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    readme = (CHART / "README.md").read_text()
    schema_keys = set(yaml.safe_load((CHART / "values.schema.json").read_text())["properties"])
    assert all(f"| `{key}" in readme for key in schema_keys)
