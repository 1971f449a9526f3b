"""What the planner reads of a body (fields_read, WorkloadReads): planning from it equals planning from the whole body."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wavegen.core.model import ConfigSource
from wavegen.core.plan import FieldTree, KubeObject, Options, fields_read, plan
from wavegen.core.textdata import TextData
from wavegen.core.workloads import WorkloadTable, parse_workload_spec
from wavegen.stream.engine import Engine, InputDocument, run

from .test_fast_path_differential import FIXTURE_FILES, _options_for


def _strictly_pruned(value: Any, tree: FieldTree | None) -> Any:
    """Only the fields in ``tree``; everything else is gone (stricter than the reader, which keeps scalars)."""
    if tree is None:
        return value
    if isinstance(value, list):
        return [_strictly_pruned(item, tree) for item in value]
    if isinstance(value, dict):
        return {key: _strictly_pruned(item, tree[key]) for key, item in value.items() if key in tree}
    return value


def _plan_text(objects: list[KubeObject], options: Options) -> str:
    result = plan(objects, options)
    return repr((result.sources, result.workloads, result.findings))


def _full_objects(data: bytes, options: Options) -> list[KubeObject]:
    engine = Engine(options, fast=False)
    engine.add(InputDocument("bundle.yaml", data))
    return engine.objects


def assert_plans_alike(data: bytes, options: Options) -> None:
    """Planning from pruned bodies, and from the engine's reads, equals planning from whole bodies."""
    objects = _full_objects(data, options)
    whole = _plan_text(objects, options)
    pruned = [o.with_body(_strictly_pruned(o.body, fields_read(str(o.body.get("kind")), options))) for o in objects]
    assert _plan_text(pruned, options) == whole
    engine = Engine(options, only_planned=True)
    engine.add(InputDocument("bundle.yaml", data))
    assert _plan_text(engine.objects, options) == whole


def test_fixtures_plan_alike() -> None:
    for path in FIXTURE_FILES:
        try:
            options = _options_for(path)
            assert_plans_alike(path.read_bytes(), options)
        except Exception as err:  # a fixture the reference path refuses has no plan to compare
            if type(err).__name__ != "WavegenError":
                raise


def test_the_reader_keeps_only_what_is_planned() -> None:
    """Guards against a reduction that does nothing (then the tests above compare a body with itself)."""
    data = (
        b"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  labels:\n    a: b\nspec:\n"
        b"  selector:\n    matchLabels:\n      a: b\n  template:\n    spec:\n      containers:\n"
        b"      - name: c\n        ports:\n        - containerPort: 1\n        envFrom:\n        - configMapRef:\n"
        b"            name: cm\n"
        b"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  labels:\n    a: b\ndata:\n  k: v\n"
    )
    engine = Engine(Options(), only_planned=True)
    engine.add(InputDocument("bundle.yaml", data))
    deployment, configmap = engine.objects
    assert deployment.reads is not None and deployment.body == {}
    assert deployment.identity == ("apps/v1", "Deployment", "default", "d")
    assert [r.field for t in deployment.reads.templates for r in t.references] == [
        "spec.template.spec.containers[0].envFrom[0].configMapRef"
    ]
    assert configmap.body == {} and configmap.identity == ("v1", "ConfigMap", "default", "cm")
    assert isinstance(configmap.reads, ConfigSource) and configmap.reads.text_data == {"k": "v"}


NAME = st.sampled_from(["cm", "cm2", "sec", "absent"])
KEY = st.sampled_from(["k", "k2", "missing"])
OPTIONAL = st.sampled_from(["", "optional: true\n", "optional: false\n", "optional: 'true'\n"])


@st.composite
def _selector(draw: st.DrawFn, name_field: str, keyed: bool) -> str:
    lines = [f"{name_field}: {draw(NAME)}\n", draw(OPTIONAL)]
    if keyed:
        lines.append(f"key: {draw(KEY)}\n")
    elif draw(st.booleans()):
        lines.append(f"items:\n- key: {draw(KEY)}\n  path: p\n")
    return "".join(lines)


