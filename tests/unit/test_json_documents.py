"""Documents written as JSON, read by jsonread, against the reference composer: identical bytes, findings, objects and errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.unit.test_fast_path_differential import _outcome, assert_same
from wavegen.core.plan import Options
from wavegen.stream import engine as engine_module
from wavegen.stream import jsonread
from wavegen.stream import nodes as nodes_module
from wavegen.stream.engine import Engine, InputDocument
from wavegen.stream.splice import DocumentText, Unsafe, template_edits
from wavegen.stream.split import line_starts, split_stream
from wavegen.stream.tree import MAX_DEPTH, field_parts, is_mapping, line_of, node_at

ROOT = Path(__file__).resolve().parents[2]
# Numbers as JSON writes them, which YAML 1.1 reads as ints, floats or (1e3, 1E-2) strings.
NUMBERS = ["0", "-0", "7", "-12", "3.5", "-0.25", "1e3", "1E-2", "1.5e+3", "2.0E-5", "10.0", "123456789012345678901234"]
STRINGS = st.one_of(
    st.sampled_from(["", "x", "a b", "yes", "null", "1e3", "0x1F", "~", "a/b", 'q"uote', "back\\slash", "tab\there", "é", "😀"]),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=6),
)


def _number_marker(index: int) -> str:
    return f"@@number{index}@@"


@st.composite
def json_values(draw: st.DrawFn, depth: int = 0) -> Any:
    """A value of any JSON type, numbers as markers (see _styled) so that they keep the spelling drawn."""
    choice = draw(st.integers(0, 6 if depth < 3 else 3))
    if choice == 0:
        return draw(STRINGS)
    if choice == 1:
        return _number_marker(draw(st.integers(0, len(NUMBERS) - 1)))
    if choice == 2:
        return draw(st.sampled_from([True, False, None]))
    if choice == 3:
        return draw(st.floats(allow_nan=False, allow_infinity=False))
    if choice in (4, 5):
        return draw(st.dictionaries(STRINGS, json_values(depth + 1), max_size=3))
    return draw(st.lists(json_values(depth + 1), max_size=3))


def _pod_template(draw: st.DrawFn) -> dict[str, Any]:
    metadata = draw(
        st.sampled_from(
            [None, {}, {"labels": {"app": "a"}}, {"annotations": None}, {"annotations": {}}, {"annotations": {"x": "y"}}]
        )
    )
    volume = {"name": "v", "configMap": {"name": draw(st.sampled_from(["cm", "gone"]))}}
    container = {"name": "c", "image": "i", "envFrom": [{"secretRef": {"name": draw(st.sampled_from(["s", "lost"]))}}]}
    if draw(st.booleans()):
        key_ref = {"name": draw(st.sampled_from(["cm", "away"])), "key": draw(st.sampled_from(["k", "nokey"]))}
        container["env"] = [{"name": "A", "value": "1"}, {"name": "B", "valueFrom": {"configMapKeyRef": key_ref}}]
    spec: dict[str, Any] = {"containers": [container]}
    if draw(st.booleans()):
        spec["initContainers"] = [{"name": "i", "envFrom": [{"configMapRef": {"name": "gone"}}]}]
    if draw(st.booleans()):
        spec["volumes"] = [volume]
    if draw(st.booleans()):
        sources = [{"secret": {"name": "s"}}, {"configMap": {"name": draw(st.sampled_from(["cm", "far"]))}}]
        spec.setdefault("volumes", []).append({"name": "p", "projected": {"sources": sources}})
    template: dict[str, Any] = {"spec": spec}
    if metadata is not None:
        template = {"metadata": metadata, **template} if draw(st.booleans()) else {**template, "metadata": metadata}
    return template


@st.composite
def kube_objects(draw: st.DrawFn) -> list[dict[str, Any]]:
    objects: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"k": draw(STRINGS)}},
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {"p": draw(STRINGS)}},
    ]
    for index in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["Deployment", "StatefulSet", "DaemonSet"]))
        workload = {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": f"w{index}"}}
        workload["spec"] = {"replicas": _number_marker(2), "template": _pod_template(draw)}
        if draw(st.booleans()):
            workload["extra"] = draw(json_values())
        objects.append(workload)
    if draw(st.booleans()):
        objects.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc"}, "spec": draw(json_values())})
    return draw(st.permutations(objects))


def _styled(draw: st.DrawFn, value: Any) -> str:
    """value as JSON in a style drawn: indentation, separators, key order, escapes, numbers' spellings."""
    indent = draw(st.sampled_from([None, None, 1, 2, 4, "\t"]))
    separators = draw(st.sampled_from([(",", ":"), (", ", ": "), (",", ": ")])) if indent is None else (",", ": ")
    text = json.dumps(
        value, indent=indent, separators=separators, ensure_ascii=draw(st.booleans()), sort_keys=draw(st.booleans())
    )
    for index, number in enumerate(NUMBERS):
        text = text.replace(f'"{_number_marker(index)}"', number)
    return text


