"""Install it like a user: build the wheel, install it with no extras into a fresh virtualenv, run every command.

The virtualenv and the wheel live in this run's tmp directory only; dependencies come from PyPI through
the shared pip cache (``PIP_CACHE_DIR``, default ``~/.cache/pip``), so a warm cache makes this fast.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
from collections.abc import Sequence
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SHOP = ROOT / "examples" / "shop.yaml"
HASH = "wavegen.io/config-hash"
BUILD_LEFTOVERS = (".git", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis", ".venv")
pytestmark = pytest.mark.integration


class Installed:
    """A fresh virtualenv holding only the wavegen wheel and its declared dependencies."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.bin = root / "venv" / "bin"
        self.work = root / "work"
        self.work.mkdir()

    def run(
        self, argv: Sequence[str], stdin: bytes = b"", env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        # No PYTHONPATH and a directory outside the repository: only the installed copy can be imported.
        clean = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "WAVEGEN_", "GITHUB_"))}
        done = subprocess.run(
            [*argv], input=stdin, capture_output=True, cwd=self.work, env={**clean, **(env or {})}, timeout=120, check=False
        )
        for stream in (done.stdout, done.stderr):
            assert b"internal error" not in stream and b"Traceback" not in stream, (argv, done.stderr.decode())
        return done

    def wavegen(self, *args: str, stdin: bytes = b"", env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
        return self.run([str(self.bin / "wavegen"), *args], stdin, env)


def _pip(python: Path, *args: str, cwd: Path) -> None:
    env = {**os.environ, "PIP_CACHE_DIR": os.environ.get("PIP_CACHE_DIR", str(Path.home() / ".cache" / "pip"))}
    env.pop("PIP_REQUIRE_VIRTUALENV", None)
    done = subprocess.run(
        [str(python), "-m", "pip", "--disable-pip-version-check", *args],
        capture_output=True, text=True, cwd=cwd, env=env, timeout=900, check=False,
    )  # fmt: skip
    assert done.returncode == 0, f"pip {' '.join(args)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    root = tmp_path_factory.mktemp("wheel")
    dist = root / "dist"
    # Build from a copy: setuptools writes build/ into the source tree, and a stale build/lib would ship deleted files.
    source = root / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*BUILD_LEFTOVERS))
    _pip(Path(sys.executable), "wheel", "--no-deps", "--wheel-dir", str(dist), str(source), cwd=root)
    wheels = sorted(dist.glob("wavegen-*.whl"))
    assert len(wheels) == 1, wheels
    venv.EnvBuilder(with_pip=True, clear=True).create(root / "venv")
    target = Installed(root)
    # The pip users install with today: pip 25.0 and later write a console script that imports no re.
    _pip(target.bin / "python", "install", "--upgrade", "pip>=25", cwd=root)
    _pip(target.bin / "python", "install", str(wheels[0]), cwd=root)  # no extras: what `pip install wavegen` gets
    return target


def test_installs_without_extras_and_reports_its_version(installed: Installed) -> None:
    done = installed.wavegen("--version")
    assert done.returncode == 0 and done.stdout.decode().strip() == "wavegen 0.1.0"
    listed = installed.run([str(installed.bin / "python"), "-m", "pip", "list", "--format", "json"]).stdout
    names = {p["name"].lower().replace("_", "-") for p in json.loads(listed)}
    assert {"jinja2", "typer", "kubernetes", "prometheus-client"} <= names
    assert not {"pytest", "hypothesis", "import-linter"} & names  # the test extra is not installed
    imported = installed.run([str(installed.bin / "python"), "-c", "import wavegen, sys; print(wavegen.__file__)"]).stdout
    assert str(installed.root / "venv") in imported.decode()


def test_help_of_every_command(installed: Installed) -> None:
    top = installed.wavegen("--help")
    assert top.returncode == 0
    for command in ("transform", "explain", "plan", "manifests", "watch", "krm", "post-render"):
        assert command in top.stdout.decode()
        done = installed.wavegen(command, "--help")
        assert done.returncode == 0 and f"wavegen {command}" in done.stdout.decode(), command
        assert "Example" in done.stdout.decode(), command
    assert installed.wavegen().returncode == 2