def _indent(text: str, by: int) -> str:
    pad = " " * by
    return "".join(pad + line if line.strip() else line for line in text.splitlines(keepends=True))


@st.composite
def _container(draw: st.DrawFn) -> str:
    lines = ["- name: c\n", "  image: i\n", "  ports:\n  - containerPort: 80\n"]
    envs = draw(st.integers(0, 2))
    if envs:
        lines.append("  env:\n")
    for _ in range(envs):
        kind = draw(st.sampled_from(["configMapKeyRef", "secretKeyRef"]))
        lines.append(f"  - name: E\n    valueFrom:\n      {kind}:\n{_indent(draw(_selector('name', True)), 8)}")
        lines.append("  - name: F\n    value: plain\n")
    if draw(st.booleans()):
        kind = draw(st.sampled_from(["configMapRef", "secretRef"]))
        lines.append(f"  envFrom:\n  - {kind}:\n{_indent(draw(_selector('name', False)), 6)}")
    return "".join(lines)


@st.composite
def _pod_spec(draw: st.DrawFn) -> str:
    lines = []
    for field in draw(st.lists(st.sampled_from(["containers", "initContainers", "volumes", "nodeSelector"]), unique=True)):
        if field == "volumes":
            how = draw(st.sampled_from(["configMap", "secret", "projected"]))
            if how == "projected":
                source = draw(st.sampled_from(["configMap", "secret"]))
                body = f"projected:\n  sources:\n  - {source}:\n{_indent(draw(_selector('name', False)), 6)}"
            else:
                body = f"{how}:\n{_indent(draw(_selector('name' if how == 'configMap' else 'secretName', False)), 2)}"
            lines.append(f"volumes:\n- name: v\n{_indent(body, 2)}")
        elif field == "nodeSelector":
            lines.append("nodeSelector:\n  disk: ssd\n")
        else:
            lines.append(f"{field}:\n{''.join(draw(st.lists(_container(), min_size=1, max_size=2)))}")
    return "".join(lines)


ANNOTATIONS = st.sampled_from(
    [
        "",
        "annotations:\n  wavegen.io/ignore: 'true'\n",
        "annotations:\n  wavegen.io/enabled: 'true'\n",
        "annotations:\n  wave.pusher.com/update-on-config-change: 'true'\n",
        "annotations:\n  wavegen.io/extra-configmaps: cm2, other/cm\n  wavegen.io/extra-secrets: sec\n",
        "annotations:\n  wave.pusher.com/extra-configmaps: cm2\n",
    ]
)
TEMPLATE_ANNOTATIONS = st.sampled_from(
    ["", "metadata:\n  annotations:\n    wavegen.io/config-hash: stale\n", "metadata:\n  labels:\n    a: b\n"]
)


@st.composite
def _workload(draw: st.DrawFn) -> str:
    kind, api_version, path = draw(
        st.sampled_from(
            [
                ("Deployment", "apps/v1", ("spec", "template")),
                ("StatefulSet", "apps/v1", ("spec", "template")),
                ("CronJob", "batch/v1", ("spec", "jobTemplate", "spec", "template")),
                ("Job", "batch/v1", ("spec", "template")),
                ("Pod", "v1", ()),
                ("Widget", "example.com/v1", ("spec", "podTemplate")),
                ("Deployment", "example.com/v1", ("spec", "template")),
            ]
        )
    )
    spec = "spec:\n" + _indent(draw(_pod_spec()), 2)
    # A Pod is its own template: its metadata is the object's.
    template = draw(TEMPLATE_ANNOTATIONS) + spec if path else spec
    for depth, part in enumerate(reversed(path)):
        noise = "replicas: 1\n" if depth == 0 else ""
        template = f"{noise}{part}:\n{_indent(template, 2)}"
    metadata = f"metadata:\n  name: w\n{_indent(draw(ANNOTATIONS), 2)}"
    return f"apiVersion: {api_version}\nkind: {kind}\n{metadata}{template}"


