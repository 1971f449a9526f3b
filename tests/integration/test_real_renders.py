"""The subset reader against libyaml on real renders: public charts and manifests of benchmarks/corpus.py."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.splitting import Splits, outcome
from tests.support.tools import REPO_ROOT, in_ci, tool
from tests.unit.test_fast_path_differential import assert_same
from wavegen.core.plan import Options
from wavegen.stream import fastparse, nodes
from wavegen.stream.engine import InputDocument, run
from wavegen.stream.split import split_stream

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]

sys.path.insert(0, str(REPO_ROOT / "benchmarks"))
import corpus  # noqa: E402


def real_renders() -> dict[str, Path]:
    """The corpus' charts (rendered by the pinned helm) and manifests, built through the Go module proxy once."""
    tool("helm3")  # a missing helm skips here, fails under CI
    try:
        renders = {chart.name: corpus.render_chart(chart) for chart in (*corpus.CHARTS, *corpus.OTHER_CHARTS)}
        renders.update({manifest.name: corpus.copy_manifest(manifest) for manifest in corpus.MANIFESTS})
    except (SystemExit, OSError) as err:
        message = f"the benchmark corpus could not be built: {err}"
        pytest.fail(message) if in_ci() else pytest.skip(message)
    return renders


def test_both_paths_agree_on_every_real_render() -> None:
    for name, path in real_renders().items():
        try:
            assert_same(path.read_bytes())
        except AssertionError as err:
            raise AssertionError(f"{name}: the fast path and libyaml disagree") from err


def test_a_render_as_one_list_is_edited_and_located_as_libyaml_places_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Mimir's render as one ``kind: List`` (benchmarks/corpus.py's ``as_list``): its workloads'
    edits and its findings' lines equal libyaml's, and come from the reader's rows (no composing)."""
    monkeypatch.setattr(corpus, "CORPUS", tmp_path)
    data = corpus.as_list(real_renders()["mimir-dashboards"], "listed").read_bytes()
    # Its runtime ConfigMap renamed: the workloads' references to it are findings, each located.
    data = data.replace(b"\n    name: bench-mimir-runtime\n", b"\n    name: renamed\n", 1)

    def ran(fast: bool) -> tuple[list[bytes], list[str]]:
        result = run([InputDocument("bundle.yaml", data)], Options(), fast=fast, jobs=1)
        return result.outputs, [repr(finding) for finding in result.findings]

    expected = ran(False)
    monkeypatch.setattr(nodes, "compose", lambda *_: pytest.fail("the List was composed"))
    assert ran(True) == expected
    assert expected[0][0].count(b"wavegen.io/config-hash") == 15 and len(expected[1]) == 15, expected[1]


def test_the_reader_takes_the_documents_of_real_renders() -> None:
    """Guards the test above: the reader really reads these workloads, ConfigMaps and Secrets."""
    kinds = ("Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob", "ConfigMap", "Secret", "Pod")
    offered = accepted = 0
    for path in real_renders().values():
        for piece in split_stream(path.read_text()):
            if any(f"\nkind: {kind}\n" in piece.text for kind in kinds):
                offered += 1
                accepted += fastparse.parse(piece.text) is not None
    assert offered > 50
    assert accepted == offered


# The renders whose documents share values with anchors, aliases and merge keys (Knative's).
ANCHORED = ("knative-rabbitmq-source", "knative-eventing-core")


def test_the_pass_through_check_takes_the_rest_of_real_renders() -> None:
    """Guards the first test for documents passed through: the check vouches for them, so the
    comparison holds it (not libyaml twice) to libyaml on real CRDs, Services and RBAC (Knative's
    with anchors, aliases and merge keys too)."""
    asked = anchored = 0
    cache: fastparse.CheckCache = {}
    for name, path in real_renders().items():
        for piece in split_stream(path.read_text()):
            if piece.has_content():
                asked += 1
                anchored += name in ANCHORED and "&" in piece.text
                assert fastparse.check_passed_through(piece.text, cache), (name, piece.number)
    assert asked > 500 and anchored >= 10


def test_the_reader_takes_anchors_aliases_and_merge_keys_of_real_renders() -> None:
    """Guards the first test for Knative's anchors: the reader reads every one of those documents,
    most of them using an alias or merge key, and their workloads with values libyaml's path gives."""
    renders = real_renders()
    flags: list[int] = []
    for name in ANCHORED:
        for piece in split_stream(renders[name].read_text()):
            if piece.has_content() and ("&" in piece.text or "*" in piece.text):
                read = fastparse.parse(piece.text)
                assert read is not None, (name, piece.number)
                flags.append(read[5])
    assert flags.count(fastparse.ALIASED) >= 10 and fastparse.PARSED_ONLY not in flags