LEADS = ["", "---\n", "---\n# a comment\n", "\n", "---\n  ", "# c\n\n", "--- \n"]
ENDS = ["\n", "", " \n", "\n\n", "\t\n", "\n\t\n", "\n# after\n", "\n...\n"]
# Text changes JSON allows and libyaml may refuse or read otherwise (each applied to the first place it fits).
CHANGES = [
    ("", ""),
    ('": ', '"\n: '),  # a key's colon on the next line
    ('{"', '{"' + "k" * 1100 + '": 1, "'),  # a key past libyaml's simple-key length
    ('{"', '{"' + "k" * 151 + '": 1, "'),  # a key longer than jsonread vouches for, within that length
    ('{"', '{"' + "\\u00e9" * 171 + '": 1, "'),  # 171 characters, 1,026 in the text
    ('": ', '"' + " " * 70 + ": "),  # blanks before a key's colon
    ('": ', '"' + " " * 1030 + ": "),  # past libyaml's length
    (",", "\n,"),
    (",", ",\t\n\t"),
    ('{"', '{"apiVersion": "x", "'),  # a key twice
    ("[", "[\n"),
    ("}", "\n}"),
    (",", " ,"),
    ('"', '"\\u00e9\\/\\b\\f'),
    ('"', '"\\ud83d\\ude00'),
    ('"', '"\u2028'),
    ('"', '"\x7f'),
]


@st.composite
def json_streams(draw: st.DrawFn) -> bytes:
    """Kubernetes objects written as JSON: one List (as ``kubectl get -o json`` prints), or a
    document each (as jsonnet writes), in the styles and with the oddities above."""
    objects = draw(kube_objects())
    if draw(st.booleans()):
        bodies: list[Any] = [{"apiVersion": "v1", "kind": draw(st.sampled_from(["List", "ConfigMapList"])), "items": objects}]
        if draw(st.booleans()):
            bodies[0]["items"].insert(draw(st.integers(0, len(objects))), draw(json_values()))
        if draw(st.booleans()):
            bodies[0] = {"metadata": {"resourceVersion": ""}, **bodies[0]}
    else:
        bodies = objects
    documents = []
    for body in bodies:
        text = _styled(draw, body)
        old, new = draw(st.sampled_from(CHANGES))
        documents.append(draw(st.sampled_from(LEADS)) + text.replace(old, new, 1) + draw(st.sampled_from(ENDS)))
    stream = "".join(d if d.startswith("---") or not index else "---\n" + d for index, d in enumerate(documents))
    return (stream.replace("\n", "\r\n") if draw(st.booleans()) else stream).encode()


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_streams())
@example(b'{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}]}')
def test_generated_json_documents(data: bytes) -> None:
    """Whatever jsonread reads, libyaml's path reads alike, edits alike and words alike where it refuses."""
    assert_same(data, Options(missing="warn"))