@st.composite
def _source(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["ConfigMap", "Secret"]))
    name = draw(st.sampled_from(["cm", "cm2", "sec"]))
    keys = draw(st.lists(st.sampled_from(["k", "k2"]), unique=True))
    field = "data" if kind == "ConfigMap" or draw(st.booleans()) else "stringData"
    # Invalid ones too: a number (not a string) and bad base64 become error findings.
    value = draw(
        st.sampled_from(["dg==", "dg==", "not base64!", "1"] if kind == "Secret" and field == "data" else ["v", "v", "1"])
    )
    data = f"{field}:\n" + "".join(f"  {k}: {value}\n" for k in keys) if keys else ""
    ignored = draw(st.sampled_from(["", "  annotations:\n    wavegen.io/ignore: 'true'\n"]))
    return f"apiVersion: v1\nkind: {kind}\nmetadata:\n  name: {name}\n  labels:\n    a: b\n{ignored}{data}"


@st.composite
def _bundles(draw: st.DrawFn) -> bytes:
    docs = draw(st.lists(st.one_of(_source(), _workload()), min_size=1, max_size=6))
    return ("---\n" + "---\n".join(docs)).encode()


_WIDGETS = WorkloadTable().extended([parse_workload_spec("Widget.example.com=spec.podTemplate")])
_OPTIONS = st.builds(
    Options,
    profile=st.sampled_from(["wavegen", "wave"]),
    opt_in=st.booleans(),
    workloads=st.sampled_from([WorkloadTable(), _WIDGETS]),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_bundles(), _OPTIONS)
def test_generated_bundles_plan_alike(data: bytes, options: Options) -> None:
    assert_plans_alike(data, options)
    fast = run([InputDocument("bundle.yaml", data)], options)
    reference = run([InputDocument("bundle.yaml", data)], options, fast=False)
    assert (fast.outputs, repr(fast.findings)) == (reference.outputs, repr(reference.findings))


def _dashboard(name: str, lines: int, extra: str = "") -> str:
    """A ConfigMap of one dashboard: a literal block scalar long enough to be read from its text."""
    panels = "\n".join(f'      {{"id": {i}, "title": "{name} {i}"}},' for i in range(lines))
    return (
        f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  labels:\n    grafana_dashboard: '1'\n{extra}"
        f'data:\n  small: value\n  {name}.json: |\n    {{\n    "panels": [\n{panels}\n    ]}}\n'
    )


_GRAFANA = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: grafana\nspec:\n  selector:\n    matchLabels:\n"
    "      app: grafana\n  template:\n    spec:\n      containers:\n      - name: grafana\n        image: grafana\n"
    "      volumes:\n      - name: dashboards\n        configMap:\n          name: mounted\n"
)


@pytest.mark.parametrize("listed", [False, True])
def test_only_mounted_dashboards_are_built(listed: bool, monkeypatch: Any) -> None:
    """A long literal of a ConfigMap's data is made only when its ConfigMap is hashed: Grafana's
    sidecar finds its dashboards by label, and nothing needs their text. What a run gives is the
    reference path's, bytes and findings. The same for ConfigMaps that are a List's items
    (``kubectl get -o yaml``'s output, a ConfigMapList): each item's data is a TextData."""
    from wavegen.stream import fastparse

    made: list[str] = []
    real = fastparse._without_indentation

    def counted(*arguments: Any) -> str:
        text = real(*arguments)
        made.append(text.split("\n")[2])
        return text

    monkeypatch.setattr(fastparse, "_without_indentation", counted)
    documents = [_dashboard("unmounted", 400), _GRAFANA, _dashboard("mounted", 300)]
    bundle = (_as_list(*documents) if listed else "---\n".join(documents)).encode()
    fast = run([InputDocument("bundle.yaml", bundle)], Options(), fast=True, jobs=1)
    assert made == ['  {"id": 0, "title": "mounted 0"},']  # the mounted one, once
    reference = run([InputDocument("bundle.yaml", bundle)], Options(), fast=False, jobs=1)
    assert fast.outputs == reference.outputs and repr(fast.findings) == repr(reference.findings)
    assert b"wavegen.io/config-hash" in fast.outputs[0]
    # The guard: the engine really left them unmade, and their values are the reference path's.
    engine = Engine(Options(), only_planned=True)
    engine.add(InputDocument("bundle.yaml", bundle))
    whole = _full_objects(bundle, Options())
    for read, body in ((engine.objects[0].reads, whole[0].body), (engine.objects[2].reads, whole[2].body)):
        assert isinstance(read, ConfigSource) and isinstance(read.text_data, TextData)
        assert dict(read.text_data) == body["data"] and read.text_data == body["data"]


