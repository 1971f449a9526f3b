"""Directories named on the command line expand to the files pathlib's expand_paths finds, in its order, without pathlib."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from wavegen.inputs import files

# Names whose order differs between string and path-part sorting ("a-b/..." before "a/..." as
# strings, after as parts), suffixes pathlib reads its own way (".yaml" alone has none, "x."
# none), hidden files, a directory named like a manifest, and manifests at several depths.
TREE = [
    "a/x.yaml", "a-b/x.yaml", "a.b/y.yml", "b.json", "c.txt", ".hidden.yaml", ".yaml", "x.yaml.", "x.YAML",
    "deep/er/still/z.yaml", "deep/er/z.yml", "deep/z.yaml", "dir.yaml/inner.yaml", ".git/config.yaml", "Z.yaml",
    "a b/space.yaml", "ünï/cödé.yaml",
]  # fmt: skip


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "manifests"
    for name in TREE:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("a: b\n")
    (root / "linked-dir").symlink_to(root / "deep", target_is_directory=True)  # not entered
    (root / "linked.yaml").symlink_to(root / "b.json")  # a file: taken
    (root / "broken.yaml").symlink_to(root / "nowhere.yaml")  # no file: left out
    return root


def _by_pathlib(raw: str) -> list[str]:
    return [str(path) for path in files.expand_paths([raw]) if path is not None]


SPELLINGS = ["{root}", "{root}/", "{root}/./", "{root}//", ".", "manifests", "./manifests", "manifests/deep"]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_directories_expand_as_pathlib_expands_them(tree: Path, spelling: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tree if spelling == "." else tree.parent)
    raw = spelling.format(root=tree)
    expected = _by_pathlib(raw)
    assert expected, raw
    assert files.expand_names([raw]) == expected


def test_plainly_spelt_directories_take_the_scandir_path(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Guards the test above: its plain spellings are expanded by _manifest_files, not by expand_paths."""

    def no_pathlib(paths: list[str]) -> list[Path | None]:
        raise AssertionError(f"pathlib used for {paths}")

    monkeypatch.chdir(tree.parent)
    monkeypatch.setattr(files, "expand_paths", no_pathlib)
    names = files.expand_names([str(tree), "manifests", "manifests/deep"])
    assert names[0] == f"{tree}/.git/config.yaml"
    assert f"{tree}/a/x.yaml" in names and names.index(f"{tree}/a/x.yaml") < names.index(f"{tree}/a-b/x.yaml")
    assert not any("linked-dir" in name or "broken" in name or name.endswith(("/.yaml", "x.yaml.")) for name in names if name)


@pytest.mark.skipif(os.name != "posix", reason="the scandir path is POSIX only")
def test_a_directory_run_does_not_import_pathlib(tree: Path) -> None:
    # -S: an editable install's start-up hook imports pathlib itself; wavegen's tree goes on sys.path by hand.
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from wavegen.inputs.files import read_bundle; "
        "assert 'pathlib' not in sys.modules; names, _ = read_bundle([sys.argv[2]]); "
        "print(len(names), 'pathlib' in sys.modules)"
    )
    root = str(Path(files.__file__).resolve().parents[2])
    done = subprocess.run([sys.executable, "-S", "-c", code, root, str(tree)], capture_output=True, text=True, check=True)
    assert done.stdout.split() == [str(len(_by_pathlib(str(tree)))), "False"]
