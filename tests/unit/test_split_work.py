"""Reading an input's documents in several processes changes nothing: the same bytes, findings, fallbacks and errors."""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.splitting import Splits, outcome
from wavegen.core.plan import Options
from wavegen.errors import WavegenError
from wavegen.inputs.options import load_config, options_from
from wavegen.stream import engine as engine_module
from wavegen.stream import forked
from wavegen.stream.engine import Engine, InputDocument, run
from wavegen.stream.split import split_stream

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from gen_bundle import crd_bundle, dashboard_list, styled_bundle, workload_bundle  # noqa: E402

from tests.unit.test_fast_path_differential import documents, styled, workloads  # noqa: E402
from tests.unit.test_json_documents import json_streams  # noqa: E402

FIXTURE_FILES = sorted(p for p in (ROOT / "fixtures").rglob("*.yaml") if p.name != "config.yaml")


def _options_for(path: Path) -> Options:
    config = path.parent / "config.yaml"
    try:
        return options_from(load_config(str(config))) if config.is_file() else Options(missing="ignore")
    except WavegenError:
        return Options(missing="ignore")


def test_every_fixture_file_split_in_three(split_everything: Splits) -> None:
    assert len(FIXTURE_FILES) > 40
    for path in FIXTURE_FILES:
        options = _options_for(path)
        data = path.read_bytes()
        assert outcome(data, options, jobs=3) == outcome(data, options, jobs=1), path
    # The guard: fixtures are split in three where their documents allow it (a range a heavier
    # document leaves empty gets no process).
    assert split_everything.parts.count(3) >= 10


@pytest.mark.parametrize(
    "bundle",
    [workload_bundle(40), crd_bundle(12), styled_bundle(60)],
    ids=["workloads", "crds", "styles"],
)
@pytest.mark.parametrize("jobs", [2, 4])
def test_benchmark_bundles_split(split_everything: Splits, bundle: str, jobs: int) -> None:
    data = bundle.encode()
    options = Options(missing="ignore")
    assert outcome(data, options, jobs=jobs) == outcome(data, options, jobs=1)
    assert split_everything.parts == [jobs]


def test_a_bad_document_in_a_childs_part_is_reported_as_in_one_process(split_everything: Splits) -> None:
    good = styled_bundle(30)
    # Last: in the last child's part. A key twice is refused by the reference path only.
    bad = good + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: twice\ndata:\n  a: '1'\n  a: '2'\n"
    one = outcome(bad.encode(), Options(missing="ignore"), jobs=1)
    assert one[0] == "error"
    assert "line" in one[1]
    assert outcome(bad.encode(), Options(missing="ignore"), jobs=3) == one
    assert split_everything.parts == [3]


def test_a_bad_config_source_in_a_childs_part_is_found_as_in_one_process(split_everything: Splits) -> None:
    # The reader keeps what is wrong with a ConfigMap (an exception) among what it read.
    bad = styled_bundle(30) + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: n\ndata:\n  k0: {}\n"
    one = outcome(bad.encode(), Options(missing="ignore"), jobs=1)
    assert any("'data.k0' is not a string" in finding for finding in one[1])
    assert outcome(bad.encode(), Options(missing="ignore"), jobs=2) == one
    assert split_everything.parts == [2]


def test_invalid_yaml_in_a_childs_part_is_reported_as_in_one_process(split_everything: Splits) -> None:
    bad = styled_bundle(30) + "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: s\nstringData:\n  k: [unclosed\n"
    one = outcome(bad.encode(), Options(missing="ignore"), jobs=1)
    assert one[0] == "error"
    assert outcome(bad.encode(), Options(missing="ignore"), jobs=2) == one


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(documents() | styled() | workloads() | json_streams(), min_size=1, max_size=6), st.integers(2, 4))
def test_generated_bundles_split(split_everything: Splits, bundles: list[bytes], jobs: int) -> None:
    data = b"---\n".join(bundle if bundle.endswith(b"\n") else bundle + b"\n" for bundle in bundles)
    options = Options(missing="ignore")
    assert outcome(data, options, jobs=jobs) == outcome(data, options, jobs=1)