def test_long_values_are_made_where_anything_else_may_read_them() -> None:
    """Left unmade only as a ConfigMap's data values of strings, with no anchor to copy them
    elsewhere; any other long literal of the document is made, and data is a plain dict then."""
    from wavegen.stream import fastparse

    annotation = "  annotations:\n    script: |\n" + "".join(f"      echo {i}\n" for i in range(100))
    cases = {
        "deferred": (_dashboard("d", 300), True),
        "a document of a few KB": (_dashboard("d", 100), False),
        "another long literal": (_dashboard("d", 300, annotation), False),
        "a value that is no string": (_dashboard("d", 300).replace("small: value", "small: 3"), False),
        "anchored": (_dashboard("d", 300).replace("labels:\n", "labels: &l\n"), False),
        "long document": (_dashboard("d", 3000), True),
    }
    for name, (text, deferred) in cases.items():
        read = fastparse.parse(text, defer_data=True)
        made = fastparse.parse(text)
        assert read is not None and made is not None, name
        assert (read[0]["data"].__class__ is TextData) is deferred, name
        assert dict(read[0]["data"]) == made[0]["data"] and read[0]["metadata"] == made[0]["metadata"], name


def test_text_data_is_the_data_it_stands_for() -> None:
    import pickle

    from wavegen.stream import fastparse

    read = fastparse.parse(_dashboard("d", 300), defer_data=True)
    assert read is not None
    data = read[0]["data"]
    assert isinstance(data, TextData) and not isinstance(data._values["d.json"], str)
    # A forked reader's result comes back pickled, unmade values too.
    copy = pickle.loads(pickle.dumps(data, pickle.HIGHEST_PROTOCOL))
    assert isinstance(copy, TextData) and not isinstance(copy._values["d.json"], str)
    expected = fastparse.parse(_dashboard("d", 300))[0]["data"]  # type: ignore[index]
    assert list(data) == list(expected) == ["small", "d.json"] and len(data) == 2 and "d.json" in data
    assert data == expected and copy == expected and repr(data) == repr(expected)
    assert data["d.json"] is data["d.json"]  # made once, then kept
    assert data.get("missing") is None and "missing" not in data


def test_a_configmap_kept_whole_has_its_values_made() -> None:
    """A ConfigMap of another group is no source: the engine keeps its body, with plain data."""
    text = _dashboard("d", 300).replace("apiVersion: v1", "apiVersion: example.com/v1")
    engine = Engine(Options(), only_planned=True)
    engine.add(InputDocument("bundle.yaml", text.encode()))
    (kept,) = engine.objects
    assert kept.reads is None and kept.body["data"].__class__ is dict
    assert kept.body["data"] == _full_objects(text.encode(), Options())[0].body["data"]


def _as_list(*documents: str) -> str:
    """Documents as the items of one List, each indented under its dash."""
    items = []
    for document in documents:
        first, *rest = document.rstrip("\n").split("\n")
        items.append("\n".join(["- " + first, *("  " + line if line else "" for line in rest)]) + "\n")
    return "apiVersion: v1\nkind: List\nitems:\n" + "".join(items)


