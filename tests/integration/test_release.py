"""hack/release.sh against a real registry (distribution on loopback): push, sign, SBOM, verify, pull back, install the chart."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.integration.test_container import resource_list
from tests.support.controlplane import ControlPlane, free_port
from tests.support.tools import REPO_ROOT, in_ci, run, tool
from wavegen import __version__

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1500)]


@dataclass
class Release:
    registry: str
    env: dict[str, str]
    out: Path
    keys: Path

    @property
    def image(self) -> str:
        return f"{self.registry}/wavegen:{__version__}"

    @property
    def pinned(self) -> str:
        return f"{self.registry}/wavegen@{(self.out / 'image.digest').read_text().strip()}"


def key_pair(directory: Path) -> tuple[Path, Path]:
    directory.mkdir(parents=True)
    run([tool("cosign"), "generate-key-pair", "--output-key-prefix", str(directory / "cosign")], env={"COSIGN_PASSWORD": ""})
    return directory / "cosign.key", directory / "cosign.pub"


def verify(pub: Path, ref: str) -> subprocess.CompletedProcess[str]:
    flags = ["--insecure-ignore-tlog", "--allow-http-registry", "--allow-insecure-registry"]
    return run([tool("cosign"), "verify", "--key", str(pub), *flags, ref], check=False)


@contextlib.contextmanager
def serve_registry(root: Path) -> Iterator[str]:
    """distribution's registry on a loopback port, plain HTTP; yields HOST:PORT."""
    port = free_port()
    config = {
        "version": 0.1,
        "log": {"level": "error"},
        "storage": {"filesystem": {"rootdirectory": str(root / "registry")}},
        "http": {"addr": f"127.0.0.1:{port}"},
    }
    (root / "registry.yml").write_text(yaml.safe_dump(config))
    with open(root / "registry.log", "wb") as log:
        server = subprocess.Popen([tool("registry"), "serve", str(root / "registry.yml")], stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/v2/", timeout=2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        yield f"127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(10)


def needs_root() -> None:
    if os.geteuid() != 0:
        message = "the release builds its image with buildah as root (hack/image.sh)"
        pytest.fail(message) if in_ci() else pytest.skip(message)


def release_env(registry: str, keys: Path, out: Path) -> dict[str, str]:
    """The settings hack/release.sh reads, for a loopback registry and an offline key pair."""
    private, public = key_pair(keys)
    return {
        "WAVEGEN_REGISTRY": registry,
        "WAVEGEN_INSECURE": "1",
        "WAVEGEN_SIGN": "key",
        "WAVEGEN_TLOG": "0",
        "WAVEGEN_COSIGN_KEY": str(private),
        "WAVEGEN_COSIGN_PUB": str(public),
        "COSIGN_PASSWORD": "",
        "WAVEGEN_OUT": str(out),
        "PYTHON": sys.executable,
    }


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Release]:
    needs_root()
    root = tmp_path_factory.mktemp("release")
    with serve_registry(root) as registry:
        env = release_env(registry, root / "release-key", root / "out")
        # cold: both bases and the arm64 image are built under qemu (about 12 minutes here)
        done = run(["bash", str(REPO_ROOT / "hack" / "release.sh"), "all"], env=env, timeout=1500)
        assert "verified" in done.stderr, done.stderr
        yield Release(registry, env, root / "out", root)


def test_release_builds_every_artifact(release: Release) -> None:
    names = sorted(p.name for p in (release.out / "dist").iterdir())
    assert names == [f"wavegen-{__version__}-py3-none-any.whl", f"wavegen-{__version__}.tar.gz"]
    assert (release.out / "chart" / f"wavegen-{__version__}.tgz").is_file()
    sbom = yaml.safe_load((release.out / "sbom.spdx.json").read_text())
    assert sbom["spdxVersion"].startswith("SPDX-") and any(p["name"] == "wavegen" for p in sbom["packages"])


def test_signature_verifies_with_the_release_key_only(release: Release) -> None:
    assert verify(Path(release.env["WAVEGEN_COSIGN_PUB"]), release.pinned).returncode == 0
    _, other = key_pair(release.keys / "another-key")
    refused = verify(other, release.pinned)
    assert refused.returncode != 0 and "failed to verify signature" in refused.stderr, refused.stderr


