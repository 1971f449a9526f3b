"""The GitHub workflows under real act, on this host: CI's lint job, and the release job against a loopback registry."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.integration.test_release import needs_root, release_env, serve_registry, verify
from tests.support.tools import REPO_ROOT, act_command, act_env, tools_dir
from wavegen import __version__

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1200)]


def act(workflow: str, tmp_path: Path, *extra: str, event: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    home = tmp_path / "home"
    (home / ".config" / "act").mkdir(parents=True, exist_ok=True)
    (home / ".config" / "act" / "actrc").write_text("-P ubuntu-latest=-self-hosted\n")
    args = list(extra)
    if event is not None:
        (tmp_path / "event.json").write_text(json.dumps(event))
        args += ["-e", str(tmp_path / "event.json")]
    env = act_env({"HOME": str(home)}, home, tmp_path / "act-cache")
    return subprocess.run(
        act_command(f".github/workflows/{workflow}", *args), capture_output=True, text=True, cwd=REPO_ROOT,
        env={**os.environ, **env}, timeout=1100,
    )  # fmt: skip


def test_ci_lint_job_runs(tmp_path: Path) -> None:
    done = act("ci.yml", tmp_path, "-j", "lint")
    out = done.stdout + done.stderr
    assert done.returncode == 0 and "Job succeeded" in out, out[-3000:]
    assert "Success - Main One version everywhere" in out


def test_ci_workflow_parses_with_both_jobs(tmp_path: Path) -> None:
    """The test job is `.ci/run`, which runs this very test: act lists it (parsing the workflow) but does not run it.

    (act's dry run, -n, still runs the steps of a job on the host executor.)
    """
    done = act("ci.yml", tmp_path, "-l")
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-3000:]
    listed = {line.split()[2] for line in done.stdout.splitlines()[1:] if len(line.split()) > 2}
    assert {"lint", "test"} <= listed, done.stdout


def release_args(env: dict[str, str]) -> list[str]:
    args = []
    for name in ("WAVEGEN_REGISTRY", "WAVEGEN_INSECURE", "WAVEGEN_SIGN", "WAVEGEN_TLOG"):
        args += ["--var", f"{name}={env[name]}"]
    for name in ("WAVEGEN_COSIGN_KEY", "WAVEGEN_COSIGN_PUB", "COSIGN_PASSWORD", "WAVEGEN_OUT"):
        args += ["--env", f"{name}={env[name]}"]
    return [*args, "--env", f"WAVEGEN_TOOLS_DIR={tools_dir()}"]


def test_release_job_publishes_a_signed_release(tmp_path: Path) -> None:
    needs_root()
    with serve_registry(tmp_path) as registry:
        env = release_env(registry, tmp_path / "keys", tmp_path / "out")
        done = act("release.yml", tmp_path, *release_args(env), event={"ref": f"refs/tags/v{__version__}"})
        out = done.stdout + done.stderr
        assert done.returncode == 0 and "Job succeeded" in out, out[-4000:]
        # Only the steps that need GitHub's credentials or network were skipped.
        for step in ("The tag is the version", "Build, push, sign, attach the SBOM, verify"):
            assert f"Success - Main {step}" in out, step
        digest = (tmp_path / "out" / "image.digest").read_text().strip()
        assert verify(Path(env["WAVEGEN_COSIGN_PUB"]), f"{registry}/wavegen@{digest}").returncode == 0


def test_release_job_refuses_a_tag_that_is_not_the_version(tmp_path: Path) -> None:
    done = act("release.yml", tmp_path, event={"ref": "refs/tags/v99.0.0"})
    out = done.stdout + done.stderr
    assert done.returncode != 0 and "Failure - Main The tag is the version" in out, out[-3000:]