def test_json_read_is_taken() -> None:
    """Guards the comparison above: jsonread reads documents in these styles (else both sides would be libyaml)."""
    body = {"apiVersion": "v1", "kind": "List", "items": [{"kind": "ConfigMap", "n": 1e3, "m": -0.5}, "x", {"a": None}]}
    for text in (json.dumps(body), json.dumps(body, indent=2), "---\n# c\n" + json.dumps(body, indent="\t") + "\n"):
        read = jsonread.read(text)
        assert read is not None and read.items is not None and len(read.items) == 3
        assert [text[start:end] for start, end in read.items][1] == '"x"'
    assert jsonread.read('{"a": 1e3}')[0] == {"a": "1e3"}  # type: ignore[index]


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1, "a": 2}',
        '{"a": NaN}',
        '{"a": 1} # c',
        '{"a": 1}\n---\n',
        "{a: 1}",
        '{"a": "\\ud83d\\ude00"}',
        '{"a": "\u2028"}',
        "[1]",
        '\t{"a": 1}',
        '{"a": 1} {"b": 2}',
    ],
)
def test_json_that_yaml_reads_otherwise_is_left_to_libyaml(text: str) -> None:
    assert jsonread.read(text) is None


def test_json_nesting_past_the_limit_is_refused_as_on_the_reference_path() -> None:
    for depth in (MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, 5000):
        inner = '{"a": ' * (depth - 1) + "1" + "}" * (depth - 1)
        text = '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": ' + inner + "}"
        read = jsonread.read(text)
        assert (read is not None) == (depth <= MAX_DEPTH)
        assert_same(text.encode())
        assert_same(('{"apiVersion": "v1", "kind": "List", "items": [' + text + "]}").encode())


CONFIGMAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"a": "b"}}
MOUNTS_CM = [{"name": "v", "configMap": {"name": "cm"}}]


def _deployment(name: str, template: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name}, "spec": {"template": template}}