def test_transform_to_stdout_and_check(installed: Installed) -> None:
    done = installed.wavegen("transform", str(SHOP))
    assert done.returncode == 0, done.stderr
    assert HASH in done.stdout.decode()
    stale = installed.wavegen("transform", "--check", str(SHOP))
    assert stale.returncode == 1 and b"stale" in stale.stderr
    fresh = installed.work / "fresh.yaml"
    fresh.write_bytes(done.stdout)
    assert installed.wavegen("transform", "--check", str(fresh)).returncode == 0
    piped = installed.wavegen("transform", stdin=SHOP.read_bytes())
    assert piped.returncode == 0 and piped.stdout == done.stdout


def _imported(installed: Installed, *args: str) -> set[str]:
    """The modules the installed console script loads for ``wavegen ARGS`` (from ``python -X importtime``)."""
    done = installed.run([str(installed.bin / "python"), "-X", "importtime", str(installed.bin / "wavegen"), *args])
    lines = [line for line in done.stderr.decode().splitlines() if line.startswith("import time:")]
    return {line.rsplit("|", 1)[1].strip() for line in lines[1:]}


def test_console_script_transform_skips_typer(installed: Installed) -> None:
    plain = _imported(installed, "transform", "-n", "shop", str(SHOP))
    assert "wavegen.cli.main" in plain and "_sre" in plain  # the stream layer's engine: the probe sees the run
    assert not {m for m in plain if m.split(".")[0] in ("typer", "click", "pathlib", "jinja2", "ruamel")}
    # the example bundle is read whole by the subset reader: neither PyYAML nor OpenSSL's hashes load
    assert not {m for m in plain if m.split(".")[0] in ("yaml", "_yaml", "hashlib", "_hashlib", "tempfile")}
    assert "typer" in _imported(installed, "transform", "--help")  # help is typer's: the probe can fail


def test_console_script_transform_imports_no_re(installed: Installed) -> None:
    """pip's console script and a plain transform of the example load none of re and the modules it
    brings (about 4 ms of a small run): the stream layer's patterns come precompiled (stream/patterns.py)."""
    assert "import re" not in (installed.bin / "wavegen").read_text()
    plain = _imported(installed, "transform", str(SHOP))
    assert "_sre" in plain  # what wavegen.stream.patterns imports
    assert not {"re", "enum", "collections", "functools", "types", "yaml"} & plain
    assert "re" in _imported(installed, "explain", "--format", "mermaid", str(SHOP))  # the probe can fail


def test_the_wheel_ships_the_transform_path_compiled_and_the_command_runs_it(installed: Installed) -> None:
    """The wheel's preload file (written at build time: wavegen/cli/preload.py) is current once installed:
    a plain transform imports none of the transform path through importlib (-X importtime lists only
    what main() needs first), and gives what the same install gives without the file."""
    from tests.unit.test_preload import BEFORE_MAIN
    from wavegen.cli import preload

    site = next((installed.root / "venv" / "lib").glob("python3*/site-packages"))
    shipped = preload.preload_path(site)
    assert shipped.is_file()
    plain = _imported(installed, "transform", str(SHOP))
    assert {m for m in plain if m.startswith("wavegen")} == BEFORE_MAIN
    with_file = installed.wavegen("transform", str(SHOP)).stdout
    hidden = shipped.with_suffix(".hidden")
    shipped.rename(hidden)
    try:
        assert set(preload.TRANSFORM_PATH) <= _imported(installed, "transform", str(SHOP))  # the probe can fail
        assert installed.wavegen("transform", str(SHOP)).stdout == with_file
    finally:
        hidden.rename(shipped)


@pytest.mark.parametrize("fmt", ["text", "json", "mermaid"])
def test_explain_formats(installed: Installed, fmt: str) -> None:
    done = installed.wavegen("explain", "--format", fmt, str(SHOP))
    assert done.returncode == 0, done.stderr
    text = done.stdout.decode()
    assert "shop" in text
    if fmt == "json":
        assert json.loads(text)["workloads"]
    if fmt == "mermaid":
        assert text.startswith("graph LR")


@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_plan_formats(installed: Installed, fmt: str) -> None:
    head = installed.work / "head.yaml"
    head.write_text(SHOP.read_text().replace("LOG_LEVEL: 'info'", "LOG_LEVEL: 'debug'"))
    done = installed.wavegen("plan", "--format", fmt, "--exit-code", str(SHOP), str(head))
    assert done.returncode == 4, done.stderr  # something would roll
    if fmt == "json":
        assert json.loads(done.stdout)["wouldRoll"] is True
    assert "LOG_LEVEL" in done.stdout.decode()
    assert installed.wavegen("plan", "--format", fmt, "--exit-code", str(SHOP), str(SHOP)).returncode == 0


