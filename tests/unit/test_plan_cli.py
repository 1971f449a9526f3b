"""Tests for `wavegen plan`: fixture pairs, formats, exit codes, git revisions, and that Secret values never leak."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest

from tests.unit.plan_support import project
from wavegen.cli.main import main
from wavegen.cli.plan import EXIT_WOULD_ROLL, use_colour

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "fixtures" / "plan"
SCHEMA = json.loads((ROOT / "docs" / "plan.schema.json").read_text())
CASE_NAMES = sorted(p.name for p in CASES.iterdir() if (p / "base.yaml").is_file())

# Every value in fixtures/plan/secret-change, decoded and encoded: none may appear in any output.
SECRET_VALUES = (
    "hunter2-BASE-secret",
    "hunter2-HEAD-secret",
    "aHVudGVyMi1CQVNFLXNlY3JldA==",
    "aHVudGVyMi1IRUFELXNlY3JldA==",
    "tok-HEAD-stringdata-value",
    "payments",
    "cGF5bWVudHM=",
)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["plan", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def case(name: str) -> tuple[str, str]:
    return str(CASES / name / "base.yaml"), str(CASES / name / "head.yaml")


def validate(data: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator(SCHEMA).validate(data)


def test_schema_is_a_valid_json_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_every_case_has_an_expectation() -> None:
    assert len(CASE_NAMES) >= 9
    assert all((CASES / n / "head.yaml").is_file() and (CASES / n / "expected.json").is_file() for n in CASE_NAMES)


@pytest.mark.parametrize("name", CASE_NAMES)
def test_fixture_pair_json(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, *case(name), "--format", "json", "--show-values")
    assert code == 0
    data = json.loads(out)
    validate(data)
    assert project(data) == json.loads((CASES / name / "expected.json").read_text())


@pytest.mark.parametrize("name", CASE_NAMES)
def test_fixture_pair_exit_code(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    expected = json.loads((CASES / name / "expected.json").read_text())
    code, _, _ = run(capsys, *case(name), "--exit-code")
    assert code == (EXIT_WOULD_ROLL if expected["wouldRoll"] else 0)


def test_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert EXIT_WOULD_ROLL == 4
    assert run(capsys, *case("no-change"), "--exit-code")[0] == 0
    assert run(capsys, *case("configmap-change"), "--exit-code")[0] == 4
    assert run(capsys, *case("configmap-change"))[0] == 0


@pytest.mark.parametrize(
    "argv",
    [
        ["only-one.yaml"],
        ["-", "-"],
        ["a", "b", "c"],
        ["--git-head", "HEAD", "a", "b"],
        ["--format", "xml", "a", "b"],
    ],
)
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as raised:
        code = main(["plan", *argv])
        raise SystemExit(code)
    assert raised.value.code == 2


def test_missing_path_is_an_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, str(tmp_path / "nope.yaml"), case("no-change")[1])
    assert code == 1 and "no such file" in err


@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
@pytest.mark.parametrize("show_values", [False, True])
def test_secret_values_never_appear(fmt: str, show_values: bool, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [*case("secret-change"), "--format", fmt] + (["--show-values"] if show_values else [])
    code, out, err = run(capsys, *argv)
    assert code == 0
    assert "password" in out and "api-token" in out  # key names are shown
    for value in SECRET_VALUES[:-2]:
        assert value not in out and value not in err
    # "payments" is also a namespace and name; its encoded form must still never appear.
    assert "cGF5bWVudHM=" not in out


def test_invalid_secret_is_an_error_without_its_value(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    head = tmp_path / "head.yaml"
    head.write_text(Path(case("secret-change")[1]).read_text().replace("aHVudGVyMi1IRUFELXNlY3JldA==", "hunter2-HEAD-secret!"))
    for fmt in ("text", "json"):
        code, out, err = run(capsys, case("secret-change")[0], str(head), "--format", fmt)
        assert code == 1
        assert "not valid base64" in (err if fmt == "text" else out)
        assert "hunter2" not in out + err
        if fmt == "json":
            data = json.loads(out)
            validate(data)
            assert data["complete"] is False and data["findings"][0]["side"] == "head"


def test_show_values_diffs_configmaps(capsys: pytest.CaptureFixture[str]) -> None:
    _, without, _ = run(capsys, *case("rename"))
    assert "worker_processes" not in without
    _, out, _ = run(capsys, *case("rename"), "--show-values")
    assert "-worker_processes 2;" in out and "+worker_processes 4;" in out
    _, md, _ = run(capsys, *case("configmap-change"), "--show-values", "--format", "markdown")
    assert re.search(r"```diff\n(.*\n)*-info\n\+debug\n", md)
    assert "No newline" not in md


def test_text_names_rename_and_invisible_keys(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, *case("rename"))
    assert "web-config-5tb2k8c9f4 → web-config-g7hm4d2k8b (renamed): changed nginx.conf" in out
    _, out, _ = run(capsys, *case("items-invisible"))
    roll, hold = out.split("Will not roll")
    assert "Deployment/default/all-keys" in roll and "Deployment/default/web" in hold
    assert "changed keys it cannot see: worker.conf" in hold
    assert "\033[" not in out  # not a TTY: no colour


def _table_rows(markdown: str, heading: str) -> list[list[str]]:
    section = markdown.split(f"### {heading}\n", 1)[1].split("\n#", 1)[0]
    lines = section.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| "))
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("| ")), len(lines))
    rows = lines[start:end]  # the first table under the heading
    header, separator, *body = rows
    assert set(separator.replace("|", "").split()) == {"---"}
    width = header.count(" | ") + 1
    cells = [re.split(r"(?<!\\)\|", row.strip("|")) for row in body]
    assert all(len(c) == width for c in cells)
    return [[c.strip() for c in row] for row in cells]


def test_markdown_structure(capsys: pytest.CaptureFixture[str]) -> None:
    code, md, _ = run(capsys, *case("items-invisible"), "--format", "markdown")
    assert code == 0
    assert md.startswith("## wavegen restart plan\n")
    rolling = _table_rows(md, "Will roll")
    assert [r[0] for r in rolling] == ["Deployment `default/all-keys`"]
    assert "`worker.conf`" in rolling[0][1] and "ConfigMap `shared`" in rolling[0][1]
    held = _table_rows(md, "Will not roll although their config changed")
    assert sorted(r[0] for r in held) == ["Deployment `default/web`", "StatefulSet `default/logger`"]
    assert all("not visible" in r[2] for r in held)
    graph = re.search(r"```mermaid\n(.*?)```", md, re.S)
    assert graph is not None
    lines = graph.group(1).splitlines()
    assert lines[0] == "graph LR"
    edge = r'\s*s_ConfigMap_default_shared -->\|"worker.conf"\| w_Deployment_default_all_keys'
    assert any(re.fullmatch(edge, line) for line in lines)
    assert any("-.->" in line and "w_Deployment_default_web" in line for line in lines)


def test_markdown_rename_graph_and_added_removed(capsys: pytest.CaptureFixture[str]) -> None:
    _, md, _ = run(capsys, *case("rename"), "--format", "markdown")
    assert 's_ConfigMap_default_web_config_5tb2k8c9f4 -.->|"renamed"| s_ConfigMap_default_web_config_g7hm4d2k8b' in md
    _, md, _ = run(capsys, *case("added-removed"), "--format", "markdown")
    rows = _table_rows(md, "Added and removed workloads")
    assert ["CronJob `default/reports`", "added", "ConfigMap `reports-config`"] in rows
    assert ["Deployment `default/legacy`", "removed", "ConfigMap `api-config`"] in rows
    assert "```mermaid" not in md  # nothing affected: no graph


def test_markdown_no_change(capsys: pytest.CaptureFixture[str]) -> None:
    _, md, _ = run(capsys, *case("no-change"), "--format", "markdown")
    assert "**No workload will roll**" in md and "|" not in md


def test_stdin_as_one_side(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    base, head = case("optional-appears")
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(Path(head).read_bytes())))
    code, out, _ = run(capsys, base, "-", "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["head"]["label"] == "<stdin>" and data["summary"]["rolling"] == 1


def test_directories_as_sides(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    for side in ("base", "head"):
        (tmp_path / side).mkdir()
        shutil.copy(CASES / "configmap-change" / f"{side}.yaml", tmp_path / side / "all.yaml")
    code, out, _ = run(capsys, str(tmp_path / "base"), str(tmp_path / "head"), "--exit-code")
    assert code == 4 and "Deployment/shop/api" in out


def test_colour_only_on_a_tty_without_no_color() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert use_colour(Tty(), {}) is True
    assert use_colour(Tty(), {"NO_COLOR": "1"}) is False
    assert use_colour(io.StringIO(), {}) is False


def _git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env).stdout


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_git_revisions(capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "repo"
    (repo / "rendered").mkdir(parents=True)
    (repo / "README.md").write_text("not a manifest\n")
    _git(repo, "init", "-q")
    shutil.copy(CASES / "items-invisible" / "base.yaml", repo / "rendered" / "app.yaml")
    shutil.copy(CASES / "added-removed" / "base.yaml", repo / "rendered" / "gone.yaml")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "base")
    shutil.copy(CASES / "items-invisible" / "head.yaml", repo / "rendered" / "app.yaml")
    _git(repo, "rm", "-q", "rendered/gone.yaml")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "head")
    # The working tree differs from both commits: an uncommitted ConfigMap change.
    working = (repo / "rendered" / "app.yaml").read_text().replace("LOG_LEVEL: info", "LOG_LEVEL: debug")
    (repo / "rendered" / "app.yaml").write_text(working)
    status_before = _git(repo, "status", "--porcelain")

    monkeypatch.chdir(repo / "rendered")
    code, out, _ = run(capsys, "--git-base", "HEAD~1", "--git-head", "HEAD", "--format", "json", "--exit-code")
    assert code == 4
    data = json.loads(out)
    validate(data)
    assert data["base"]["files"] == ["HEAD~1:rendered/app.yaml", "HEAD~1:rendered/gone.yaml"]
    assert data["head"]["files"] == ["HEAD:rendered/app.yaml"]
    assert [w["name"] for w in data["rolling"]] == ["all-keys"]
    assert [w["name"] for w in data["removed"]] == ["api", "legacy"]

    # Without --git-head the head side is the working tree: the logger now rolls too.
    code, out, _ = run(capsys, "--git-base", "HEAD", "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["head"]["label"] == "working tree"
    assert sorted(w["name"] for w in data["rolling"]) == ["all-keys", "logger"]

    # Explicit paths, from outside the repository.
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "--git-base", "HEAD~1", "--git-head", "HEAD", str(repo / "rendered" / "app.yaml"))
    assert code == 0 and "Deployment/default/all-keys" in out and "Removed" not in out

    assert _git(repo, "status", "--porcelain") == status_before
    assert (repo / "rendered" / "app.yaml").read_text() == working


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_git_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "a.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "one")
    code, _, err = run(capsys, "--git-base", "no-such-rev", str(repo))
    assert code == 2 and "unknown git revision" in err
    code, _, err = run(capsys, "--git-base=--upload-pack=x", str(repo))
    assert code == 2 and "not a revision" in err
    outside = tmp_path / "outside"
    outside.mkdir()
    code, _, err = run(capsys, "--git-base", "HEAD", str(outside))
    assert code == 2 and "not inside a git repository" in err
    code, _, err = run(capsys, "--git-base", "HEAD", "-")
    assert code == 2