def test_long_literals_of_real_renders_are_read_from_their_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """Guards the first test for long literals in long documents (istiod's sidecar templates,
    Envoy Gateway's and flagger's dashboards): read from the document's text (_LiteralSpan),
    and never a header the reader had to read again as lines."""
    taken: list[str] = []
    real = fastparse._LiteralSpan.scalar

    def counted(span: fastparse._LiteralSpan, *arguments: Any) -> tuple[str, int]:
        value, after = real(span, *arguments)
        taken.append(value)
        return value, after

    monkeypatch.setattr(fastparse._LiteralSpan, "scalar", counted)
    for name, path in real_renders().items():
        for piece in split_stream(path.read_text()):
            spans: list[fastparse._LiteralSpan] = []
            if fastparse._readable_lines(piece.text, shared=True, spans=spans) is not None and spans:
                before = len(taken)
                assert fastparse.parse(piece.text) is not None, (name, piece.number)
                assert len(taken) - before == len(spans), (name, piece.number)
    assert len(taken) >= 10


def test_real_renders_read_in_several_processes_give_the_same_result(split_everything: Splits) -> None:
    """Each real render split in three (however small) gives what one process gives: bytes, findings, errors."""
    unsplit = set()
    for name, path in real_renders().items():
        data = path.read_bytes()
        before = len(split_everything.parts)
        for options in (Options(missing="ignore"), Options()):
            assert outcome(data, options, jobs=3) == outcome(data, options, jobs=1), name
        if len(split_everything.parts) == before:
            unsplit.add(name)
    # The guard: renders were split, but those with nothing to read (istio's base chart and
    # Envoy Gateway's: CRDs only; kyverno's policies chart: policies only), one document (Envoy
    # Gateway's add-ons and Calico's dashboards: one ConfigMap each), or one document that outweighs the rest so that every
    # other range is empty (istio's Grafana: its dashboards; karpenter, flagger's load tester;
    # the descheduler's CronJob and istio's Kiali Deployment, once their ConfigMaps weigh as
    # little as a document passed through).
    assert unsplit == {
        "istio-base",
        "kyverno-policies",
        "envoy-gateway-crds",
        "envoy-gateway-addons",
        "calico-grafana-dashboards",
        "istio-grafana",
        "karpenter",
        "flagger-loadtester",
        "descheduler",
        "istio-kiali",
    }
    assert min(split_everything.parts) >= 2 and split_everything.parts.count(3) > len(real_renders())


def test_both_paths_agree_on_hand_written_trees() -> None:
    """Argo CD's kustomize base, file by file as a directory run reads it: 14 of its 70 files end
    without a line break, which the reader now reads (guarded: no libyaml for any of them)."""
    tool("helm3")
    try:
        trees = {tree.name: corpus.copy_tree(tree) for tree in corpus.TREES}
    except (SystemExit, OSError) as err:
        message = f"the benchmark corpus could not be built: {err}"
        pytest.fail(message) if in_ci() else pytest.skip(message)
    open_ended = read = 0
    for name, root in trees.items():
        for path in corpus.input_files(root):
            data = path.read_bytes()
            open_ended += not data.endswith(b"\n")
            try:
                assert_same(data)
            except AssertionError as err:
                raise AssertionError(f"{name}: {path.relative_to(root)}: the fast path and libyaml disagree") from err
            for piece in split_stream(data.decode()):
                if piece.has_content():
                    kind = next((line[6:] for line in piece.text.splitlines() if line.startswith("kind: ")), "")
                    if kind in ("Deployment", "StatefulSet", "DaemonSet", "ConfigMap", "Secret"):
                        assert fastparse.parse(piece.text) is not None, (path, piece.number)
                        read += 1
                    else:
                        assert fastparse.check_passed_through(piece.text), (path, piece.number)
    assert open_ended >= 10 and read >= 15


def _without_hash_lines(value: Any) -> Any:
    """A loaded document with wavegen's annotations taken out, and the annotations and metadata
    mappings they alone made."""
    if isinstance(value, list):
        return [_without_hash_lines(item) for item in value]
    if not isinstance(value, dict):
        return value
    out = {}
    for key, item in value.items():
        if key == "annotations" and isinstance(item, dict):
            item = {k: v for k, v in item.items() if not str(k).startswith("wavegen.io/")}
        item = _without_hash_lines(item)
        if key in ("annotations", "metadata") and item in ({}, None):
            continue  # (an empty or null one the hash lines filled: the same to the API server)
        out[key] = item
    return out


def test_outputs_mean_the_inputs_but_the_hash_lines() -> None:
    """Whatever path wrote it, every real render's output loads as its input does but for
    wavegen's annotations; the guard: most renders' outputs do change."""
    import json

    import yaml

    from wavegen.stream.engine import InputDocument, run

    class Loader(yaml.CSafeLoader):
        """PyYAML's safe loader with a plain "=" as text (as kubectl reads it: prometheus-operator's CRDs hold one)."""

    Loader.add_constructor("tag:yaml.org,2002:value", lambda loader, node: loader.construct_scalar(node))
    changed = set()
    for name, path in real_renders().items():
        data = path.read_bytes()
        result = run([InputDocument(str(path), data)], Options(missing="ignore"), jobs=1)
        output = result.outputs[0]
        if output != data:
            changed.add(name)
        loaded = [json.loads(json.dumps(list(yaml.load_all(text, Loader=Loader)), default=str)) for text in (data, output)]
        assert _without_hash_lines(loaded[1]) == _without_hash_lines(loaded[0]), name
    assert len(changed) >= 20
