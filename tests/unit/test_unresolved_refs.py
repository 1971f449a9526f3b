"""Required keys absent from bundled ConfigMaps/Secrets, exact finding lines, duplicate objects: in every mode."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from wavegen.cli.main import main
from wavegen.core.plan import HASH_ANNOTATION, Options
from wavegen.integrations import action
from wavegen.integrations.krm import process
from wavegen.stream.engine import InputDocument, run
from wavegen.stream.nodes import compose
from wavegen.stream.tree import line_of

SECRET_VALUE = "s3cr3t-canary-value"

# ConfigMap app has only key a; Secret db only user. The Deployment reads ConfigMap key b
# (env[1], line 28), Secret key password (env[2], line 30) and ConfigMap key zz through
# volume items (volumes[0], line 34).
BUNDLE = f"""\
apiVersion: v1
kind: ConfigMap
metadata:
  name: app
data:
  a: "1"
---
apiVersion: v1
kind: Secret
metadata:
  name: db
stringData:
  user: {SECRET_VALUE}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
        - name: c
          image: nginx
          env:
            - name: A
              valueFrom: {{configMapKeyRef: {{name: app, key: a}}}}
            - name: B
              valueFrom: {{configMapKeyRef: {{name: app, key: b}}}}
            - name: P
              valueFrom:
                secretKeyRef: {{name: db, key: password}}
      volumes:
        - name: v
          configMap:
            name: app
            items: [{{key: zz, path: zz}}]
