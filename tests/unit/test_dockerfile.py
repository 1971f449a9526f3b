"""The Dockerfile's structure: pinned multi-stage build, non-root numeric user, wavegen entrypoint, krm default."""

from __future__ import annotations

import fnmatch
import json
import re
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    joined = re.sub(r"\\\n", " ", "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#")))
    found = []
    for line in joined.splitlines():
        if line.strip():
            word, _, rest = line.strip().partition(" ")
            found.append((word.upper(), rest.strip()))
    return found


def stages(parsed: list[tuple[str, str]]) -> list[list[tuple[str, str]]]:
    result: list[list[tuple[str, str]]] = []
    for item in parsed:
        if item[0] == "FROM":
            result.append([])
        if result:
            result[-1].append(item)
    return result


PARSED = instructions((REPO_ROOT / "Dockerfile").read_text())
ARGS = dict(a.split("=", 1) for kind, a in PARSED if kind == "ARG" and "=" in a)


def base_image(from_args: str) -> str:
    image = from_args.split()[0]
    while "${" in image:  # RUNTIME_IMAGE defaults to ${PYTHON_IMAGE}
        image = re.sub(r"\$\{(\w+)\}", lambda m: ARGS[m.group(1)], image)
    return image


def test_multi_stage_on_pinned_slim_python() -> None:
    all_stages = stages(PARSED)
    assert len(all_stages) >= 2
    for stage in all_stages:
        image = base_image(stage[0][1])
        name, _, tag = image.partition(":")
        assert tag and tag != "latest", image
        assert name == "python" and re.fullmatch(r"3\.1[2-9]-slim(-\w+)?", tag), image
    assert " AS build" in all_stages[0][0][1]


def test_final_stage_runs_wavegen_as_numeric_non_root_user() -> None:
    final = stages(PARSED)[-1]
    users = [args for kind, args in final if kind == "USER"]
    assert users, "the final stage must set USER"
    uid, _, gid = users[-1].partition(":")
    assert uid.isdigit() and int(uid) > 0 and (not gid or (gid.isdigit() and int(gid) > 0)), users[-1]
    kinds = [kind for kind, _ in final]
    assert kinds.index("USER") > max(i for i, k in enumerate(kinds) if k == "RUN"), "USER must come after every RUN"
    entrypoint = [json.loads(args) for kind, args in final if kind == "ENTRYPOINT"]
    command = [json.loads(args) for kind, args in final if kind == "CMD"]
    assert entrypoint == [["wavegen"]]
    # kustomize and kpt start container functions without arguments: the default must be the KRM function
    assert command == [["krm"]]


def test_build_installs_only_wheels_without_cache() -> None:
    text = (REPO_ROOT / "Dockerfile").read_text()
    build = stages(PARSED)[0]
    build_run = " ".join(args for kind, args in build if kind == "RUN")
    assert "--no-index" in build_run and "/wheels/" in build_run
    assert "PIP_NO_CACHE_DIR=1" in text
    assert "apt-get" not in text  # nothing beyond the slim base


def test_final_stage_holds_the_virtualenv_and_no_pip() -> None:
    final = stages(PARSED)[-1]
    copies = [args for kind, args in final if kind == "COPY"]
    assert copies == ["--from=build /opt/wavegen /opt/wavegen"]
    run = " ".join(args for kind, args in final if kind == "RUN")
    assert "pip" not in run and "/wheels" not in run
    assert base_image(final[0][1]) == base_image(stages(PARSED)[0][0][1])  # same python3 at the same path


def test_build_context_holds_what_copy_needs() -> None:
    ignore = [
        line.strip()
        for line in (REPO_ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]

    def included(path: str) -> bool:
        keep = True
        for pattern in ignore:
            negate = pattern.startswith("!")
            pattern = pattern.lstrip("!").rstrip("/")
            if fnmatch.fnmatch(path, pattern) or path.startswith(pattern + "/"):
                keep = negate
        return keep

    for kind, args in PARSED:
        if kind == "COPY" and not args.startswith("--from"):
            *sources, _ = args.split()
            for source in sources:
                assert included(source), f"{source} is excluded by .dockerignore"
                assert (REPO_ROOT / source).exists() or source == "README.md", source
    assert not included("tests/unit/test_dockerfile.py")
    assert not included(".git/config")
