"""Fetches Argo CD's manifests/install.yaml through the Go module proxy and caches it under ~/.cache."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

MODULE = "github.com/argoproj/argo-cd/v3"
VERSION = "v3.6.1"
CACHE = Path.home() / ".cache" / "wavegen-bench"


def install_yaml(version: str = VERSION) -> Path:
    """Path of the cached install.yaml, downloading the module zip once (`go mod download`)."""
    target = CACHE / f"argocd-{version}-install.yaml"
    if target.exists():
        return target
    go = shutil.which("go") or "/usr/local/go/bin/go"
    env = {**os.environ, "GOMODCACHE": str(CACHE / "gomod"), "GOFLAGS": "-mod=mod", "GO111MODULE": "on"}
    with tempfile.TemporaryDirectory() as work:
        subprocess.run([go, "mod", "init", "wavegen-bench"], cwd=work, env=env, check=True, capture_output=True)
        done = subprocess.run(
            [go, "mod", "download", "-json", f"{MODULE}@{version}"], cwd=work, env=env, capture_output=True, text=True
        )
    # The zip is what we need; "Error" may only say this Go is too old to build the module.
    info = json.loads(done.stdout or "{}")
    archive = info.get("Zip")
    if not archive or not Path(archive).exists():
        raise SystemExit(f"go mod download {MODULE}@{version} failed: {info.get('Error') or done.stderr.strip()}")
    with zipfile.ZipFile(archive) as zipped:
        data = zipped.read(f"{MODULE}@{version}/manifests/install.yaml")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return target


if __name__ == "__main__":
    print(install_yaml(sys.argv[1] if len(sys.argv) > 1 else VERSION))