"""
LINES = {"b": 28, "password": 30, "zz": 34}


def optional(text: str) -> str:
    """The same bundle with every reference marked optional: true."""
    text = text.replace("key: b}", "key: b, optional: true}").replace("key: password}", "key: password, optional: true}")
    volume = "            name: app\n"
    return text.replace(volume + "            items", volume + "            optional: true\n            items")


def transform(text: str, **options: Any) -> Any:
    return run([InputDocument("bundle.yaml", text.encode())], Options(**options))


def template_hash(output: bytes, annotation: str = HASH_ANNOTATION) -> str:
    deployment = next(d for d in yaml.safe_load_all(output) if d["kind"] == "Deployment")
    return str(deployment["spec"]["template"]["metadata"]["annotations"][annotation])


def key_findings(findings: Any) -> list[tuple[str, int, str]]:
    out = []
    for f in findings:
        match = re.search(r"needs key '([^']+)'", f.message)
        if match:
            out.append((match.group(1), f.line, f.severity.value))
    return sorted(out)


# --------------------------------------------------------------------------- the rule


def test_each_absent_required_key_is_a_warning_at_its_entry() -> None:
    result = transform(BUNDLE)
    assert not result.has_errors
    assert key_findings(result.findings) == sorted((k, line, "warning") for k, line in LINES.items())
    for finding in result.findings:
        assert finding.resource == "Deployment/default/web" and finding.document == 3 and finding.file == "bundle.yaml"
        assert SECRET_VALUE not in finding.message


def test_message_names_workload_source_and_key() -> None:
    messages = {f.message for f in transform(BUNDLE).findings}
    assert (
        "Deployment/default/web needs key 'password' of Secret default/db, which lacks it in the bundle; its pods cannot start"
    ) in messages


def test_optional_references_give_no_finding() -> None:
    assert transform(optional(BUNDLE)).findings == []


def test_policies_error_and_ignore() -> None:
    error = transform(BUNDLE, missing="error")
    assert error.has_errors and {s for _, _, s in key_findings(error.findings)} == {"error"}
    assert error.outputs[0] == BUNDLE.encode()  # nothing written
    assert transform(BUNDLE, missing="ignore").findings == []


@pytest.mark.parametrize("profile", ["wavegen", "wave"])
def test_the_hash_does_not_change(profile: str) -> None:
    """A missing key changes no hash: the same as when the references are optional (what earlier versions wrote)."""
    annotation = "wave.pusher.com/config-hash" if profile == "wave" else HASH_ANNOTATION
    required = transform(BUNDLE, profile=profile)
    relaxed = transform(optional(BUNDLE), profile=profile)
    assert template_hash(required.outputs[0], annotation) == template_hash(relaxed.outputs[0], annotation)


def test_wave_profile_keeps_its_own_warning_too() -> None:
    result = transform(BUNDLE, profile="wave")
    messages = [f.message for f in result.findings]
    # wave reads plain volumes whole (docs/wave-profile.md), but the pod still needs the keys their items name.
    assert key_findings(result.findings) == sorted((k, line, "warning") for k, line in LINES.items())
    assert any("wave will not update its hash: missing required key password in secret default/db" in m for m in messages)


def test_an_ignored_object_still_lacks_the_key() -> None:
    """wavegen.io/ignore keeps an object out of the hash, not out of the pod: the pod still cannot start."""
    text = BUNDLE.replace("  name: app\ndata:", '  name: app\n  annotations: {wavegen.io/ignore: "true"}\ndata:')
    result = transform(text)
    assert [k for k, _, _ in key_findings(result.findings)] == ["b", "password", "zz"]
    explain = transform(text).plan.workloads[0].templates[0].references
    assert [(r.state, sorted(r.missing_keys)) for r in explain if r.reference.source.kind == "ConfigMap"] == [
        ("ignored", ["zz"]),
        ("ignored", []),
        ("ignored", ["b"]),
    ]


def test_present_keys_are_present() -> None:
    full = BUNDLE.replace('  a: "1"\n', '  a: "1"\n  b: "2"\n  zz: "3"\n').replace(f"user: {SECRET_VALUE}", "password: x")
    assert transform(full).findings == []


def test_keys_in_binary_data_and_string_data_are_present() -> None:
    text = BUNDLE.replace('  a: "1"\n', '  a: "1"\n  zz: "3"\nbinaryData:\n  b: AAE=\n')
    text = text.replace(f"  user: {SECRET_VALUE}\n", f"  user: {SECRET_VALUE}\n  password: x\n")
    assert transform(text).findings == []


def test_envfrom_and_whole_volumes_need_no_key() -> None:
    text = BUNDLE.replace("items: [{key: zz, path: zz}]", "defaultMode: 420")
    text = text.replace("secretKeyRef: {name: db, key: password}", "configMapKeyRef: {name: app, key: a}")
    text = text.replace("valueFrom: {configMapKeyRef: {name: app, key: b}}", "value: b")
    assert transform(text).findings == []


# --------------------------------------------------------------------------- commands


@pytest.fixture
def bundle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    path = tmp_path / "bundle.yaml"
    path.write_text(BUNDLE)
    return path


def stderr_keys(err: str) -> list[tuple[str, int]]:
    return sorted((m[2], int(m[1])) for m in re.finditer(r"bundle\.yaml, document 3, line (\d+): .*needs key '([^']+)'", err))


def test_transform_stderr_and_exit_codes(bundle: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["transform", "bundle.yaml"]) == 0
    out, err = capsys.readouterr()
    assert stderr_keys(err) == sorted(LINES.items())
    assert "wavegen: warning: bundle.yaml, document 3, line 28: Deployment/default/web needs key 'b'" in err
    assert main(["transform", "--missing=error", "bundle.yaml"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("wavegen: error:") == 3
    assert main(["transform", "--missing=ignore", "bundle.yaml"]) == 0
    assert "needs key" not in capsys.readouterr().err
    assert SECRET_VALUE not in out + err


def test_check_mode(bundle: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["transform", "--check", "bundle.yaml"]) == 1  # stale: not annotated yet
    assert stderr_keys(capsys.readouterr().err) == sorted(LINES.items())
    assert main(["transform", "-i", "bundle.yaml"]) == 0
    capsys.readouterr()
    assert main(["transform", "--check", "bundle.yaml"]) == 0  # warnings alone do not fail --check
    # The template gained three annotation lines above the references.
    assert stderr_keys(capsys.readouterr().err) == sorted((k, line + 3) for k, line in LINES.items())
    assert main(["transform", "--check", "--missing=error", "bundle.yaml"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and len(stderr_keys(err)) == 3


def test_explain_text(bundle: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "bundle.yaml"]) == 0
    out, err = capsys.readouterr()
    assert "[b] via spec.template.spec.containers[0].env[1].valueFrom.configMapKeyRef: key missing (b)\n" in out
    assert "ConfigMap default/app [zz] via spec.template.spec.volumes[0].configMap: key missing (zz)" in out
    assert "ConfigMap default/app [a] via spec.template.spec.containers[0].env[0].valueFrom.configMapKeyRef: present" in out
    assert len(stderr_keys(err)) == 3


def test_explain_json(bundle: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "--format", "json", "bundle.yaml"]) == 0
    data = json.loads(capsys.readouterr().out)
    refs = data["workloads"][0]["templates"][0]["references"]
    states = {r["field"].removeprefix("spec.template.spec."): (r["state"], r["missingKeys"]) for r in refs}
    assert states == {
        "volumes[0].configMap": ("key-missing", ["zz"]),
        "containers[0].env[0].valueFrom.configMapKeyRef": ("present", []),
        "containers[0].env[1].valueFrom.configMapKeyRef": ("key-missing", ["b"]),
        "containers[0].env[2].valueFrom.secretKeyRef": ("key-missing", ["password"]),
    }
    assert sorted((f["line"], f["severity"]) for f in data["findings"]) == [(28, "warning"), (30, "warning"), (34, "warning")]


def test_explain_mermaid_crosses_the_edge(bundle: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "--format", "mermaid", "bundle.yaml"]) == 0
    out = capsys.readouterr().out
    assert 's_ConfigMap_default_app --x|"a, b, zz; key missing: b, zz"| w_Deployment_default_web' in out
    assert 's_Secret_default_db --x|"password; key missing: password"| w_Deployment_default_web' in out


def test_explain_mermaid_without_missing_keys_is_unchanged(bundle: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bundle.write_text(optional(BUNDLE))
    assert main(["explain", "--format", "mermaid", "bundle.yaml"]) == 0
    out = capsys.readouterr().out
    assert "--x" not in out and "key missing" not in out


def test_plan_reports_a_key_that_goes_missing(bundle: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = bundle.parent / "base.yaml"
    base.write_text(BUNDLE.replace('  a: "1"\n', '  a: "1"\n  b: "2"\n'))
    assert main(["plan", "base.yaml", "bundle.yaml"]) == 0
    out, err = capsys.readouterr()
    assert "ConfigMap app: removed b; lacks required key(s) b, zz: its pods cannot start" in out
    assert "bundle.yaml, document 3, line 28: Deployment/default/web needs key 'b'" in err and "(head)" in err
    assert main(["plan", "base.yaml", "bundle.yaml", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    [cause] = [c for c in data["rolling"][0]["causes"] if c["kind"] == "ConfigMap"]
    assert cause["missingKeys"] == ["b", "zz"] and cause["stateAfter"] == "key-missing" and cause["stateBefore"] == "key-missing"
    assert {f["side"] for f in data["findings"]} == {"head"}
    assert main(["plan", "base.yaml", "bundle.yaml", "--format", "markdown"]) == 0
    markdown = capsys.readouterr().out
    assert "lacks required key(s) `b`, `zz`: its pods cannot start" in markdown
    assert "key missing: b, zz" in markdown  # on the Mermaid edge
    assert main(["plan", "base.yaml", "bundle.yaml", "--missing=error"]) == 1
    capsys.readouterr()


def test_krm_results(capsys: pytest.CaptureFixture[str]) -> None:
    items = "items:\n" + "".join("- " + json.dumps(doc) + "\n" for doc in yaml.safe_load_all(BUNDLE))
    data = f"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n{items}".encode()
    outcome = process(data, environ={})
    assert outcome.exit_code == 0
    keyed = [r for r in outcome.results if "needs key" in r["message"]]
    assert len(keyed) == 3 and {r["severity"] for r in keyed} == {"warning"}
    fields = {r["field"]["path"] for r in keyed}
    assert "spec.template.spec.containers[0].env[2].valueFrom.secretKeyRef" in fields
    assert all(r["resourceRef"]["name"] == "web" and r["resourceRef"]["kind"] == "Deployment" for r in keyed)
    config = b"functionConfig: {apiVersion: v1, kind: ConfigMap, metadata: {name: f}, data: {missing: error}}\n"
    failing = process(data.replace(b"kind: ResourceList\n", b"kind: ResourceList\n" + config), environ={})
    assert failing.exit_code == 1 and {r["severity"] for r in failing.results} == {"error"}
    assert SECRET_VALUE not in json.dumps(outcome.results)


def test_post_renderer(bundle: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(BUNDLE.encode())))
    assert main(["post-render", "--namespace", "default"]) == 0
    out, err = capsys.readouterr()
    assert HASH_ANNOTATION in out and err.count("needs key") == 3
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(BUNDLE.encode())))
    assert main(["post-render", "--namespace", "default", "--missing", "error"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("wavegen: error:") == 3


def test_action_annotations(bundle: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (bundle.parent / "out").write_text("")
    (bundle.parent / "summary.md").write_text("")
    env = {"GITHUB_OUTPUT": "out", "GITHUB_STEP_SUMMARY": "summary.md", "GITHUB_ACTIONS": "true"}
    env["WAVEGEN_INPUT_PATHS"] = "bundle.yaml"
    assert action.main({**env, "WAVEGEN_INPUT_MODE": "write"}) == 0
    out = capsys.readouterr().out
    lines = sorted(re.findall(r"^::warning file=bundle\.yaml,line=(\d+)::.*needs key '([^']+)'", out, re.M))
    assert sorted((k, int(n)) for n, k in lines) == sorted(LINES.items())
    bundle.write_text(BUNDLE)
    assert action.main({**env, "WAVEGEN_INPUT_MISSING": "error"}) == 1
    out = capsys.readouterr().out
    assert len(re.findall(r"^::error file=bundle\.yaml,line=(28|30|34)::.*needs key", out, re.M)) == 3
    assert SECRET_VALUE not in out


# --------------------------------------------------------------------------- exact lines


DOC = """\
spec:
  template:
    metadata:
      annotations:
        wavegen.io/extra-secrets: tls
    spec:
      containers:
        - name: a
        - name: b
          envFrom:
            - configMapRef: {name: x}
            - secretRef:
                name: y
      volumes:
        - name: v
          projected:
            sources:
              - configMap: {name: p}
              -
                secret:
                  name: q