def test_a_tag_pushed_without_signing_does_not_verify(release: Release) -> None:
    unsigned = f"{release.registry}/wavegen:unsigned"
    ctr = run(["buildah", "from", "--pull=never", "--quiet", release.image]).stdout.strip()
    try:
        run(["buildah", "config", "--label", "wavegen.test/unsigned=1", ctr])
        run(["buildah", "commit", "--quiet", ctr, unsigned])
    finally:
        run(["buildah", "rm", ctr], check=False)
    run(["buildah", "push", "--quiet", "--tls-verify=false", unsigned, f"docker://{unsigned}"])
    refused = verify(Path(release.env["WAVEGEN_COSIGN_PUB"]), unsigned)
    assert refused.returncode != 0, refused.stdout


def test_image_pulled_back_runs_krm_like_the_host(release: Release, wavegen_cmd: list[str]) -> None:
    # What runs next comes from the registry: the local list and its per-platform images go first.
    run(["buildah", "manifest", "rm", release.image])
    run(["buildah", "rmi", "--force", f"{release.image}-amd64", f"{release.image}-arm64"])
    run(["buildah", "pull", "--quiet", "--tls-verify=false", f"docker://{release.image}"])
    stdin = resource_list()
    host = subprocess.run([*wavegen_cmd, "krm"], input=stdin, capture_output=True, text=True, check=True)
    ctr = run(["buildah", "from", "--pull=never", "--quiet", release.image]).stdout.strip()
    try:
        inside = subprocess.run(
            ["buildah", "run", "--isolation=chroot", ctr, "--", "wavegen", "krm"], input=stdin, capture_output=True, text=True
        )
    finally:
        run(["buildah", "rm", ctr], check=False)
    assert inside.returncode == 0, inside.stderr
    assert inside.stdout == host.stdout


def test_the_image_is_one_manifest_list_for_amd64_and_arm64(release: Release, wavegen_cmd: list[str]) -> None:
    accept = "application/vnd.oci.image.index.v1+json, application/vnd.docker.distribution.manifest.list.v2+json"
    request = urllib.request.Request(f"http://{release.registry}/v2/wavegen/manifests/{__version__}", headers={"Accept": accept})
    with urllib.request.urlopen(request, timeout=10) as answer:
        index = json.loads(answer.read())
    platforms = sorted(f"{m['platform']['os']}/{m['platform']['architecture']}" for m in index["manifests"])
    assert platforms == ["linux/amd64", "linux/arm64"]
    # The arm64 image, pulled back and run under qemu-user-static, gives the host's output.
    pulled = run(["buildah", "pull", "--quiet", "--tls-verify=false", "--arch", "arm64", f"docker://{release.image}"])
    image_id = pulled.stdout.strip().splitlines()[-1]
    stdin = resource_list()
    host = subprocess.run([*wavegen_cmd, "krm"], input=stdin, capture_output=True, text=True, check=True)
    ctr = run(["buildah", "from", "--pull=never", "--quiet", image_id]).stdout.strip()
    try:
        arch = run(
            ["buildah", "run", "--isolation=chroot", ctr, "--", "python3", "-c", "import platform; print(platform.machine())"]
        )
        inside = subprocess.run(
            ["buildah", "run", "--isolation=chroot", ctr, "--", "wavegen", "krm"], input=stdin, capture_output=True, text=True
        )
    finally:
        run(["buildah", "rm", ctr], check=False)
    assert arch.stdout.strip() == "aarch64"
    assert inside.returncode == 0, inside.stderr
    assert inside.stdout == host.stdout


def test_chart_installs_from_the_registry(release: Release, control_plane: ControlPlane) -> None:
    cp, ns = control_plane, "wavegen-release"
    helm = [tool("helm3"), "--kubeconfig", str(cp.kubeconfig)]
    chart = f"oci://{release.registry}/charts/wavegen"
    shown = run([*helm, "show", "chart", chart, "--version", __version__, "--plain-http"])
    assert yaml.safe_load(shown.stdout)["appVersion"] == __version__
    repository = f"{release.registry}/wavegen"
    run([*helm, "install", "wavegen", chart, "--version", __version__, "--plain-http", "-n", ns, "--create-namespace",
         "--set", f"image.repository={repository}", "--wait=false"])  # fmt: skip
    try:
        dep = cp.kubectl_json("get", "deployment", "wavegen", "-n", ns)
        assert dep["spec"]["template"]["spec"]["containers"][0]["image"] == f"{repository}:{__version__}"
    finally:
        run([*helm, "uninstall", "wavegen", "-n", ns], check=False)
