"""wavegen.integrations.action run directly: inputs from env, $GITHUB_OUTPUT, the step summary, annotations."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from wavegen.integrations import action

SECRET_VALUE = "unit-secret-value"

BUNDLE = """\
apiVersion: v1
kind: ConfigMap
metadata: {{name: app-config}}
data:
  LEVEL: {level}
  UNUSED: x
---
apiVersion: v1
kind: Secret
metadata: {{name: app-secret}}
stringData:
  TOKEN: {secret}
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: app}}
spec:
  template:
    spec:
      containers:
        - name: app
          image: registry.example/app:1
          env:
            - name: LEVEL
              valueFrom: {{configMapKeyRef: {{name: app-config, key: LEVEL}}}}
            - name: TOKEN
              valueFrom: {{secretKeyRef: {{name: app-secret, key: TOKEN}}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: idle}}
spec:
  template:
    spec:
      containers:
        - name: idle
          image: registry.example/idle:1
"""


def parse_outputs(text: str) -> dict[str, str]:
    """Parse the heredoc format GitHub documents for $GITHUB_OUTPUT."""
    outputs: dict[str, str] = {}
    lines = text.split("\n")
    i = 0
    while i < len(lines) and lines[i]:
        name, _, delimiter = lines[i].partition("<<")
        assert re.fullmatch(r"wavegen_[0-9a-f]{32}", delimiter), lines[i]
        end = lines.index(delimiter, i + 1)
        outputs[name] = "\n".join(lines[i + 1 : end])
        i = end + 1
    return outputs


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / "bundle.yaml").write_text(BUNDLE.format(level="info", secret=SECRET_VALUE))
    (tmp_path / "out").write_text("")
    (tmp_path / "summary.md").write_text("")
    return tmp_path


def env(**inputs: str) -> dict[str, str]:
    values = {"GITHUB_OUTPUT": "out", "GITHUB_STEP_SUMMARY": "summary.md", "GITHUB_ACTIONS": "true"}
    values.update({f"WAVEGEN_INPUT_{k.upper()}": v for k, v in inputs.items()})
    return values


def test_write_mode_outputs_summary_and_file(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert action.main(env(paths="manifests", mode="write")) == 0
    outputs = parse_outputs((workspace / "out").read_text())
    assert outputs["changed"] == "true"
    assert outputs["workloads"] == "Deployment/default/app"
    assert outputs["files"] == "manifests/bundle.yaml"
    (record,) = json.loads(outputs["workloads-json"])
    assert record["oldHash"] is None and len(record["newHash"]) == 64
    assert record["sources"] == [
        {"kind": "ConfigMap", "namespace": "default", "name": "app-config", "keys": ["LEVEL"]},
        {"kind": "Secret", "namespace": "default", "name": "app-secret", "keys": ["TOKEN"]},
    ]
    written = (workspace / "manifests" / "bundle.yaml").read_text()
    assert f'wavegen.io/config-hash: "{record["newHash"]}"' in written or record["newHash"] in written
    summary = (workspace / "summary.md").read_text()
    assert "| `Deployment` default/app | manifests/bundle.yaml:" in summary
    assert "ConfigMap default/app-config: LEVEL<br>Secret default/app-secret: TOKEN" in summary
    assert "idle" not in summary.split("```mermaid")[0]
    assert "```mermaid\ngraph LR\n" in summary
    captured = capsys.readouterr()
    for text in (summary, (workspace / "out").read_text(), captured.out, captured.err):
        assert SECRET_VALUE not in text
        assert "UNUSED" not in text  # keys the workload cannot see are not named

    # a second run has nothing to do
    (workspace / "out").write_text("")
    assert action.main(env(paths="manifests", mode="check")) == 0
    outputs = parse_outputs((workspace / "out").read_text())
    assert outputs["changed"] == "false" and outputs["workloads"] == "" and outputs["workloads-json"] == "[]"


def test_check_mode_annotates_stale_workload_and_fails(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = (workspace / "manifests" / "bundle.yaml").read_text()
    assert action.main(env(paths="manifests/*.yaml", mode="check")) == 1
    assert (workspace / "manifests" / "bundle.yaml").read_text() == before
    out = capsys.readouterr().out
    assert re.search(r"^::error file=manifests/bundle\.yaml,line=\d+::Deployment/default/app: stale config hash", out, re.M), out
    assert "Deployment/default/idle" not in out
    assert parse_outputs((workspace / "out").read_text())["changed"] == "true"
    assert "config hash check" in (workspace / "summary.md").read_text()


def test_findings_become_annotations_with_file_and_line(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bundle = workspace / "manifests" / "bundle.yaml"
    bundle.write_text(bundle.read_text().replace("name: app-secret}", "name: other-secret}"))
    assert action.main(env(paths="manifests", missing="error")) == 1
    out = capsys.readouterr().out
    assert re.search(r"^::error file=manifests/bundle\.yaml,line=\d+::.*app-secret", out, re.M), out
    assert SECRET_VALUE not in out


def test_fatal_errors_are_one_annotation(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workspace / "manifests" / "bad.yaml").write_text("a: [\n")
    assert action.main(env(paths="manifests")) == 1
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and out[0].startswith("::error file=manifests/bad.yaml"), out


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({"paths": ""}, "input paths is required"),
        ({"paths": "manifests", "mode": "apply"}, "input mode must be one of write, check"),
        ({"paths": "manifests", "args": "--in-place"}, "unsupported option"),
        ({"paths": "manifests", "args": "--profile=nope"}, "input args"),
        ({"paths": "manifests", "args": "'unclosed"}, "input args"),
        ({"paths": "nothing-*.yaml"}, "pattern matches no file"),
    ],
)
def test_bad_inputs_are_usage_errors(
    workspace: Path, capsys: pytest.CaptureFixture[str], inputs: dict[str, str], message: str
) -> None:
    assert action.main(env(**inputs)) in (1, 2)
    out = capsys.readouterr().out
    assert out.startswith("::error") and message in out, out
    assert (workspace / "out").read_text() == ""


def test_inputs_are_argv_words_never_shell(workspace: Path) -> None:
    inputs = action.inputs_from_env(
        {
            "WAVEGEN_INPUT_PATHS": "manifests\n'dir with space'",
            "WAVEGEN_INPUT_NAMESPACE": "prod; rm -rf /",
            "WAVEGEN_INPUT_ARGS": "--opt-in --workload 'Rollout.argoproj.io=spec.template'",
        }
    )
    assert inputs.paths == ["manifests", "dir with space"]
    assert inputs.flags == ["--namespace=prod; rm -rf /", "--opt-in", "--workload", "Rollout.argoproj.io=spec.template"]
    assert action.parse_flags(inputs.flags).namespace == "prod; rm -rf /"


def test_output_delimiters_are_random_and_values_multiline(tmp_path: Path) -> None:
    target = tmp_path / "out"
    action.write_outputs(str(target), {"a": "x\ny", "b": ""})
    action.write_outputs(str(target), {"a": "z"})
    text = target.read_text()
    delimiters = re.findall(r"<<(\S+)", text)
    assert len(set(delimiters)) == 3
    assert parse_outputs(text.split("a<<", 2)[0] + "a<<" + text.split("a<<", 2)[1])["a"] == "x\ny"


def test_action_yml_passes_inputs_only_through_env() -> None:
    import yaml

    root = Path(__file__).resolve().parents[2]
    metadata = yaml.safe_load((root / "action.yml").read_text())
    assert metadata["runs"]["using"] == "composite"
    for step in metadata["runs"]["steps"]:
        assert "${{" not in step["run"], step["name"]
        for value in step.get("env", {}).values():
            assert re.fullmatch(r"\$\{\{ (inputs|steps\.setup\.outputs|github)\.[\w.-]+ \}\}", value), value
    referenced = {
        v.split(".")[1].split(" ")[0]
        for s in metadata["runs"]["steps"]
        for v in s.get("env", {}).values()
        if v.startswith("${{ inputs.")
    }
    assert referenced == set(metadata["inputs"]), referenced
    assert set(metadata["outputs"]) == {"changed", "workloads", "workloads-json", "files"}
