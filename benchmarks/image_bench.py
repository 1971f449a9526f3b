"""Container image benchmark: hack/image.sh cold, warm and after a change; image size; `wavegen krm` in the image vs the host.

Runs in a throw-away buildah storage and image cache (CONTAINERS_STORAGE_CONF, WAVEGEN_IMAGE_CACHE),
so the cold build really is cold and nothing of the developer's storage is touched. Needs root,
buildah and mmdebstrap (hack/image.sh --deps) and network access to Debian and PyPI.

    python benchmarks/image_bench.py [--runs 5] [--out benchmarks/results/container.md]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
IMAGE = "localhost/wavegen:bench"
SOURCES = (
    "Dockerfile",
    ".dockerignore",
    "pyproject.toml",
    "README.md",
    "LICENSE",
    "wavegen",
    "hack/image.sh",
    "hack/versions.py",
)


def sh(argv: Sequence[str], env: Mapping[str, str], stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    proc = subprocess.run(list(argv), input=stdin, capture_output=True, env={**os.environ, **env}, check=False)
    if proc.returncode != 0:
        sys.exit(f"failed: {' '.join(argv)}\n{proc.stdout.decode()[-2000:]}\n{proc.stderr.decode()[-4000:]}")
    return proc


def timed_build(checkout: Path, env: Mapping[str, str]) -> tuple[float, str]:
    t0 = time.monotonic()
    proc = sh(["bash", str(checkout / "hack" / "image.sh")], env)
    return time.monotonic() - t0, proc.stderr.decode()


def copy_sources(dest: Path) -> None:
    for name in SOURCES:
        src, dst = REPO / name, dest / name
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(src, dst)


def resource_list() -> bytes:
    import yaml

    items = [d for d in yaml.safe_load_all((REPO / "examples" / "shop.yaml").read_text()) if d]
    doc = {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items}
    return yaml.safe_dump(doc, sort_keys=False).encode()


def median_seconds(argv: Sequence[str], env: Mapping[str, str], stdin: bytes, runs: int) -> float:
    samples = []
    for _ in range(runs):
        t0 = time.monotonic()
        sh(argv, env, stdin)
        samples.append(time.monotonic() - t0)
    return statistics.median(samples)


def du_mib(path: Path) -> float:
    out = subprocess.run(["du", "-sxb", str(path)], capture_output=True, text=True, check=True).stdout
    return int(out.split()[0]) / 2**20


CHOICES = [
    "How the image got from 307 MB (the single-stage install of 2026-11-23, same Debian base)",
    "to its size now, each step measured with this script:",
    "",
    "- The final stage starts from a base without pip (mmdebstrap: python3, passwd, ca-certificates)",
    "  and copies in a virtualenv made in the build stage: no pip (17 MB), setuptools, wheels or caches.",
    "- `kubernetes` 37 is 126 MB installed because it ships its generated client twice, sync and",
    "  asyncio (`kubernetes/aio`, 68 MB), and requires aiohttp and its helpers for the second. wavegen",
    "  uses the sync client only (`ApiClient.param_serialize`/`call_api`; no older client release",
    "  without the asyncio copy was measured), so the image leaves out",
    "  `kubernetes/aio`, aiohttp, aiohttp-retry, aiohappyeyeballs, aiosignal, frozenlist, multidict,",
    "  propcache and yarl (`pip uninstall` in the build stage).",
    "- The sync client's generated modules are kept as byte code only (`compileall -b`, sources",
    "  removed): what is imported does not change; the sources were about half of the package.",
    "- Every command still runs from the image: `tests/integration/test_container.py` (krm output",
    "  equal to the host's, user 65532, `wavegen watch` adopting and rolling on a real API server).",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per krm timing (median)")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "container.md")
    args = parser.parse_args()
    if subprocess.run(["bash", str(REPO / "hack" / "image.sh"), "--check"], check=False).returncode:
        sys.exit("install the builder first: hack/image.sh --deps")

    work = Path(tempfile.mkdtemp(prefix="wavegen-image-bench-", dir="/var/tmp"))
    conf = work / "storage.conf"
    conf.write_text(f'[storage]\ndriver = "overlay"\ngraphroot = "{work}/storage"\nrunroot = "{work}/run"\n')
    env = {"CONTAINERS_STORAGE_CONF": str(conf), "WAVEGEN_IMAGE_CACHE": str(work / "cache"), "WAVEGEN_IMAGE": IMAGE}
    ctr = ""
    try:
        checkout = work / "src"
        copy_sources(checkout)
        cold, cold_log = timed_build(checkout, env)
        warm, _ = timed_build(checkout, env)
        with open(checkout / "wavegen" / "__init__.py", "a") as f:
            f.write("# benchmark: a source change\n")
        changed, changed_log = timed_build(checkout, env)

        steps = dict(re.findall(r"image: (base rootfs|built \S+) in (\d+)s", cold_log))
        base_seconds = next((v for k, v in steps.items() if k == "base rootfs"), "?")
        build_seconds = next((v for k, v in steps.items() if k.startswith("built")), "?")
        changed_build = (re.findall(r"image: built \S+ in (\d+)s", changed_log) or ["?"])[0]

        images = json.loads(sh(["buildah", "images", "--json"], env).stdout)
        sizes = {name: img["size"] for img in images for name in img.get("names") or []}
        bases = sorted(sizes[n] for n in sizes if n.startswith("localhost/wavegen-python-base:"))

        ctr = sh(["buildah", "from", "--pull=never", "--quiet", IMAGE], env).stdout.decode().strip()
        root = Path(sh(["buildah", "mount", ctr], env).stdout.decode().strip())
        site = next((root / "opt" / "wavegen" / "lib").glob("python3*/site-packages"))
        rootfs_mib = du_mib(root)
        site_mib = du_mib(site)
        packages = sorted(((du_mib(p), p.name) for p in site.iterdir() if p.is_dir() and not p.name.endswith("-info")),
                          reverse=True)[:6]  # fmt: skip
        pyc_mib = sum(p.stat().st_size for p in site.rglob("*.pyc")) / 2**20
        python = sh(["buildah", "run", "--isolation=chroot", ctr, "--", "python3", "--version"], env).stdout.decode().strip()
        no_pip = subprocess.run(
            ["buildah", "run", "--isolation=chroot", ctr, "--", "python3", "-m", "pip", "--version"],
            env={**os.environ, **env}, capture_output=True, check=False,
        ).returncode != 0  # fmt: skip

        stdin = resource_list()
        host_cmd = [str(Path(sys.executable).parent / "wavegen"), "krm"]
        image_cmd = ["buildah", "run", "--isolation=chroot", ctr, "--", "wavegen", "krm"]
        host_s = median_seconds(host_cmd, env, stdin, args.runs)
        image_s = median_seconds(image_cmd, env, stdin, args.runs)
        run_s = median_seconds(["buildah", "run", "--isolation=chroot", ctr, "--", "true"], env, b"", args.runs)
    finally:
        subprocess.run(["buildah", "rm", "--all"], env={**os.environ, **env}, capture_output=True, check=False)
        subprocess.run(["buildah", "rmi", "--all", "--force"], env={**os.environ, **env}, capture_output=True, check=False)
        shutil.rmtree(work, ignore_errors=True)

    lines = [
        "# Container image benchmark",
        "",
        f"Command: `python benchmarks/image_bench.py --runs {args.runs}` (as root; a throw-away buildah storage",
        "and image cache, so the cold build downloads and builds everything).",
        f"Host: {platform.python_implementation()} {platform.python_version()} on {platform.machine()}, "
        f"{os.cpu_count()} CPUs shared with other jobs; base image Debian bookworm ({python}).",
        "",
        "## Build (`hack/image.sh`)",
        "",
        "| run | wall s | of which |",
        "| --- | --- | --- |",
        f"| cold: empty cache and storage | {cold:.0f} | mmdebstrap base {base_seconds} s, buildah build {build_seconds} s |",
        f"| warm: nothing changed | {warm:.1f} | every layer from buildah's cache |",
        f"| a wavegen source file changed | {changed:.0f} | buildah build {changed_build} s (wheels built and installed again) |",
        "",
        "## Size",
        "",
        "| what | size |",
        "| --- | --- |",
        f"| image `{IMAGE}` (`buildah images`) | {sizes[IMAGE]} |",
        f"| bases `localhost/wavegen-python-base` (mmdebstrap): python3; python3 + pip | {' and '.join(bases)} |",
        f"| image root file system (du) | {rootfs_mib:.0f} MiB |",
        f"| of which installed Python packages (`/opt/wavegen/lib/python3*/site-packages`) | {site_mib:.0f} MiB |",
        f"| of which byte code (`*.pyc`) in them | {pyc_mib:.0f} MiB |",
        f"| pip in the final image | {'no' if no_pip else 'YES'} |",
        "",
        "Largest installed packages: " + ", ".join(f"{name} {mib:.0f} MiB" for mib, name in packages) + ".",
        "",
        *CHOICES,
        "",
        "## Start-up: `wavegen krm` on `examples/shop.yaml` as a ResourceList",
        "",
        "| command | median s |",
        "| --- | --- |",
        f"| host (baseline): `wavegen krm` | {host_s:.3f} |",
        f"| image: `buildah run --isolation chroot CTR -- wavegen krm` | {image_s:.3f} |",
        f"| image: `buildah run ... -- true` (buildah's own cost) | {run_s:.3f} |",
        f"| ratio image / host | {image_s / host_s:.2f} |",
        "",
    ]
    args.out.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
