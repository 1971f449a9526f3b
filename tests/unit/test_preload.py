"""The preload file: the transform path compiled at build time, run instead of importlib when it is current, ignored when not."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from wavegen.cli import preload

ROOT = Path(__file__).resolve().parents[2]
SHOP = ROOT / "examples" / "shop.yaml"
# What the launcher imports before main() runs: these come through importlib in any case.
BEFORE_MAIN = {"wavegen", "wavegen.cli", "wavegen.cli.main"}


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """A copy of the package with its preload file, laid out as a wheel installs it."""
    root = tmp_path / "site-packages"
    shutil.copytree(ROOT / "wavegen", root / "wavegen", ignore=shutil.ignore_patterns("__pycache__"))
    preload.write(root)
    return root


def transform(root: Path, *flags: str, probe: str = "", bundle: Path = SHOP) -> tuple[bytes, str, set[str]]:
    """A plain transform of the example by console() from ``root``: stdout, stderr without the import
    times, and the wavegen modules (and ``__future__``) importlib imported (``python -X importtime``)."""
    script = (
        f"import sys; sys.path.insert(0, {str(root)!r})\n"
        "from wavegen.cli.main import console\n"
        f"sys.argv = ['wavegen', 'transform', {str(bundle)!r}]\n"
        f"{probe}\n"
        "console()\n"
    )
    done = subprocess.run([sys.executable, "-S", *flags, "-X", "importtime", "-c", script], capture_output=True, cwd=root)
    assert done.returncode == 0, done.stderr.decode()
    lines = done.stderr.decode().splitlines()
    imported = {line.rsplit("|", 1)[1].strip() for line in lines if line.startswith("import time:")}
    messages = "\n".join(line for line in lines if not line.startswith("import time:"))
    return done.stdout, messages, {name for name in imported if name.startswith("wavegen") or name == "__future__"}


@pytest.fixture(scope="module")
def expected() -> bytes:
    done = subprocess.run([sys.executable, "-m", "wavegen", "transform", str(SHOP)], capture_output=True, cwd=ROOT, check=True)
    return done.stdout


def test_a_current_file_runs_the_whole_transform_path(site: Path, expected: bytes) -> None:
    """Every module a plain transform imports after main() comes from the file (none through importlib:
    TRANSFORM_PATH misses none and lists each after what it imports), and the output is the same.
    Nothing imports ``__future__``: the file's modules hold their future import as a compiler flag."""
    out, _, imported = transform(site)
    assert out == expected and imported == BEFORE_MAIN


def test_a_preloaded_module_is_what_importlib_makes(site: Path) -> None:
    probe = (
        "from wavegen.cli.main import _preload_transform_path\n"
        "_preload_transform_path()\n"
        "import inspect, wavegen.cli, wavegen.stream.engine as engine\n"
        "print(engine.__file__, engine.__spec__.origin, engine.__cached__, engine.run.__code__.co_filename,\n"
        "      type(engine.__loader__).__name__, wavegen.cli.transform is sys.modules['wavegen.cli.transform'],\n"
        "      inspect.getsource(engine.run).startswith('def run('), sep='\\n', file=sys.stderr)\n"
        "raise SystemExit\n"
    )
    _, messages, _ = transform(site, probe=probe)
    source = str(site / "wavegen" / "stream" / "engine.py")
    cached = str(site / "wavegen" / "stream" / "__pycache__" / f"engine.{sys.implementation.cache_tag}.pyc")
    assert messages.splitlines() == [source, source, cached, source, "SourceFileLoader", "True", "True"]


def test_a_transform_with_findings_imports_no_future_either(site: Path, tmp_path: Path) -> None:
    """The report module a finding brings is imported after the file's modules, through importlib."""
    bundle = tmp_path / "missing.yaml"
    bundle.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n"
        "      containers:\n      - name: web\n        envFrom:\n        - configMapRef:\n            name: absent\n"
    )
    _, messages, imported = transform(site, bundle=bundle)
    assert "references ConfigMap default/absent, which is not in the bundle" in messages
    assert "wavegen.render.report" in imported and "__future__" not in imported