def test_a_json_lists_items_are_composed_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Guard: a JSON List's objects are read without libyaml, and each item edited or located
    has its nodes built alone (a List of 600 KB composed whole took a third of its run)."""
    items = [
        CONFIGMAP,
        _deployment("d", {"metadata": {"annotations": None}, "spec": {"volumes": MOUNTS_CM}}),
        _deployment("e", {"spec": {"containers": [{"name": "c", "envFrom": [{"secretRef": {"name": "gone"}}]}]}}),
    ]
    data = json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=4).encode()
    expected = _outcome(data, Options(), False)
    composed: list[str] = []
    built: list[str] = []
    real, real_built = nodes_module.compose, jsonread.compose
    monkeypatch.setattr(nodes_module, "compose", lambda text, *rest, **named: composed.append(text) or real(text, *rest, **named))
    monkeypatch.setattr(jsonread, "compose", lambda text, *rest: built.append(text) or real_built(text, *rest))
    assert _outcome(data, Options(), True) == expected
    assert composed == []
    assert built and all(text.lstrip().startswith('{\n            "apiVersion": "apps/v1"') for text in built)
    outputs, findings, _ = expected[0]
    assert outputs[0].count(b'"wavegen.io/config-hash": ') == 1  # d's ("e" references no ConfigMap of the bundle)
    assert len(findings) == 1 and "Secret" in findings[0]
    engine = Engine(Options())
    engine.add(InputDocument("list.json", data))
    assert [item for _, _, item in engine.located] == [0, 1, 2]
    assert engine.files[0].json_read[0] and not engine.files[0].item_lines


def test_an_item_sharing_its_line_is_composed_with_its_list(monkeypatch: pytest.MonkeyPatch) -> None:
    """Minified JSON: an item whose line starts before it is found in the List composed whole."""
    deployment = _deployment("d", {"spec": {"volumes": MOUNTS_CM}})
    data = json.dumps({"apiVersion": "v1", "kind": "List", "items": [CONFIGMAP, deployment]}).encode()
    windows: list[object] = []
    real = engine_module._json_item_window
    monkeypatch.setattr(engine_module, "_json_item_window", lambda *a: windows.append(real(*a)) or windows[-1])
    assert_same(data)
    assert windows and all(window is None for window in windows)


def test_json_is_read_without_pyyaml_json_or_re() -> None:
    """Guard: a JSON input is read, located and edited without importing PyYAML (about 20 ms
    of a run), json's package or re (about 8 ms): json's C scanner and precompiled patterns."""
    documents = [CONFIGMAP, _deployment("d", {"spec": {"volumes": [*MOUNTS_CM, {"secret": {"secretName": "gone"}}]}})]
    stream = "".join("---\n" + json.dumps(d, indent=2) + "\n" for d in documents)
    listed = json.dumps({"apiVersion": "v1", "kind": "List", "items": documents}, indent=2)
    code = (
        "import sys\n"
        "from wavegen.stream import patterns\n"
        "from wavegen.stream.engine import InputDocument, run\n"
        "from wavegen.core.plan import Options\n"
        "before = set(sys.modules)\n"
        "for text in sys.argv[1:]:\n"
        "    result = run([InputDocument('in.json', text.encode())], Options(missing='warn'))\n"
        "    assert len(result.findings) == 1 and result.changed() == [0], result.findings\n"
        "print(bool(patterns._precompiled()), sorted(name for name in ('yaml', 'json', 're') if name in sys.modules))\n"
        "from wavegen.errors import WavegenError\n"
        "try:\n"  # no JSON (a bracket short): json's scanner fails, libyaml words it
        '    run([InputDocument(\'bad.json\', b\'{"kind": "ConfigMap", "data": {}\\n\')], Options())\n'
        "except WavegenError as err:\n"
        "    assert 'line 2: invalid YAML' in str(err), err\n"
        "else:\n"
        "    raise AssertionError('no error')\n"
    )
    # Without site (-S): a virtualenv's .pth hooks may import re themselves; the path is the tree's alone.
    # (PyYAML's directory after it: the input that is no JSON needs it, to word its error)
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(Path(yaml.__file__).parents[1])])}
    done = subprocess.run(
        [sys.executable, "-S", "-c", code, stream, listed], capture_output=True, text=True, check=True, env=environment
    )
    precompiled, imported = done.stdout.strip().split(" ", 1)
    # (re only where this interpreter has the precompiled patterns: on another, patterns builds them with re)
    assert imported == ("[]" if precompiled == "True" else "['re']")


def _node_shape(node: Any, lines: int = 0) -> Any:
    """A node tree as what the splicer and line_of read of it: kind, tag, value, style, marks
    (their lines moved by ``lines``)."""
    marks = (node.start_mark.line + lines, node.start_mark.column, node.end_mark.line + lines, node.end_mark.column)
    if node.id == "scalar":
        return ("scalar", node.tag, node.value, node.style or "", marks)
    if node.id == "sequence":
        return ("sequence", node.tag, bool(node.flow_style), marks, [_node_shape(item, lines) for item in node.value])
    pairs = [(_node_shape(key, lines), _node_shape(value, lines)) for key, value in node.value]
    return ("mapping", node.tag, bool(node.flow_style), marks, pairs)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_streams())
@example(b'---\n# c\n  {"a": [1, -0, 1e3, true, null, "x\\u00e9"], "b": {}}\n')
def test_what_jsonread_vouches_for_libyaml_accepts_and_composes_alike(data: bytes) -> None:
    """Read without asking libyaml (``checked``) only what libyaml accepts, and every text read
    composed to the nodes libyaml composes: its List items' too, from their lines' starts."""
    for piece in split_stream(data.decode()):
        read = jsonread.read(piece.text)
        if read is None:
            continue
        accepted = nodes_module.libyaml_accepts(piece.text)
        assert accepted or not read.checked
        if not accepted:
            continue
        root = nodes_module.compose(piece.text)
        assert _node_shape(jsonread.compose(piece.text)) == _node_shape(root)
        for index, (start, end) in enumerate(read.items or []):
            begin = piece.text.rfind("\n", 0, start) + 1
            if piece.text.count(" ", begin, start) == start - begin:
                window = jsonread.compose(piece.text[begin:end])
                item = root.value[[key.value for key, _ in root.value].index("items")][1].value[index]
                assert _node_shape(window, piece.text.count("\n", 0, begin)) == _node_shape(item)


def _paths(draw: st.DrawFn, node: Any) -> str:
    """A field path down a node tree, as findings name fields (an index or key may be one it lacks)."""
    parts: list[str] = []
    while True:
        if node.id == "mapping" and node.value and draw(st.integers(0, 4)):
            key, node = draw(st.sampled_from(node.value))
            parts.append(f"[{key.value}]" if "." in key.value or "[" in key.value else f".{key.value}")
        elif node.id == "sequence" and node.value and draw(st.integers(0, 4)):
            index = draw(st.integers(0, len(node.value) - 1))
            parts.append(f"[{index}]")
            node = node.value[index]
        else:
            if draw(st.booleans()):
                parts.append(draw(st.sampled_from([".missing", "[7]"])))
            return "".join(parts).lstrip(".")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_streams(), st.data())
def test_what_is_built_of_a_json_document_is_what_its_readers_read(data: bytes, draws: st.DataObject) -> None:
    """The nodes built for a field's line (field_wanted) and for a template's edits
    (template_wanted) give what the whole tree gives, shallow nodes left out of the rest."""
    for piece in split_stream(data.decode()):
        read = jsonread.read(piece.text)
        if read is None:
            continue
        texts = [piece.text]
        for start, end in read.items or []:
            begin = piece.text.rfind("\n", 0, start) + 1
            if piece.text.count(" ", begin, start) == start - begin:
                texts.append(piece.text[begin:end])  # (an item's own text, as the engine builds it)
        for text in texts:
            _assert_built_as_read(text, draws)


def _assert_pruned(built: Any, whole: Any, wanted: Any) -> None:
    """``built`` is ``whole`` with what ``wanted`` leaves out shallow: the same kind, tag and
    marks (a scalar's value too), and no children."""
    assert _node_shape(built)[:2] == _node_shape(whole)[:2]
    if built.id == "scalar":
        assert _node_shape(built) == _node_shape(whole)
        return
    assert _node_shape(built)[3] == _node_shape(whole)[3]  # (marks)
    if wanted is not None and not isinstance(wanted, dict):
        assert built.value == []  # (shallow)
        return
    assert len(built.value) == len(whole.value)
    if built.id == "sequence":
        for index, (item, full) in enumerate(zip(built.value, whole.value, strict=True)):
            _assert_pruned(item, full, None if wanted is None else wanted.get(index, "shallow"))
        return
    for (key, value), (full_key, full_value) in zip(built.value, whole.value, strict=True):
        _assert_pruned(key, full_key, None)
        _assert_pruned(value, full_value, None if wanted is None else wanted.get(key.value, "shallow"))


def _assert_built_as_read(text: str, draws: st.DataObject) -> None:
    whole = jsonread.compose(text)
    for _ in range(3):
        field = _paths(draws.draw, whole)
        if field:
            wanted = jsonread.field_wanted(list(field_parts(field)))
            partial = jsonread.compose(text, wanted)
            _assert_pruned(partial, whole, wanted)
            assert line_of(partial, field) == line_of(whole, field), field
    for path in (("spec", "template"), ("spec", "jobTemplate", "spec", "template")):
        partial = jsonread.compose(text, jsonread.template_wanted(path))
        _assert_pruned(partial, whole, jsonread.template_wanted(path))
        full_template, built_template = node_at(whole, path), node_at(partial, path)
        assert (full_template is None) == (built_template is None)
        if full_template is None or not is_mapping(full_template):
            continue
        doc = DocumentText(text, line_starts(text))
        desired = {"wavegen.io/config-hash": "abc", "other": None}
        try:
            expected: Any = template_edits(doc, full_template, desired)
        except Unsafe as err:
            expected = str(err)
        try:
            got: Any = template_edits(doc, built_template, desired)  # type: ignore[arg-type]
        except Unsafe as err:
            got = str(err)
        assert got == expected