def test_small_inputs_are_not_split(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(parts: Sequence[Callable[[], Any]], shared: Sequence[object] = ()) -> list[Any]:
        raise AssertionError("split")

    monkeypatch.setattr(forked, "in_parts", refuse)
    result = run([InputDocument("bundle.yaml", workload_bundle(20).encode())], Options(missing="ignore"), jobs=4)
    assert result.outputs


def test_work_ranges_cover_every_piece_once_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine_module, "SPLIT_WORK_CHARS", 64 * 1024)
    text = styled_bundle(300)
    pieces = split_stream(text)
    engine = Engine(Options(), jobs=3)
    relevant = [engine._relevant(piece) for piece in pieces]
    weight = sum(len(p.text) for p, kind in zip(pieces, relevant, strict=True) if kind is not None)
    assert weight >= 2 * engine_module.SPLIT_WORK_CHARS  # enough for three parts
    ranges = engine._work_ranges(pieces, relevant)
    assert len(ranges) == 3
    assert ranges[0][0] == 0
    assert ranges[-1][1] == len(pieces)
    assert all(stop == start for (_, stop), (start, _) in itertools.pairwise(ranges))
    sizes = [sum(len(p.text) for p in pieces[start:stop]) for start, stop in ranges]
    # This process's part is the largest: the children also pickle what they read.
    assert sizes[0] > sizes[1] > 0
    assert sizes[0] > sizes[2] > 0
    assert max(sizes) < 2 * min(sizes)


def test_one_document_holding_nearly_all_the_work_is_read_in_one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ConfigMapList of dashboards past SPLIT_WORK_CHARS beside a Deployment: another process
    could take only the Deployment, so nothing is forked; with a second such List it is."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("split")

    text = dashboard_list(20)
    pieces = split_stream(text)
    engine = Engine(Options(), jobs=4)
    relevant = [engine._relevant(piece) for piece in pieces]
    assert sum(len(piece.text) for piece in pieces) > engine_module.SPLIT_WORK_CHARS
    assert engine._work_ranges(pieces, relevant) == [(0, len(pieces))]
    twice = split_stream(text + text)
    ranges = engine._work_ranges(twice, [engine._relevant(piece) for piece in twice])
    assert len(ranges) >= 2 and all(start < stop for start, stop in ranges)
    # karmada's shape: a few ConfigMaps of long literals (CRDs as text) whose others hold less
    # than SPLIT_WORK_CHARS: read in one process too
    body = "".join(f"    line {n}: {'x' * 60}\n" for n in range(3000))
    configmaps = "".join(
        f"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{i}\ndata:\n  k: |\n{body}" for i in range(3)
    )
    pieces = split_stream(configmaps)
    weight = sum(len(piece.text) for piece in pieces)
    assert weight - max(len(piece.text) for piece in pieces) < engine_module.SPLIT_WORK_CHARS < weight
    assert engine._work_ranges(pieces, [engine._relevant(piece) for piece in pieces]) == [(0, len(pieces))]
    monkeypatch.setattr(forked, "in_parts", refuse)
    result = run([InputDocument("bundle.yaml", text.encode())], Options(missing="ignore"), jobs=4)
    assert result.changed() == [0]


def test_an_engine_by_default_reads_in_one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine_module, "SPLIT_WORK_CHARS", 64 * 1024)
    text = styled_bundle(300)
    pieces = split_stream(text)
    engine = Engine(Options())
    assert engine._work_ranges(pieces, [engine._relevant(piece) for piece in pieces]) == [(0, len(pieces))]


def test_jobs_left_to_run_read_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(forked.JOBS_ENV, "none")
    monkeypatch.setattr(engine_module, "SPLIT_WORK_CHARS", 0)
    with pytest.raises(WavegenError, match=forked.JOBS_ENV):
        run([InputDocument("bundle.yaml", workload_bundle(5).encode())], Options(missing="ignore"))


def test_configmaps_read_for_their_stored_form_weigh_as_passed_through() -> None:
    """ConfigMaps of long literals (dashboards, as mimir's chart ships them) read for their stored
    form leave their values unmade: they count as documents passed through do. Past
    SPLIT_WORK_CHARS in all beside one small Deployment, nothing is forked for them (a reader
    keeping whole bodies still splits); beside workloads past it, this process takes them all
    and its share of the workloads."""
    body = "".join(f"    line {n}: {'x' * 60}\n" for n in range(1000))
    configmaps = "".join(
        f"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{i}\ndata:\n  k: |\n{body}" for i in range(40)
    )
    pieces = split_stream(configmaps + workload_bundle(1))
    light = sum(len(piece.text) for piece in pieces) // engine_module.PASSED_THROUGH_SHARE
    assert light - max(len(piece.text) for piece in pieces) > engine_module.SPLIT_WORK_CHARS
    planned = Engine(Options(), only_planned=True, jobs=4)
    assert planned._work_ranges(pieces, [planned._relevant(piece) for piece in pieces]) == [(0, len(pieces))]
    whole = Engine(Options(), jobs=4)
    assert len(whole._work_ranges(pieces, [whole._relevant(piece) for piece in pieces])) >= 2
    pieces = split_stream(configmaps + workload_bundle(1500))
    ranges = planned._work_ranges(pieces, [planned._relevant(piece) for piece in pieces])
    assert len(ranges) >= 2 and ranges[0][1] > 40  # (the first 40 pieces are the ConfigMaps)
