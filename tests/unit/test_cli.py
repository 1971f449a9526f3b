"""The CLI as users run it: exit codes, check mode, atomic in-place writes, one-line errors (imports: test_layers)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
HELM = FIXTURES / "helm-basic"


def wavegen(
    cmd: list[str], *args: str, stdin: bytes = b"", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    full_env = {**os.environ, **(env or {})}
    full_env.pop("GITHUB_ACTIONS", None) if env is None or "GITHUB_ACTIONS" not in env else None
    return subprocess.run([*cmd, *args], input=stdin, capture_output=True, env=full_env, timeout=60, check=False)


def test_stdin_to_stdout(wavegen_cmd: list[str]) -> None:
    done = wavegen(wavegen_cmd, "transform", "-", stdin=(HELM / "input.yaml").read_bytes())
    assert done.returncode == 0, done.stderr
    assert done.stdout == (HELM / "expected.yaml").read_bytes()
    assert done.stderr == b""


def test_check_reports_stale_files_with_a_diff_and_exit_1(wavegen_cmd: list[str], tmp_path: Path) -> None:
    target = tmp_path / "m.yaml"
    target.write_bytes((HELM / "input.yaml").read_bytes())
    done = wavegen(wavegen_cmd, "transform", "--check", str(tmp_path))
    assert done.returncode == 1
    assert b"+        wavegen.io/config-hash:" in done.stdout
    assert b"stale" in done.stderr
    assert target.read_bytes() == (HELM / "input.yaml").read_bytes()


def test_in_place_rewrites_only_stale_files(wavegen_cmd: list[str], tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_bytes((HELM / "input.yaml").read_bytes())
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.yml").write_bytes((FIXTURES / "crlf" / "expected.yaml").read_bytes())
    (tmp_path / "notes.txt").write_text("not a manifest")
    done = wavegen(wavegen_cmd, "transform", "-i", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "a.yaml").read_bytes() == (HELM / "expected.yaml").read_bytes()
    assert (tmp_path / "sub" / "b.yml").read_bytes() == (FIXTURES / "crlf" / "expected.yaml").read_bytes()
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a.yaml", "b.yml", "notes.txt", "sub"]


def test_bundle_spans_files_in_a_directory(wavegen_cmd: list[str], tmp_path: Path) -> None:
    docs = (HELM / "input.yaml").read_text().split("---\n")
    for index, doc in enumerate(docs):
        (tmp_path / f"{index:02d}.yaml").write_text(doc)
    assert wavegen(wavegen_cmd, "transform", "-i", str(tmp_path)).returncode == 0
    assert "wavegen.io/config-hash" in (tmp_path / "04.yaml").read_text()


def test_error_in_one_file_writes_nothing(wavegen_cmd: list[str], tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_bytes((HELM / "input.yaml").read_bytes())
    bad = tmp_path / "zbad.yaml"
    bad.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  n: 5\n")
    done = wavegen(wavegen_cmd, "transform", "-i", str(tmp_path))
    assert done.returncode == 1
    lines = done.stderr.decode().splitlines()
    assert len(lines) == 1 and "zbad.yaml" in lines[0] and "line 6" in lines[0] and "not a string" in lines[0]
    assert good.read_bytes() == (HELM / "input.yaml").read_bytes()
    assert b"Traceback" not in done.stderr


def test_missing_error_policy_writes_no_output_file(wavegen_cmd: list[str], tmp_path: Path) -> None:
    out = tmp_path / "out.yaml"
    done = wavegen(wavegen_cmd, "transform", "--missing", "error", "-o", str(out), str(FIXTURES / "selection" / "input.yaml"))
    assert done.returncode == 1
    assert not out.exists()
    assert b"external-tls" in done.stderr


@pytest.mark.parametrize(
    "args", [["transform", "--bogus"], ["transform", "-i", "-"], ["transform", "--profile", "nope"], ["nope"]]
)
def test_usage_errors_exit_2(wavegen_cmd: list[str], args: list[str]) -> None:
    done = wavegen(wavegen_cmd, *args, stdin=b"")
    assert done.returncode == 2
    assert b"Traceback" not in done.stderr


def test_missing_file_is_one_line(wavegen_cmd: list[str], tmp_path: Path) -> None:
    done = wavegen(wavegen_cmd, "transform", str(tmp_path / "absent.yaml"))
    assert done.returncode == 1
    assert done.stderr.decode().count("\n") == 1 and "absent.yaml" in done.stderr.decode()


def test_github_annotations_in_actions(wavegen_cmd: list[str]) -> None:
    done = wavegen(wavegen_cmd, "transform", str(FIXTURES / "selection" / "input.yaml"), env={"GITHUB_ACTIONS": "true"})
    assert done.returncode == 0
    assert done.stderr.decode().startswith("::warning file=")
    assert ",line=" in done.stderr.decode()


def test_explain_json_and_mermaid(wavegen_cmd: list[str]) -> None:
    done = wavegen(wavegen_cmd, "explain", "--format", "json", str(FIXTURES / "all-kinds" / "input.yaml"))
    data = json.loads(done.stdout)
    statuses = {w["name"]: w["status"] for w in data["workloads"]}
    assert statuses == {
        "agent": "annotated",
        "legacy": "annotated",
        "report": "annotated",
        "once": "not-rolling",
        "bare": "not-rolling",
    }
    mermaid = wavegen(wavegen_cmd, "explain", "--format", "mermaid", str(FIXTURES / "all-kinds" / "input.yaml")).stdout.decode()
    assert mermaid.startswith("graph LR\n") and '|"a"|' in mermaid


def test_hmac_key_changes_the_hash(wavegen_cmd: list[str], tmp_path: Path) -> None:
    key = tmp_path / "key"
    key.write_text("s3cret-key\n")
    plain = wavegen(wavegen_cmd, "transform", str(HELM / "input.yaml")).stdout
    keyed = wavegen(wavegen_cmd, "transform", "--hmac-key-file", str(key), str(HELM / "input.yaml")).stdout
    from_env = wavegen(wavegen_cmd, "transform", str(HELM / "input.yaml"), env={"WAVEGEN_HMAC_KEY": "s3cret-key"}).stdout
    assert plain != keyed == from_env


COMMANDS = ("transform", "explain", "plan", "manifests", "watch", "krm", "post-render")


def test_help_lists_every_command_with_an_example(wavegen_cmd: list[str]) -> None:
    top = wavegen(wavegen_cmd, "--help")
    assert top.returncode == 0
    assert "--install-completion" in top.stdout.decode() and "--show-completion" in top.stdout.decode()
    listed = top.stdout.decode().split("Commands:")[1]
    assert all(name in listed for name in COMMANDS) and "action" not in listed  # `action` stays hidden
    for name in COMMANDS:
        for flag in ("--help", "-h"):
            done = wavegen(wavegen_cmd, name, flag)
            assert done.returncode == 0 and done.stdout.decode().startswith(f"Usage: wavegen {name} "), (name, flag)
            assert "Example" in done.stdout.decode(), name


def test_no_command_prints_help_and_exits_2(wavegen_cmd: list[str]) -> None:
    done = wavegen(wavegen_cmd)
    assert done.returncode == 2 and done.stdout == b"" and b"Commands:" in done.stderr


def test_version(wavegen_cmd: list[str]) -> None:
    done = wavegen(wavegen_cmd, "--version")
    assert done.returncode == 0 and done.stdout.decode().startswith("wavegen ")


@pytest.mark.parametrize(
    "args",
    [
        ["transform", "--bogus"],
        ["transform", "--prof", "wave"],  # no abbreviations
        ["explain", "--format", "yaml"],
        ["plan", "--format", "xml", "a", "b"],
        ["manifests", "--replicas", "many"],
        ["manifests", "--", "--windw", "3"],
        ["manifests", "--", "--help"],
        ["watch", "--log-level", "loud"],
        ["watch", "--namespaces", "a", "--namespace-selector", "x=y"],
        ["krm", "--missing"],
        ["post-render", "extra"],
        ["nope"],
    ],
)
def test_usage_errors_are_one_line(wavegen_cmd: list[str], args: list[str]) -> None:
    done = wavegen(wavegen_cmd, *args)
    assert done.returncode == 2, done.stderr
    assert done.stdout == b""
    lines = done.stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("wavegen: error: "), lines


def test_completion_script_and_completions(wavegen_cmd: list[str]) -> None:
    # Name the shell: detecting it walks the process tree, which has no shell when the suite runs detached.
    script = wavegen(wavegen_cmd, "--show-completion", "bash")
    assert script.returncode == 0 and b"_WAVEGEN_COMPLETE" in script.stdout
    words = {"_WAVEGEN_COMPLETE": "complete_bash", "COMP_WORDS": "wavegen transform --pro", "COMP_CWORD": "2"}
    done = wavegen(wavegen_cmd, env=words)
    assert done.returncode == 0 and done.stdout.decode().split() == ["--profile"]