"""


@pytest.mark.parametrize(
    ("field", "line"),
    [
        ("spec.template.spec.containers[1].envFrom[1].secretRef", 12),
        ("spec.template.spec.containers[1].envFrom[0].configMapRef", 11),
        ("spec.template.spec.containers[1]", 9),
        ("spec.template.spec.volumes[0].projected.sources[0].configMap", 18),
        ("spec.template.spec.volumes[0].projected.sources[1].secret", 20),  # the item starts below its dash
        ("spec.template.spec.volumes[0]", 15),
        ("spec.template.metadata.annotations[wavegen.io/extra-secrets]", 5),
        ("spec.template.spec", 6),
        ("spec.template.spec.containers[7].env[0]", 7),  # no such item: the list's key
        ("spec.template.spec.containers[1].env[0]", 9),  # no such field: the innermost item found
        ("nothing.here", 1),
    ],
)
def test_line_of_follows_list_indexes(field: str, line: int) -> None:
    root = compose(DOC)
    assert root is not None
    assert line_of(root, field) == line


# --------------------------------------------------------------------------- duplicates


CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n{namespace}data:\n  k: {value}\n"
USER = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n"
    "      containers:\n        - name: c\n          envFrom:\n            - configMapRef: {name: app}\n"
)


def test_duplicate_configmap_hashes_the_last_definition() -> None:
    first, last = CM.format(namespace="", value="slow"), CM.format(namespace="  namespace: default\n", value="fast")
    both = transform("---\n".join((first, USER, last)))
    only_last = transform("---\n".join((USER, last)))
    only_first = transform("---\n".join((first, USER)))
    assert template_hash(both.outputs[0]) == template_hash(only_last.outputs[0]) != template_hash(only_first.outputs[0])
    [finding] = both.findings
    assert finding.severity.value == "warning" and (finding.document, finding.line) == (3, 20)
    assert "ConfigMap default/app is defined twice, at bundle.yaml:1:1 and bundle.yaml:3:20" in finding.message


def test_duplicates_across_files_and_groups() -> None:
    workload_v1beta2 = USER.replace("apps/v1", "apps/v1beta2")
    other_group = USER.replace("apps/v1", "example.com/v1")
    other_namespace = USER.replace("  name: web\n", "  name: web\n  namespace: prod\n")
    second = "---\n".join((other_group, other_namespace, workload_v1beta2))
    result = run([InputDocument("a.yaml", USER.encode()), InputDocument("b.yaml", second.encode())], Options())
    [finding] = [f for f in result.findings if "defined twice" in f.message]
    assert "Deployment.apps default/web is defined twice, at a.yaml:1:1 and b.yaml:3:" in finding.message
    assert finding.file == "b.yaml" and finding.document == 3


def test_duplicate_warning_in_krm_results_and_explain_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "---\n".join((CM.format(namespace="", value="a"), CM.format(namespace="", value="b")))
    items = "items:\n" + "".join("- " + json.dumps(doc) + "\n" for doc in yaml.safe_load_all(text))
    outcome = process(f"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n{items}".encode(), environ={})
    assert outcome.exit_code == 0 and [r["severity"] for r in outcome.results] == ["warning"]
    assert "defined twice" in outcome.results[0]["message"]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "b.yaml").write_text(text)
    assert main(["explain", "--format", "json", "b.yaml"]) == 0
    [finding] = json.loads(capsys.readouterr().out)["findings"]
    assert finding["severity"] == "warning" and finding["line"] == 8 and "b.yaml:1:1 and b.yaml:2:8" in finding["message"]
