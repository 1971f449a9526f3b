"""wavegen as an exec KRM function under the real kustomize: hashes equal what transform computes on the output."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.adapters_support import (
    KRM_ENTRY,
    KUSTOMIZE_FIXTURES,
    copy_kustomize_tree,
    docs_of,
    kustomize_build,
    one,
    template_hash,
    wavegen,
    wavegen_bin_dir,
)

pytestmark = pytest.mark.integration


def assert_hash_is_what_transform_computes(output: str, namespace: str = "default") -> str:
    """The built bundle is already what ``wavegen transform`` would write: same bytes, so same hash."""
    check = wavegen("transform", "--check", "-n", namespace, "-", input=output, check=False)
    assert check.returncode == 0, check.stdout + check.stderr
    digest = template_hash(one(docs_of(output), "Deployment"))
    assert digest and len(digest) == 64
    return digest


def test_base_with_generators_and_local_config(tmp_path: Path) -> None:
    out = kustomize_build(KUSTOMIZE_FIXTURES / "wavegen-base", tmp_path).stdout
    docs = docs_of(out)
    names = {d["metadata"]["name"] for d in docs if d["kind"] == "ConfigMap"}
    assert "app-static" in names  # disableNameSuffixHash
    assert any(n.startswith("app-env-") for n in names)  # hash-suffixed by the generator
    assert "build-settings" not in names  # local-config: dropped by kustomize, never hashed
    deployment = one(docs, "Deployment")
    annotations = deployment["spec"]["template"]["metadata"]["annotations"]
    assert annotations["wavegen.io/unhashed-refs"] == "ConfigMap/build-settings"
    leftovers = [k for d in docs for k in (d["metadata"].get("annotations") or {}) if "config.kubernetes.io/" in k]
    assert not leftovers
    assert_hash_is_what_transform_computes(out)


def test_overlay_with_namespace_prefix_and_merged_generator(tmp_path: Path) -> None:
    out = kustomize_build(KUSTOMIZE_FIXTURES / "wavegen-overlay", tmp_path).stdout
    docs = docs_of(out)
    deployment = one(docs, "Deployment")
    assert deployment["metadata"]["namespace"] == "wavegen-prod"
    assert deployment["metadata"]["name"] == "prod-web"
    env_from = deployment["spec"]["template"]["spec"]["containers"][0]["envFrom"]
    assert env_from[0]["configMapRef"]["name"].startswith("prod-app-env-")
    base = kustomize_build(KUSTOMIZE_FIXTURES / "wavegen-base", tmp_path).stdout
    overlay_hash = assert_hash_is_what_transform_computes(out)
    assert overlay_hash != template_hash(one(docs_of(base), "Deployment"))


@pytest.mark.parametrize(
    ("literal", "replacement"),
    [("FEATURE_X=on", "FEATURE_X=off"), ("COLOUR=blue", "COLOUR=green")],
    ids=["hash-suffixed", "no-suffix"],
)
def test_changing_a_generator_literal_changes_the_hash(tmp_path: Path, literal: str, replacement: str) -> None:
    tree = copy_kustomize_tree(tmp_path)
    before = kustomize_build(tree / "wavegen-overlay", tmp_path).stdout
    kustomization = tree / "wavegen-base" / "kustomization.yaml"
    text = kustomization.read_text()
    assert literal in text
    kustomization.write_text(text.replace(literal, replacement))
    after = kustomize_build(tree / "wavegen-overlay", tmp_path).stdout
    assert template_hash(one(docs_of(before), "Deployment")) != template_hash(one(docs_of(after), "Deployment"))
    assert_hash_is_what_transform_computes(after)


def test_exec_path_with_args_and_missing_error(tmp_path: Path) -> None:
    """``exec: {path: /path/to/wavegen, args: [krm, ...]}``; an error result fails the build."""
    work = tmp_path / "k"
    work.mkdir()
    (work / "deployment.yaml").write_text((KUSTOMIZE_FIXTURES / "wavegen-base" / "deployment.yaml").read_text())
    (work / "configmap.yaml").write_text((KUSTOMIZE_FIXTURES / "wavegen-base" / "configmap.yaml").read_text())
    wavegen_path = wavegen_bin_dir(tmp_path) / "wavegen"
    (work / "wavegen.yaml").write_text(
        "apiVersion: wavegen.io/v1alpha1\nkind: ConfigHash\nmetadata:\n  name: wavegen\n  annotations:\n"
        f"    config.kubernetes.io/function: |\n      exec:\n        path: {wavegen_path}\n        args: [krm]\n"
        "spec:\n  missing: error\n"
    )
    (work / "kustomization.yaml").write_text("resources: [configmap.yaml, deployment.yaml]\ntransformers: [wavegen.yaml]\n")
    failed = kustomize_build(work, tmp_path, check=False)
    assert failed.returncode != 0
    assert "app-secret" in failed.stderr  # the Secret is not in this bundle
    # --missing on the exec args overrides functionConfig
    config = (work / "wavegen.yaml").read_text()
    (work / "wavegen.yaml").write_text(config.replace("args: [krm]", "args: [krm, --missing=ignore]"))
    ok = kustomize_build(work, tmp_path)
    assert_hash_is_what_transform_computes(ok.stdout)


def test_entry_script_is_executable() -> None:
    assert KRM_ENTRY.stat().st_mode & 0o111