def test_manifests(installed: Installed) -> None:
    done = installed.wavegen("manifests", "--scope", "namespace", "--", "--window", "5")
    assert done.returncode == 0, done.stderr
    kinds = {d["kind"] for d in yaml.safe_load_all(done.stdout) if d}
    assert {"ServiceAccount", "Role", "Deployment"} <= kinds
    bad = installed.wavegen("manifests", "--", "--windw", "5")
    assert bad.returncode == 2 and bad.stderr.decode().count("\n") == 1


def test_krm_function(installed: Installed) -> None:
    items = [d for d in yaml.safe_load_all(SHOP.read_text()) if d]
    resource_list = {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items}
    done = installed.wavegen("krm", stdin=yaml.safe_dump(resource_list).encode())
    assert done.returncode == 0, done.stderr
    out = yaml.safe_load(done.stdout)
    deployment = next(i for i in out["items"] if i["kind"] == "Deployment")
    assert HASH in deployment["spec"]["template"]["metadata"]["annotations"]


def test_post_render(installed: Installed) -> None:
    done = installed.wavegen("post-render", "--namespace", "shop", stdin=SHOP.read_bytes())
    assert done.returncode == 0, done.stderr
    assert HASH in done.stdout.decode()


def test_watch_help_and_usage_errors(installed: Installed) -> None:
    done = installed.wavegen("watch", "--help")
    assert done.returncode == 0 and "--kubeconfig" in done.stdout.decode()
    for argv in (["transform", "--bogus"], ["nope"], ["watch", "--log-level", "loud"]):
        bad = installed.wavegen(*argv)
        assert bad.returncode == 2, argv
        assert bad.stderr.decode().startswith("wavegen: error: ") and bad.stderr.decode().count("\n") == 1, bad.stderr


def test_pre_commit_and_action_entry_points(installed: Installed) -> None:
    bundle = installed.work / "bundle"
    bundle.mkdir()
    (bundle / "shop.yaml").write_bytes(SHOP.read_bytes())
    python = str(installed.bin / "python")
    check = installed.run([python, "-m", "wavegen.integrations.precommit", "--check", "bundle/shop.yaml"])
    assert check.returncode == 1 and b"stale config hashes" in check.stderr
    outputs = installed.work / "outputs"
    outputs.write_text("")
    env = {"WAVEGEN_INPUT_PATHS": "bundle", "WAVEGEN_INPUT_MODE": "write", "GITHUB_OUTPUT": str(outputs)}
    action = installed.run([python, "-m", "wavegen.integrations.action"], env=env)
    assert action.returncode == 0, action.stdout
    assert "changed<<" in outputs.read_text() and HASH in (bundle / "shop.yaml").read_text()


def test_a_large_bundle_read_in_two_processes_gives_the_same_bytes(installed: Installed) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from gen_bundle import styled_bundle

    bundle = installed.work / "large.yaml"
    bundle.write_text(styled_bundle(1600))
    assert bundle.stat().st_size > 1_300_000  # past the size that is split (SPLIT_WORK_CHARS)
    one, two = (installed.wavegen("transform", str(bundle), env={"WAVEGEN_JOBS": jobs}) for jobs in ("1", "2"))
    assert one.returncode == two.returncode == 0, two.stderr
    assert one.stdout == two.stdout and one.stderr == two.stderr
    assert HASH in two.stdout.decode()
    # The guard: the second run forked (pickling its results back), the first did not.
    python = str(installed.bin / "python")
    for jobs, forks in (("1", False), ("2", True)):
        done = installed.run(
            [python, "-X", "importtime", str(installed.bin / "wavegen"), "transform", str(bundle)], env={"WAVEGEN_JOBS": jobs}
        )
        assert ("| pickle\n" in done.stderr.decode()) is forks, jobs
    bad = installed.wavegen("transform", str(bundle), env={"WAVEGEN_JOBS": "many"})
    assert bad.returncode == 2 and b"WAVEGEN_JOBS" in bad.stderr and not bad.stdout
