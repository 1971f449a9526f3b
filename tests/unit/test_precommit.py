"""wavegen.integrations.precommit: staged files select whole bundles; check never writes, fix does."""

from __future__ import annotations

from pathlib import Path

import pytest

from wavegen.integrations import precommit

CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cfg}}\ndata: {{K: {value}}}\n"
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    spec:
      containers:
        - name: web
          image: registry.example/web:1
          envFrom: [{configMapRef: {name: cfg}}]
"""


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for env in ("prod", "dev"):
        (tmp_path / "rendered" / env / "sub").mkdir(parents=True)
        (tmp_path / "rendered" / env / "cm.yaml").write_text(CONFIGMAP.format(value="a"))
        (tmp_path / "rendered" / env / "sub" / "web.yaml").write_text(DEPLOYMENT)
    (tmp_path / "notes.txt").write_text("x")
    return tmp_path


def test_bundles_default_to_the_files_directory(tree: Path) -> None:
    found = precommit.bundles_for(["rendered/prod/cm.yaml", "notes.txt"], [])
    assert found == {"rendered/prod": ["rendered/prod/cm.yaml"]}


def test_bundle_directories_are_recursive_and_exclusive(tree: Path) -> None:
    found = precommit.bundles_for(["rendered/prod/cm.yaml", "rendered/dev/sub/web.yaml", "other.yaml"], ["rendered/prod"])
    assert found == {"rendered/prod": ["rendered/prod/cm.yaml", "rendered/prod/sub/web.yaml"]}


def test_check_sees_stale_workload_in_an_unstaged_file_and_fix_repairs_it(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bundles = ["--bundle", "rendered/prod", "--bundle", "rendered/dev"]
    assert precommit.main(["--fix", *bundles, "rendered/prod/cm.yaml", "rendered/dev/cm.yaml"]) == 1
    assert precommit.main(["--check", *bundles, "rendered/prod/cm.yaml"]) == 0
    (tree / "rendered" / "prod" / "cm.yaml").write_text(CONFIGMAP.format(value="b"))
    web = tree / "rendered" / "prod" / "sub" / "web.yaml"
    before = web.read_text()
    capsys.readouterr()
    assert precommit.main(["--check", *bundles, "rendered/prod/cm.yaml"]) == 1
    captured = capsys.readouterr()
    assert "stale config hashes in rendered/prod/sub/web.yaml" in captured.err
    assert "+++ b/rendered/prod/sub/web.yaml" in captured.out
    assert web.read_text() == before
    assert precommit.main(["--fix", *bundles, "rendered/prod/cm.yaml"]) == 1
    assert web.read_text() != before
    assert precommit.main(["--check", *bundles, "rendered/prod/cm.yaml", "rendered/dev/sub/web.yaml"]) == 0


def test_errors_fail_without_traceback(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tree / "rendered" / "prod" / "bad.yaml").write_text("a: [\n")
    assert precommit.main(["--check", "rendered/prod/bad.yaml"]) == 1
    assert capsys.readouterr().err.startswith("wavegen: error: rendered/prod/bad.yaml")
