"""The architecture holds: import-linter's contracts (pyproject.toml) and a lean offline path, checked in a subprocess."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
PLAN_CASE = FIXTURES / "plan" / "configmap-change"
NEVER_OFFLINE = ("kubernetes", "prometheus_client", "wavegen.controller")


def test_import_contracts_are_kept() -> None:
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert lint, "lint-imports not installed (pip install -e '.[test]')"
    done = subprocess.run([lint, "--config", str(ROOT / "pyproject.toml")], capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def test_no_module_imports_itself_through_a_cycle() -> None:
    """Every import edge points down: no module of wavegen reaches back to one that imports it (lazy imports included)."""
    import grimp

    graph = grimp.build_graph("wavegen")
    cycles = sorted(
        f"{importer} -> {imported}"
        for importer in graph.modules
        for imported in graph.find_modules_directly_imported_by(importer)
        if graph.chain_exists(imported=importer, importer=imported)
    )
    assert cycles == []


def imported_by(argv: list[str], tmp_path: Path, *, as_module: bool = False, stdin: Path | None = None) -> set[str]:
    """The modules loaded after running ``wavegen <argv>`` in a fresh interpreter (output to a file, not a pipe).

    As the console script does (``main()``), or with ``as_module`` as ``python -m wavegen`` does;
    ``stdin``: a file its standard input reads.
    """
    run = (
        f"sys.argv = ['wavegen', *{argv!r}]\ntry:\n    runpy.run_module('wavegen', run_name='__main__')\n"
        "except SystemExit as done:\n    rc = done.code\n"
        if as_module
        else f"rc = main({argv!r})\n"
    )
    code = (
        "import json, runpy, sys\n"
        + ("" if as_module else "from wavegen.cli.main import main\n")
        + f"sys.stdout = open({str(tmp_path / 'out')!r}, 'w')\n"
        + run
        + "sys.stdout.close()\nsys.stdout = sys.__stdout__\nprint(json.dumps([rc, sorted(sys.modules)]))\n"
    )
    given = None if stdin is None else stdin.read_text()
    done = subprocess.run([sys.executable, "-c", code], input=given, capture_output=True, text=True, check=True)
    rc, modules = json.loads(done.stdout.splitlines()[-1])
    assert rc == 0, done.stderr
    return set(modules)


def heavy(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


@pytest.mark.parametrize(
    "argv",
    [
        ["transform", str(FIXTURES / "helm-basic" / "input.yaml")],
        ["explain", str(FIXTURES / "helm-basic" / "input.yaml")],
        ["plan", "--format", "text", str(PLAN_CASE / "base.yaml"), str(PLAN_CASE / "head.yaml")],
    ],
    ids=["transform", "explain", "plan-text"],
)
def test_offline_commands_never_import_the_controller(argv: list[str], tmp_path: Path) -> None:
    assert heavy(imported_by(argv, tmp_path), NEVER_OFFLINE) == []


#: Not needed by a plain `wavegen transform`: typer and click (the command line for everything else and for
#: help, completion and usage errors) included, see cli/main.py; nor dataclasses, which imports inspect (with
#: ast, dis, tokenize), see core/record.py; nor typing (about 4 ms), imported for type checkers only.
NOT_FOR_TRANSFORM = (
    "typer", "click", "jinja2", "rich", "pydantic", "ruamel", "urllib3", "http", "tempfile",
    "difflib", "wavegen.cli.app", "wavegen.cli.plan", "wavegen.cli.watch", "wavegen.render.plan_report",
    "dataclasses", "inspect", "typing", "wavegen.stream.fallback",
)  # fmt: skip


@pytest.mark.parametrize("as_module", [False, True], ids=["console-script", "python-m"])
@pytest.mark.parametrize(
    "flags", [[], ["-n", "team", "--profile=wave", "--missing", "warn", "--opt-in"]], ids=["no-flags", "hashing-flags"]
)
def test_transform_imports_no_typer_templates_rich_text_or_pydantic(flags: list[str], as_module: bool, tmp_path: Path) -> None:
    modules = imported_by(["transform", *flags, str(FIXTURES / "helm-basic" / "input.yaml")], tmp_path, as_module=as_module)
    assert heavy(modules, NOT_FOR_TRANSFORM) == []


@pytest.mark.parametrize("flags", [[], ["--namespace", "team", "--profile=wave"]], ids=["no-flags", "hashing-flags"])
def test_post_render_imports_what_transform_imports(flags: list[str], tmp_path: Path) -> None:
    """helm runs the post-renderer on every install: a plain invocation takes transform's path,
    without typer, click or PyYAML (a run through typer took 4.5 times as long on a small chart)."""
    modules = imported_by(["post-render", *flags], tmp_path, stdin=FIXTURES / "helm-basic" / "input.yaml")
    assert heavy(modules, (*NOT_FOR_TRANSFORM, "yaml")) == []
    assert "wavegen.cli.post_render" in modules and (tmp_path / "out").read_text().count("config-hash") >= 1


def test_the_import_check_sees_typer_under_post_render(tmp_path: Path) -> None:
    assert "typer" in imported_by(["post-render", "--help"], tmp_path)  # help is typer's: the probe can fail


@pytest.mark.parametrize("flags", [[], ["--namespace", "team", "--profile=wave"]], ids=["no-flags", "hashing-flags"])
def test_krm_imports_no_typer(flags: list[str], tmp_path: Path) -> None:
    """kustomize runs the exec function on every build: a plain invocation skips typer and click (a
    small list took 0.11 s through typer, 0.06 s without), and a list the subset reader takes, with
    no results to write, PyYAML (0.02 s)."""
    from tests.unit.test_krm import resource_list

    (tmp_path / "list.yaml").write_bytes(resource_list())
    modules = imported_by(["krm", *flags], tmp_path, stdin=tmp_path / "list.yaml")
    assert heavy(modules, (*NOT_FOR_TRANSFORM, "yaml")) == []
    assert "wavegen.cli.krm" in modules and (tmp_path / "out").read_text().count("config-hash") >= 1


def test_the_import_check_sees_typer_under_krm(tmp_path: Path) -> None:
    assert "typer" in imported_by(["krm", "--help"], tmp_path)


@pytest.mark.parametrize("fixture", ["helm-basic", "all-kinds", "missing-key-configmapkeyref", "helm-source-findings"])
def test_a_bundle_the_reader_takes_whole_is_transformed_without_pyyaml(fixture: str, tmp_path: Path) -> None:
    """Documents passed through (and flows only shaped) are checked by the subset reader, findings are
    located from its rows: PyYAML, about a third of a small run, is not imported (see engine.READ_PASSED_THROUGH_CHARS)."""
    modules = imported_by(["transform", str(FIXTURES / fixture / "input.yaml")], tmp_path)
    assert heavy(modules, ("yaml", "hashlib", "_hashlib")) == []  # nor OpenSSL's hashes (see core/hashing.py)


def test_the_import_check_sees_pyyaml(tmp_path: Path) -> None:
    # an anchored scalar is outside the subset: libyaml composes that document, so the probe can fail
    bundle = tmp_path / "anchored-scalar.yaml"
    bundle.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: &x v\n  b: *x\n")
    assert "yaml" in imported_by(["transform", str(bundle)], tmp_path)


def test_anchors_aliases_and_merge_keys_are_transformed_without_ruamel(tmp_path: Path) -> None:
    """The anchors fixture: its Deployment's hash lines are spliced (its template shares nothing
    with an alias), composed once by libyaml to find that (test_fast_path_differential counts
    it), not re-emitted through ruamel.yaml; and read, checked and hashed without PyYAML."""
    modules = imported_by(["transform", str(FIXTURES / "anchors" / "input.yaml")], tmp_path)
    assert "ruamel" not in modules and "yaml" in modules
    plain = imported_by(["transform", str(FIXTURES / "anchors" / "expected.yaml")], tmp_path)
    assert heavy(plain, ("yaml", "ruamel")) == []  # nothing to change: nothing composed


def test_transform_writing_a_file_imports_no_tempfile(tmp_path: Path) -> None:
    # -o and -i write through a temporary file of their own making: tempfile imports shutil and random
    out = tmp_path / "written.yaml"
    modules = imported_by(["transform", "-o", str(out), str(FIXTURES / "helm-basic" / "input.yaml")], tmp_path)
    assert heavy(modules, NOT_FOR_TRANSFORM) == [] and out.read_bytes()


def test_the_import_check_sees_typer(tmp_path: Path) -> None:
    modules = imported_by(["transform", "--help"], tmp_path)
    assert "typer" in modules and "typing" in modules  # help is typer's (which imports typing): the probe can fail


def test_the_import_check_sees_a_heavy_import(tmp_path: Path) -> None:
    assert "jinja2" in imported_by(["manifests"], tmp_path)  # manifests renders templates: the probe can fail


def test_the_import_check_sees_dataclasses(tmp_path: Path) -> None:
    # plan's report keeps its dataclasses: the probe can fail
    argv = ["plan", "--format", "text", str(PLAN_CASE / "base.yaml"), str(PLAN_CASE / "head.yaml")]
    assert "dataclasses" in imported_by(argv, tmp_path)


def test_the_named_tuple_stand_in_builds_what_typing_builds() -> None:
    """core.record.NamedTuple (used at run time instead of typing's) gives the same class for the same statement."""
    import pickle
    import typing

    from wavegen.core import record

    def declare(base: Any) -> Any:
        class Point(base):  # type: ignore[misc]
            """A point."""

            x: int
            label: str = "origin"

            def __str__(self) -> str:
                return f"{self.label}@{self.x}"

        return Point

    ours, theirs = declare(record.NamedTuple), declare(typing.NamedTuple)
    for point_class in (ours, theirs):
        point = point_class(3)
        assert (tuple(point), str(point), point._fields, point._field_defaults) == (
            (3, "origin"),
            "origin@3",
            ("x", "label"),
            {"label": "origin"},
        )
        assert point._replace(x=4) == (4, "origin") and point_class.__doc__ == "A point."
    assert repr(ours(1, "a")).split("(", 1)[1] == repr(theirs(1, "a")).split("(", 1)[1]
    assert list(ours.__annotations__) == list(theirs.__annotations__)  # typing wraps them in ForwardRefs
    from wavegen.core.model import SourceKey

    key = SourceKey("ConfigMap", "ns", "name")
    assert (
        pickle.loads(pickle.dumps(key)) == key
        and str(key) == "ConfigMap/ns/name"
        and key.__class__.__module__ == "wavegen.core.model"
    )


@pytest.mark.parametrize("count", [0, 1, 3, 8, 9, 12])
def test_a_named_tuple_stand_in_takes_its_fields_as_parameters(count: int) -> None:
    """Up to 8 fields, ``__new__`` is a template renamed (not compiled); beyond, compiled as namedtuple
    does. Either way its signature, keywords and defaults are typing's."""
    import inspect
    import typing

    from wavegen.core import record

    names = [f"field_{index}" for index in range(count)]
    defaults = {name: index for index, name in enumerate(names) if index >= count // 2}

    def declare(base: Any) -> Any:
        namespace = {"__annotations__": dict.fromkeys(names, "int"), "__qualname__": "Wide", "__module__": __name__, **defaults}
        return types.new_class("Wide", (base,), exec_body=lambda body: body.update(namespace))

    ours, theirs = declare(record.NamedTuple), declare(typing.NamedTuple)

    def parameters(cls: Any) -> list[tuple[str, Any, Any]]:
        return [(p.name, p.default, p.kind) for p in inspect.signature(cls).parameters.values()]

    assert parameters(ours) == parameters(theirs) and len(parameters(ours)) == count
    assert ours.__new__.__qualname__ == "Wide.__new__" == theirs.__new__.__qualname__
    given = {name: -index for index, name in enumerate(names) if index < count // 2}
    assert tuple(ours(**dict(reversed(given.items())))) == tuple(theirs(**given))
    assert ours._field_defaults == theirs._field_defaults == defaults
    with pytest.raises(TypeError):
        ours(*range(count + 1))


def test_severity_is_what_a_str_enum_was() -> None:
    """Severity (a str with three instances, not an enum.StrEnum: importing enum costs a run 1 ms) behaves as one did."""
    import enum
    import json
    import pickle

    from wavegen.core.model import Severity

    class Reference(enum.StrEnum):
        ERROR = "error"
        WARNING = "warning"
        INFO = "info"

    for ours, theirs in zip((Severity.ERROR, Severity.WARNING, Severity.INFO), Reference, strict=True):
        assert (ours.value, ours.name, str(ours), f"{ours}", repr(ours)) == (
            theirs.value,
            theirs.name,
            str(theirs),
            f"{theirs}",
            repr(theirs).replace("Reference", "Severity"),
        )
        assert ours == theirs.value and hash(ours) == hash(theirs.value) and type(ours.value) is str
        assert Severity(theirs.value) is ours and pickle.loads(pickle.dumps(ours)) is ours
        assert json.dumps({"severity": ours}) == json.dumps({"severity": theirs})
    with pytest.raises(ValueError, match="'fatal' is not a valid Severity"):
        Severity("fatal")