def test_every_preloaded_module_has_the_attributes_importlib_gives_it(site: Path) -> None:
    """Module and spec attributes, compared with a module importlib makes from a spec it finds afresh,
    for packages and plain modules alike; annotations stay unevaluated, as the future import asks."""
    probe = (
        "import importlib.machinery, importlib.util\n"
        "from wavegen.cli.main import _preload_transform_path\n"
        "from wavegen.cli.preload import TRANSFORM_PATH\n"
        "_preload_transform_path()\n"
        "def seen(module):\n"
        "    spec = module.__spec__\n"
        "    return (module.__name__, module.__file__, module.__cached__, module.__package__,\n"
        "            getattr(module, '__path__', None), type(module.__loader__), module.__loader__.path,\n"
        "            module.__loader__ is spec.loader, spec.name, spec.origin, spec.cached, spec.parent,\n"
        "            spec.submodule_search_locations, spec.has_location)\n"
        "for name in TRANSFORM_PATH:\n"
        "    parent = sys.modules[name.rpartition('.')[0]]\n"
        "    fresh = importlib.machinery.PathFinder.find_spec(name, parent.__path__)\n"
        "    assert seen(sys.modules[name]) == seen(importlib.util.module_from_spec(fresh)), name\n"
        "    print(name, file=sys.stderr)\n"
        "import wavegen.stream.engine as engine\n"
        "print(all(isinstance(value, str) for value in engine.run.__annotations__.values()), file=sys.stderr)\n"
        "raise SystemExit\n"
    )
    assert transform(site, probe=probe)[1].splitlines() == [*preload.TRANSFORM_PATH, "True"]


def test_a_second_run_in_the_process_does_not_read_the_file_again(site: Path) -> None:
    probe = (
        "import builtins\n"
        "from wavegen.cli.main import _preload_transform_path\n"
        "opened = []\n"
        "real_open = builtins.open\n"
        "builtins.open = lambda file, *args, **kwargs: opened.append(str(file)) or real_open(file, *args, **kwargs)\n"
        "_preload_transform_path()\n"
        "_preload_transform_path()\n"
        "print(sum(name.endswith('.bin') for name in opened), file=sys.stderr)\n"
        "raise SystemExit\n"
    )
    assert transform(site, probe=probe)[1] == "1"


def test_an_edited_source_is_imported_as_written(site: Path, expected: bytes) -> None:
    engine = site / "wavegen" / "stream" / "engine.py"
    engine.write_text(engine.read_text() + "\n__import__('sys').stderr.write('edited\\n')\n")
    out, messages, imported = transform(site)
    assert out == expected and messages == "edited" and set(preload.TRANSFORM_PATH) <= imported


def test_a_source_newer_than_the_file_is_imported(site: Path) -> None:
    later = time.time() + 2 * 60
    os.utime(site / "wavegen" / "core" / "plan.py", (later, later))
    assert set(preload.TRANSFORM_PATH) <= transform(site)[2]


def test_without_asserts_the_file_is_not_used(site: Path, expected: bytes) -> None:
    # compiled with asserts; -O asks for none: importlib imports the -O bytecode
    out, _, imported = transform(site, "-O")
    assert out == expected and set(preload.TRANSFORM_PATH) <= imported


def test_another_interpreters_file_is_not_used(site: Path) -> None:
    file = preload.preload_path(site)
    file.write_bytes(b"\0\0\r\n" + file.read_bytes()[4:])
    assert set(preload.TRANSFORM_PATH) <= transform(site)[2]


@pytest.mark.parametrize("cut", ["header", "index", "code"])
def test_a_file_cut_short_leaves_the_rest_to_importlib(site: Path, cut: str, expected: bytes) -> None:
    """Cut in its header or index, nothing runs from the file; cut in a module's code, the modules
    before that one do; importlib imports the others."""
    file = preload.preload_path(site)
    data = file.read_bytes()
    index_end = 8 + int.from_bytes(data[4:8], "little")
    file.write_bytes(data[: {"header": 6, "index": index_end - 10, "code": (index_end + len(data)) // 2}[cut]])
    out, _, imported = transform(site)
    assert out == expected and "wavegen.cli.transform" in imported
    from_file = set(preload.TRANSFORM_PATH) - imported
    assert len(from_file) > 3 if cut == "code" else not from_file


def test_the_same_sources_give_the_same_file_wherever_they_are(site: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere" / "lib"
    shutil.copytree(site / "wavegen", elsewhere / "wavegen", ignore=shutil.ignore_patterns("*.bin"))
    assert preload.write(elsewhere).read_bytes() == preload.preload_path(site).read_bytes()


def test_the_entry_point_still_offers_what_it_no_longer_imports() -> None:
    from wavegen.cli import commands, main
    from wavegen.errors import EXIT_INTERNAL

    assert main.COMMANDS is commands.COMMANDS and main.EXIT_INTERNAL == EXIT_INTERNAL
    with pytest.raises(AttributeError):
        _ = main.NOT_THERE  # type: ignore[attr-defined]