def test_a_lists_long_values_are_made_where_anything_else_may_read_them() -> None:
    """In a List, only its ConfigMap items' data is left unmade; a long literal anywhere else
    (another kind's item, an annotation) has every value made, and a ConfigMap of another
    group is kept whole with its data a plain dict."""
    from wavegen.stream import fastparse

    annotation = "  annotations:\n    script: |\n" + "".join(f"      echo {i}\n" for i in range(100))
    other_kind = _dashboard("s", 300).replace("kind: ConfigMap", "kind: Widget")
    cases = {
        "deferred": (_as_list(_dashboard("a", 300), _dashboard("b", 300)), [True, True]),
        "another kind's long literal": (_as_list(_dashboard("a", 300), other_kind), [False, False]),
        "an annotation's": (_as_list(_dashboard("a", 300), _dashboard("b", 300, annotation)), [False, False]),
        "a value that is no string": (_as_list(_dashboard("a", 300).replace("small: value", "small: 3")), [False]),
    }
    for name, (text, deferred) in cases.items():
        read = fastparse.parse(text, defer_data=True)
        made = fastparse.parse(text)
        assert read is not None and made is not None, name
        items = read[0]["items"]
        assert [item["data"].__class__ is TextData for item in items] == deferred, name
        assert [dict(item["data"]) for item in items] == [item["data"] for item in made[0]["items"]], name
    kept = _as_list(_dashboard("d", 300).replace("apiVersion: v1", "apiVersion: example.com/v1"), _GRAFANA)
    engine = Engine(Options(), only_planned=True)
    engine.add(InputDocument("bundle.yaml", kept.encode()))
    assert engine.objects[0].reads is None and engine.objects[0].body["data"].__class__ is dict


_JSON_LINES = st.sampled_from(["{", '  "a": 1,', '"title": "x"', "}", "  - item", "key: value", "#!/bin/sh", "\tindented tab"])


@st.composite
def _long_literal(draw: st.DrawFn, indent: int) -> str:
    """A key's long literal block scalar, in the styles real ConfigMaps hold: any chomping,
    deeper lines, empty lines and lines of fewer spaces inside and after it."""
    block = indent + draw(st.integers(1, 6))
    chomping = draw(st.sampled_from(["", "-", "+"]))
    lines = []
    for _ in range(draw(st.integers(150, 400))):
        kind = draw(st.integers(0, 19))
        if kind == 0:
            lines.append("")
        elif kind == 1:
            lines.append(" " * draw(st.integers(1, block)))  # narrower than the indentation: an empty line
        else:
            lines.append(" " * (block + draw(st.sampled_from([0, 0, 0, 2, 4]))) + draw(_JSON_LINES) + " " * 40)
    trailing = [""] * draw(st.integers(0, 2))
    body = "\n".join(lines + trailing)
    return f"|{chomping}\n" + " " * block + "{\n" + body + "\n"


@st.composite
def _configmaps(draw: st.DrawFn) -> str:
    data = []
    for index in range(draw(st.integers(1, 4))):
        if draw(st.booleans()):
            data.append(f"  key{index}: " + draw(_long_literal(2)))
        else:
            data.append(
                f"  key{index}: " + draw(st.sampled_from(["plain", "'quoted'", '"x\\ty"', "3", "null", "|\n    short\n"]))
            )
            if not data[-1].endswith("\n"):
                data[-1] += "\n"
    extra = ""
    where = draw(st.integers(0, 5))
    if where == 0:
        extra = "  annotations:\n    script: " + draw(_long_literal(4))
    elif where == 1:
        extra = "  labels: &labels\n    a: b\n"
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n" + extra + "data:\n" + "".join(data)
    if where == 2:  # the data's values copied by an alias, where a reader of annotations sees them
        text = "apiVersion: v1\nkind: ConfigMap\ndata: &d\n" + "".join(data) + "metadata:\n  name: cm\n  annotations: *d\n"
    if draw(st.booleans()):
        text += "binaryData:\n  b: aGVsbG8=\n"
    return text


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(_configmaps())
def test_data_left_unmade_is_the_data_made(text: str) -> None:
    """Whatever a ConfigMap holds, reading it with its long literals left unmade gives what
    reading it whole gives: the same verdict, fields and flags, and data equal once made."""
    from wavegen.stream import fastparse

    deferred = fastparse.parse(text, defer_data=True)
    made = fastparse.parse(text)
    assert (deferred is None) == (made is None)
    if deferred is None or made is None:
        return
    body, expected = dict(deferred[0]), made[0]
    data = body.pop("data")
    assert body == {key: value for key, value in expected.items() if key != "data"}
    assert dict(data) == expected["data"] and list(data) == list(expected["data"])
    assert deferred[1:] == made[1:]
