"""The subset reader (fast path) against the reference composer: identical bytes, findings, objects and errors."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from wavegen.core import refs
from wavegen.core.plan import Options, fields_read
from wavegen.errors import WavegenError
from wavegen.inputs.options import load_config, options_from
from wavegen.stream import engine as engine_module
from wavegen.stream import fastparse
from wavegen.stream import nodes as nodes_module
from wavegen.stream.engine import Engine, InputDocument, run
from wavegen.stream.nodes import check_depth
from wavegen.stream.splice import DocumentText, template_edits
from wavegen.stream.split import line_starts, split_stream
from wavegen.stream.tree import MAX_DEPTH, line_of

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from gen_bundle import crd_bundle, dashboard_list, hand_edited_bundle, quoted_dashboards, styled_bundle, workload_bundle  # noqa: E402

FIXTURE_FILES = sorted(p for p in (ROOT / "fixtures").rglob("*.yaml") if p.name != "config.yaml")


def _outcome(data: bytes, options: Options, fast: bool) -> Any:
    """What a run gives (outputs, findings, fallbacks, or its error) and what a whole-object engine reads.

    The two are taken apart: a run reads only the planner's fields, the engine every field,
    and an error of one must not hide what the other does.
    """
    try:
        result = run([InputDocument("bundle.yaml", data)], options, fast=fast)
        ran: Any = (result.outputs, [repr(f) for f in result.findings], result.fallbacks)
    except WavegenError as err:
        ran = ("error", str(err))
    try:
        engine = Engine(options, fast=fast)
        engine.add(InputDocument("bundle.yaml", data))
    except WavegenError as err:
        return ran, ("error", str(err))
    # repr, not ==: an alias may make a body refer to itself.
    return ran, repr([(o.uid, o.body, o.file, o.document, o.line) for o in engine.objects])


def assert_same(data: bytes, options: Options | None = None) -> None:
    options = options or Options(missing="ignore")
    assert _outcome(data, options, True) == _outcome(data, options, False)


def _options_for(path: Path) -> Options:
    config = path.parent / "config.yaml"
    return options_from(load_config(str(config))) if config.is_file() else Options(missing="ignore")


def test_every_fixture_file() -> None:
    assert len(FIXTURE_FILES) > 40
    for path in FIXTURE_FILES:
        try:
            options = _options_for(path)
        except WavegenError:
            options = Options(missing="ignore")
        assert_same(path.read_bytes(), options)


def test_benchmark_bundles(monkeypatch: pytest.MonkeyPatch) -> None:
    assert_same(workload_bundle(20).encode())
    assert_same(crd_bundle(12).encode())
    hand_edited = hand_edited_bundle()
    assert_same(hand_edited.encode())
    # Guard: the benchmark's hand-edited file has all three shapes, and the reader takes them.
    assert "\t" in hand_edited and hand_edited.count("\r\n") == hand_edited.count("\n") and not hand_edited.endswith("\n")
    assert all(fastparse.parse(piece.text) is not None for piece in split_stream(hand_edited))
    dashboards = dashboard_list(3)
    assert_same(dashboards.encode())
    # Guard: its List is read by the reader, each dashboard from the text (see _LiteralSpan).
    listed = split_stream(dashboards)[0].text
    taken: list[int] = []
    real = fastparse._LiteralSpan.scalar
    monkeypatch.setattr(fastparse._LiteralSpan, "scalar", lambda span, *arguments: taken.append(1) or real(span, *arguments))
    assert fastparse.parse(listed) is not None and len(taken) == 3
    assert fastparse.list_item_lines(listed) == [i for i, line in enumerate(listed.split("\n")) if line.startswith("- ")]


def test_the_fast_path_reads_ordinary_documents() -> None:
    """Guards against a reader that declines everything and so compares the reference with itself."""
    pieces = [p for p in split_stream(workload_bundle(3)) if p.text.strip()]
    assert all(fastparse.parse(p.text) is not None for p in pieces)
    deployments = [p.text for p in pieces if "kind: Deployment" in p.text]
    assert deployments and all(fastparse.template_node(d, ("spec", "template")) is not None for d in deployments)
    # Reading with the planner's fields notes where the template starts, and rendering starts there.
    fields = fields_read("Deployment", Options())
    for text in deployments:
        read = fastparse.parse(text, fields=fields)
        assert read is not None and read[2] is not None and read[2][0] == ("spec", "template")
        path, row, column = read[2]
        assert text.split("\n")[row] == " " * column + "metadata:"
        doc = DocumentText(text, line_starts(text))
        edits = [
            template_edits(doc, node, {"wavegen.io/config-hash": "h"})  # type: ignore[arg-type]
            for node in (fastparse.template_node(text, path, start=read[2]), fastparse.template_node(text, path))
        ]
        assert edits[0] == edits[1] and edits[0]


# Shapes of real manifests the reader once left to libyaml: keys beyond letters and dots
# (cilium's selectors, managedFields, kyverno's anchors, kustomize's directives, JVM options,
# "key : value" as gpu-operator's chart writes it) and "!!str" (chaos-mesh's chart).
REAL_KEYS_AND_TAGS = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
  managedFields:
  - fieldsV1:
      f:metadata:
        f:labels:
          .: {}
          f:app: {}
      f:spec:
        f:template:
          f:spec:
            k:{"name":"x"}:
              .: {}
spec:
  upgradePolicy:
    maxUnavailable : 25%
    Every day  : "x"
    "cpu" : "2"
  selector:
    matchLabels:
      k8s:io.kubernetes.pod.namespace: kube-system
      any:org: alliance
  template:
    spec:
      =(hostPID): "false"
      $patch: replace
      containers:
      - name: x
        args: ["--p", "1"]
        jvmOptions:
          -Xms: 8000m
        env:
        - name: PORT
          value: !!str 9288
        - name: LIST
          value: !!str  7, 8 # a comment
        - name: QUOTED
          value: !!str '1'
        command:
        - !!str 31766
"""


def test_the_reader_takes_the_keys_and_tags_of_real_manifests() -> None:
    read = fastparse.parse(REAL_KEYS_AND_TAGS)
    assert read is not None and read[0] == yaml.load(REAL_KEYS_AND_TAGS, Loader=yaml.CSafeLoader)
    assert fastparse.check_passed_through(REAL_KEYS_AND_TAGS.replace("kind: Deployment", "kind: Service"))
    assert not fastparse.check_passed_through(REAL_KEYS_AND_TAGS.replace("!!str", "!!int"))
    env = read[0]["spec"]["template"]["spec"]["containers"][0]["env"]
    assert [item["value"] for item in env] == ["9288", "7, 8", "1"]
    assert_same(("---\n" + REAL_KEYS_AND_TAGS).encode())


# Block scalars with no content, as a template that rendered nothing leaves them: libyaml reads
# "" whatever the chomping, and the next line goes on as the parent's (or an outer block's).
EMPTY_BLOCK_SCALARS = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  annotations:
    note: |-
data:
  a: |
  b: >+
# a comment at column 0
  c: |-
  d: x
  list:
  - |
  - e: >-
    f: |
  g: |"""


def test_empty_block_scalars_are_read_and_checked() -> None:
    read = fastparse.parse(EMPTY_BLOCK_SCALARS)
    assert read is not None and read[0] == yaml.load(EMPTY_BLOCK_SCALARS, Loader=yaml.CSafeLoader)
    assert read[0]["data"]["list"] == ["", {"e": "", "f": ""}] and read[0]["data"]["g"] == ""
    assert fastparse.check_passed_through(EMPTY_BLOCK_SCALARS.replace("kind: ConfigMap", "kind: Service"))
    assert_same(("---\n" + EMPTY_BLOCK_SCALARS + "\n").encode())
    # left to libyaml: blank lines before the next key (a kept one reads them), a tab where
    # libyaml looks for the indentation (it refuses it), an indentation indicator
    for other in ("  a: |+\n\n  b: 1\n", "  a: |\n  \tb: 1\n", "  a: |2\n  b: 1\n"):
        text = "kind: ConfigMap\ndata:\n" + other
        assert fastparse.parse(text) is None and not fastparse.check_passed_through(text.replace("ConfigMap", "Service"))


def test_a_quoted_key_past_libyamls_length_limit_is_refused_on_both_paths() -> None:
    """libyaml's 1024 characters for a simple key count a single-quoted key as written ("''" as
    two): the reader once measured the key's value and read what libyaml refuses."""
    for pairs, read in ((499, True), (520, False)):
        key = "'" + "''" * pairs + "'"
        text = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  {key}: v\n"
        assert (fastparse.parse(text) is not None) is read
        assert_same(("---\n" + text).encode())


INDENTS = st.sampled_from(["", " ", "  ", "   ", "    ", "      ", "        "])
PREFIXES = st.sampled_from(["", "", "- ", "-  ", "- - "])
KEYS = st.sampled_from(
    [
        *("", "a", "name", "data", "on", "1", "a.b/c-d", "<<", '"q"', "x y", "k", "k", "a:b", "k" * 1030, "k" * 990),
        # keys of real manifests beyond letters and dots (cilium, managedFields, kyverno, kustomize,
        # JVM options, hand-written "key : value"), and their near misses
        *("k8s:app", 'f:{"type":"Ready"}', "=(name)", "+(a.b/c)", "<(image)", "^(x)", "$patch", "-Xms", "a b  c"),
        *("k ", "k  ", "k" + " " * 9, "a :b", "a#b", "a #b", "a:", "a: b", "-", "- x", "?x", ":x", "~", "=", "<<x"),
        *("(c[?t == 'R'])", "a,b", "[x]", "{x}", "a\\b", "a'b", '"a"b', "1:20", "1 :", "yes ", "k" * 995 + "     "),
        # quoted keys with spaces before the ":", and single-quoted ones whose "''" take them past libyaml's 1024
        *('"q" ', "'q'  ", '"q"' + " " * 9, "'" + "''" * 499 + "'", "'" + "''" * 520 + "'", "''", '""'),
    ]
)
VALUES = st.sampled_from(
    [
        "",
        "",
        "v",
        "yes",
        "No",
        "1",
        "0x1F",
        "1_000",
        "1.5",
        ".inf",
        "~",
        "null",
        "2001-12-14",
        "=",
        "-1",
        "a b  ",
        "a:b",
        "a#b",
        "a #c",
        "é",
        '"dq"',
        '"a\\tb"',
        '"a\\/b"',
        '"',
        "'s''q'",
        "'",
        "|",
        "|-",
        "|+",
        "|2",
        ">",
        "{}",
        "[]",
        "{a: b}",
        "[1, 2]",
        "&x v",
        "*x",
        "!!str 1",
        "!!str  yes # c",
        "!!str ~",
        "!!str",
        "!!str 'q'",
        '!!str "1"',
        '!!str "a',
        "!!str |",
        "!!str [1]",
        "!!str&a 1",
        "!!str - x",
        "!!int 1",
        "!str 1",
        "# c",
        "key: v",
        "x:",
        "`",
        "%",
        "@",
        "a\x01b",
        "a\x7fb",
        "\u00a0x",
    ]
)
LINE = st.tuples(INDENTS, PREFIXES, KEYS, VALUES, st.sampled_from(["", "", " ", "  # c"]))


def _line(parts: tuple[str, str, str, str, str]) -> str:
    indent, prefix, key, value, tail = parts
    head = f"{key}:" if key else ""
    body = f"{head} {value}" if head and value else head or value
    return f"{indent}{prefix}{body}{tail}"


@st.composite
def documents(draw: st.DrawFn) -> bytes:
    """Block-style documents near the subset's edges, many of them invalid (then both must refuse alike)."""
    docs = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["ConfigMap", "Secret", "Deployment", "Service"]))
        lines = [_line(parts) for parts in draw(st.lists(LINE, max_size=8))]
        header = f"apiVersion: v1\nkind: {kind}\nmetadata:\n  name: n{len(docs)}\n"
        docs.append(header + "".join(line + "\n" for line in lines))
    ending = draw(st.sampled_from(["", "", "\n", "x"]))
    return ("---\n" + "---\n".join(docs) + ending).encode()


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents())
def test_generated_bundles(data: bytes) -> None:
    assert_same(data)


@st.composite
def nested(draw: st.DrawFn) -> bytes:
    """Valid, deeper block documents: mappings, indented and indentless sequences, literals."""

    def block(depth: int, indent: int) -> list[str]:
        out: list[str] = []
        step = draw(st.integers(1, 4))
        for index in range(draw(st.integers(1, 3))):
            key = f"k{index}"
            choice = draw(st.integers(0, 5 if depth < 3 else 2))
            pad = " " * indent
            if choice == 0:
                out.append(f"{pad}{key}: {draw(VALUES.filter(lambda v: v in ('v', 'yes', '1', '~', 'a b  ', '{}', '[]')))}")
            elif choice == 1:
                out.append(f"{pad}{key}: {draw(st.sampled_from(['|', '|-']))}")
                text = draw(st.lists(st.sampled_from(["x", "  y", "", "# z", "a: b"]), min_size=1, max_size=4))
                text[0] = text[0] or "x"
                text[0] = text[0].lstrip() or "x"
                out.extend(f"{pad}{' ' * step}{t}" if t else "" for t in text)
            elif choice == 2:
                out.append(f"{pad}{key}:")
            elif choice == 3:
                out.append(f"{pad}{key}:")
                out.extend(block(depth + 1, indent + step))
            else:
                out.append(f"{pad}{key}:")
                seq_indent = indent + (0 if choice == 4 else step)
                for _ in range(draw(st.integers(1, 2))):
                    inner = block(depth + 1, seq_indent + 2)
                    inner[0] = " " * seq_indent + "- " + inner[0].lstrip(" ")
                    out.extend(inner)
        return out

    body = "\n".join(block(0, 2)) + "\n"
    kind = draw(st.sampled_from(["ConfigMap", "Deployment"]))
    return f"apiVersion: v1\nkind: {kind}\nmetadata:\n  name: n\nspec:\n{body}".encode()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nested())
def test_generated_nested_documents(data: bytes) -> None:
    assert_same(data)


TEMPLATE_METADATA = st.sampled_from(
    [
        "",
        "{pad}metadata:\n",
        "{pad}metadata: {{}}\n",
        "{pad}metadata:\n{pad}  labels:\n{pad}    app: a\n",
        "{pad}metadata:\n{pad}  annotations:\n",
        "{pad}metadata:\n{pad}  annotations: {{}}\n",
        "{pad}metadata:\n{pad}  annotations:\n{pad}    other: x\n",
        "{pad}metadata:\n{pad}  annotations:\n{pad}    # a comment\n{pad}    other: 'x'\n",
        "{pad}metadata:\n{pad}  annotations:\n{pad}    wavegen.io/config-hash: stale\n",
        '{pad}metadata:\n{pad}  annotations:\n{pad}    wavegen.io/config-hash: "stale"\n{pad}    b: c\n',
        "{pad}metadata:\n{pad}  annotations:\n{pad}    wavegen.io/config-hash: 'stale'  \n",
        "{pad}metadata:\n{pad}  annotations:\n{pad}    wavegen.io/config-hash:\n",
        "{pad}metadata:\n{pad}  annotations:\n{pad}    wavegen.io/config-hash: |\n{pad}      x\n",
        "{pad}metadata:\n{pad}  annotations:\n{pad}    wavegen.io/unhashed-refs: x\n",
        "{pad}metadata:\n{pad}  annotations:\n{pad}    a: 1\n{pad}    wavegen.io/config-hash: 1\n",
        "{pad}metadata:\n{pad}   labels: {{}}\n{pad}   annotations:\n{pad}       z: z\n",
        "{pad}metadata:\n{pad}  annotations:\n{pad}    nested:\n{pad}      deeper: x\n",
        "{pad}metadata:\n{pad}  annotations:\n{pad}    list:\n{pad}    - x\n",
        "{pad}metadata:\n{pad}  labels: {{app: a,\n{pad}    tier: b}}\n{pad}  annotations:\n{pad}    z: z\n",
        "{pad}metadata:\n{pad}  annotations: {{a: b,\n{pad}  c: d\n{pad}  }}\n",
        "{pad}metadata:\n{pad}  annotations:\n{pad}    empty: |-\n{pad}    other: x\n",
        "{pad}metadata:\n{pad}  annotations:\n{pad}    wavegen.io/config-hash: |\n",
        "{pad}metadata:\n{pad}  labels:\n{pad}    a: >+\n{pad}  annotations:\n{pad}    z: |\n",
        # helm's `toYaml` of an empty map, and of a flow one, on the line after the key
        "{pad}metadata:\n{pad}  annotations:\n{pad}    {{}}\n",
        "{pad}metadata:\n{pad}  annotations:\n{pad}    {{a: b}}  # c\n",
        "{pad}metadata:\n{pad}  annotations:\n{pad}      {{wavegen.io/config-hash: x}}\n{pad}  labels:\n{pad}    {{}}\n",
        "{pad}metadata:\n{pad}    {{}}\n",
        "{pad}metadata:\n{pad}  annotations:\n{pad}    []\n",
    ]
)
TEMPLATE_SPEC = st.sampled_from(
    [
        "{pad}spec:\n{pad}  containers:\n{pad}  - name: c\n{pad}    envFrom:\n{pad}    - configMapRef:\n{pad}        name: cm\n",
        "{pad}spec:\n{pad}    containers:\n{pad}      - name: c\n"
        "{pad}        envFrom:\n{pad}          - configMapRef: {{name: cm}}\n",
        "{pad}spec:\n{pad}  volumes:\n{pad}  - name: v\n{pad}    configMap:\n{pad}      name: cm\n",
        '{pad}spec:\n{pad}  containers:\n{pad}  - name: c\n{pad}    command: ["/hello",\n{pad}              "--port=80"]\n'
        "{pad}    envFrom: [{{configMapRef: {{name: cm}}}}]\n",
        "{pad}spec:\n{pad}  containers:\n{pad}  - name: c\n{pad}    args: [\n{pad}      --a,\n{pad}      --b\n{pad}    ]\n"
        "{pad}    envFrom:\n{pad}    - configMapRef: {{\n{pad}        name: cm\n{pad}      }}\n",
        "{pad}spec: {{}}\n",
    ]
)


@st.composite
def workloads(draw: st.DrawFn) -> bytes:
    """A ConfigMap and a Deployment whose pod template metadata takes many shapes (edited by the splicer)."""
    step = draw(st.sampled_from([1, 2, 3, 4]))
    pad = " " * (2 * step)
    parts = draw(st.permutations([TEMPLATE_METADATA, TEMPLATE_SPEC, st.just("{pad}# note\n")]))
    template = "".join(draw(part).format(pad=pad) for part in parts)
    comment = draw(st.sampled_from(["", "# leading\n"]))
    head = " " * step
    deployment = (
        f"---\n{comment}apiVersion: apps/v1\nkind: Deployment\nmetadata:\n{head}name: d\nspec:\n"
        f"{head}replicas: 1\n{head}template:\n{template}"
    )
    data = draw(st.sampled_from(["data:\n  a: b\n", "data: {}\n", ""]))
    configmap = f"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n{data}"
    return (configmap + deployment).encode()


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads())
def test_generated_pod_templates(data: bytes) -> None:
    """Template edits from the reader's nodes equal those from libyaml's (including every fallback)."""
    assert_same(data)


@st.composite
def listed_workloads(draw: st.DrawFn) -> bytes:
    """The ConfigMap and Deployment above as items of a List, as ``kubectl get -o yaml``
    writes one (and people by hand): dashes at the root's column or indented, a dash alone on
    its line, other items around them; the ConfigMap perhaps left out, so that the Deployment's
    reference is a finding whose line is looked up in the List; LF, CRLF or both."""
    configmap, deployment = draw(workloads()).decode().split("---\n")[1:]
    step = draw(st.sampled_from([0, 2]))
    pad = " " * step
    documents = [deployment] if draw(st.booleans()) else [configmap, deployment]
    documents.insert(draw(st.integers(0, len(documents))), "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n")
    if draw(st.booleans()):  # an item that is no object, between the windows of those that are
        documents.insert(draw(st.integers(0, len(documents))), draw(st.sampled_from(["note", "[]", "- nested"])))
    items: list[str] = []
    for document in documents:
        lines = [line for line in document.rstrip("\n").split("\n") if not line.startswith("#")]
        head = f"{pad}-\n{pad}  {lines[0]}" if draw(st.booleans()) else f"{pad}- {lines[0]}"
        items.append("\n".join([head, *(f"{pad}  {line}" if line else "" for line in lines[1:])]) + "\n")
    breaks = draw(st.sampled_from(["LF", "CRLF", "mixed"]))
    if breaks == "mixed":  # CRLF in the first item alone: a document's inserted lines end as its first CRLF says
        items[0] = items[0].replace("\n", "\r\n")
    text = "apiVersion: v1\nkind: List\nitems:\n" + "".join(items) + "metadata:\n  resourceVersion: ''\n"
    return (text.replace("\n", "\r\n") if breaks == "CRLF" else text).encode()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(listed_workloads())
def test_generated_pod_templates_in_lists(data: bytes) -> None:
    """A List item's template edits and the lines of its findings from the reader's rows equal libyaml's."""
    assert_same(data, Options(missing="warn"))


def test_a_lists_items_are_edited_and_located_without_composing_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Guard: the List the generated ones stand for is edited and its findings located from the
    reader's rows, not by composing it again (which took a List of 2.9 MB 0.3 s a run)."""
    data = (
        b"apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: cm\n"
        b"  data:\n    a: b\n- no object\n-\n  apiVersion: apps/v1\n  kind: Deployment\n  metadata:\n    name: d\n  spec:\n"
        b"    template:\n      metadata:\n        labels:\n          app: a\n      spec:\n        containers:\n"
        b"        - name: c\n          envFrom:\n          - configMapRef:\n              name: cm\n"
        b"          - secretRef:\n              name: gone\n"
        b"- spec:\n    template:\n      spec:\n        volumes:\n        - configMap:\n            name: cm\n"
        b"          name: v\n  apiVersion: apps/v1\n  kind: Deployment\n  metadata:\n    name: e\n"
        b"- apiVersion: apps/v1\n  kind: Deployment\n  metadata:\n    name: f\n  spec:\n    template:\n      spec:\n"
        b"        volumes:\n        - configMap:\n            name: cm\n          name: v\n"
    )
    expected = _outcome(data, Options(), False)
    composed: list[str] = []
    real = nodes_module.compose
    monkeypatch.setattr(nodes_module, "compose", lambda text, *rest: composed.append(text) or real(text, *rest))
    assert _outcome(data, Options(), True) == expected
    assert composed == []
    outputs, findings, _ = expected[0]
    assert outputs[0].count(b"      metadata:\n        annotations:\n          wavegen.io/config-hash: ") == 3  # d's, e's and f's
    assert len(findings) == 1 and "Secret" in findings[0] and "line=27," in findings[0]


def _true_depth(text: str) -> int:
    depth = deepest = 0
    for event in yaml.parse(text, Loader=yaml.CSafeLoader):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            deepest = max(deepest, depth)
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1
    return deepest


@st.composite
def deep_documents(draw: st.DrawFn) -> str:
    """Valid documents nesting close to MAX_DEPTH through every construct that adds a level cheaply."""
    lines: list[str] = []
    column = 0
    flows = 0
    loose = draw(st.booleans())
    shapes = ["map1", "map2", "seq-item", "flow"] + (["seq-same-column", "seq-nested"] if loose else [])
    for _ in range(draw(st.integers(MAX_DEPTH - 32, MAX_DEPTH + 2))):
        how = draw(st.sampled_from(shapes))
        pad = " " * column
        if how == "flow":
            flows += 1
            continue
        if how == "seq-item":
            # "k:" then "- k:" at the same column: two levels in two columns
            lines.append(f"{pad}k:")
            lines.append(f"{pad}- k:")
            column += 3
        elif how in ("map1", "map2"):
            lines.append(f"{pad}k:")
            column += 1 if how == "map1" else 2
        elif how == "seq-same-column":
            lines.append(f"{pad}k:")
            lines.append(f"{pad}-")
            column += 1
        else:
            lines.append(f"{pad}-")
            column += 1
    pad = " " * column
    opened = closed = ""
    for _ in range(flows):
        opener = draw(st.sampled_from(["[", "{a: ", "[ ", "[x, ", "{? ", "!!seq ["]))
        opened += opener
        closed = ("]" if "[" in opener else "}") + closed
    if flows and draw(st.booleans()):
        # A flow collection may continue on the next line, even at a lower column.
        opened += "\n"
    lines.append(f"{pad}{opened}x{closed}")
    lines.append(f"description: a [plain] scalar with {{braces}} and [brackets[ x{flows}")
    return "\n".join(lines) + "\n"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(deep_documents())
def test_the_depth_pre_check_never_waves_a_deep_document_through(text: str) -> None:
    try:
        depth = _true_depth(text)
    except Exception:
        return
    try:
        check_depth(text)
    except WavegenError:
        assert depth > MAX_DEPTH
    else:
        assert depth <= MAX_DEPTH


def test_unprintable_characters_are_those_libyaml_refuses() -> None:
    """The reader's own character check agrees with libyaml's reader, code point by code point."""
    points = [*range(0x3000), *range(0xD7F0, 0xE010), *range(0xFFF0, 0x10010), 0x10FFFF]
    for point in points:
        char = chr(point)
        if char in "\n\r\x85\u2028\u2029":
            continue  # line breaks; the reader declines all but LF anyway
        try:
            yaml.load(f"a: x{char}y\n", Loader=yaml.CSafeLoader)
            accepted = True
        except (yaml.YAMLError, UnicodeEncodeError):
            accepted = False
        assert accepted is not bool(re.search(fastparse._NOT_PRINTABLE, char)), hex(point)


def test_no_value_outlives_its_run() -> None:
    """Resolved values are cached per run only: a Secret's data must not stay in module state."""
    value = "c2VjcmV0LXZhbHVlLW9mLXRoaXMtdGVzdA=="
    bundle = f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\ndata:\n  password: {value}\n".encode()
    run([InputDocument("bundle.yaml", bundle)], Options(missing="ignore"))
    for module in (fastparse, refs):
        for name, held in vars(module).items():
            if isinstance(held, dict):  # the value, its line, or anything holding either
                assert value not in repr(held), f"{module.__name__}.{name}"


def _nested_configmap(levels: int) -> bytes:
    lines = ["apiVersion: v1", "kind: ConfigMap", "metadata:", "  name: deep", "data:"]
    lines += [f"{' ' * (2 * level)}k{level}:" for level in range(1, levels)]
    lines.append(f"{' ' * (2 * levels)}x: {{}}")
    return ("\n".join(lines) + "\n").encode()


def test_the_reader_keeps_to_the_depth_limit() -> None:
    """Near and past MAX_DEPTH both paths agree: the reader declines what it cannot vouch for."""
    for levels in (MAX_DEPTH - 6, MAX_DEPTH - 3, MAX_DEPTH - 2, MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 4):
        data = _nested_configmap(levels)
        assert_same(data)
    too_deep, whole = _outcome(_nested_configmap(MAX_DEPTH + 4), Options(missing="ignore"), True)
    assert too_deep[0] == "error" and "nests deeper" in too_deep[1] and whole == too_deep
    assert fastparse.parse(_nested_configmap(MAX_DEPTH - 6).decode()) is not None
    assert fastparse.parse(_nested_configmap(MAX_DEPTH).decode()) is None


# Line breaks, markers, and characters near those the screen looks for, as Latin-1 and UTF-8
# text holds them (an en dash and a quote make descriptions UTF-8).
_SCREENED_CHARACTERS = "a: -\n.%\t\xa0\x9f\x85\xe9\xb5\u2013\u2019\u2028\u2029\u2030\ufeff\ufffd\ufffe\uffff\ud800\udfff\x7f\x00"


@settings(max_examples=500, deadline=None)
@given(
    st.text(alphabet=st.characters(max_codepoint=0x250, blacklist_categories=["Cs"]))
    | st.text()
    | st.text(alphabet=st.sampled_from(list(_SCREENED_CHARACTERS)))
)
@example("a: b\n...\n")
@example("a: b\n%x\n")
@example("a: b\n---x\n")
@example("a: \\b\n")
@example("a:\tb\n")
@example("a: \x7f\n")
@example("a: é\x85\n")
@example("a: b\n")
@example("a: \u2013\ud800\n")
@example("a: \u2019\ufffe\n")
@example("a: \xa0\uffff\n")
@example("a: \u2027\u2028\n")
@example("a: \ufeff\n")
@example("a: \xc2\x9f\n")
@example("a: \U0001f600\x7f\n")
@example("a: é\n...\n")
def test_the_character_screen_equals_a_search_for_each_part(text: str) -> None:
    """One C pass over a document (Latin-1 or UTF-8) finds what a search for each part and the pattern find,
    whether it looks where a first byte is or searches for each character that byte starts."""
    expected = any(part in text for part in fastparse._UNREAD) or re.search(fastparse._NOT_PRINTABLE, text) is not None
    few = fastparse._FEW_FIRST_BYTES
    try:
        for fastparse._FEW_FIRST_BYTES in (0, 1, 1 << 30):
            assert fastparse._unreadable(text) is expected
    finally:
        fastparse._FEW_FIRST_BYTES = few


@settings(max_examples=500, deadline=None)
@given(
    st.text(alphabet=st.characters(max_codepoint=0x250, blacklist_categories=["Cs"]))
    | st.text(alphabet=st.characters(blacklist_categories=["Cs"]))
    | st.text(alphabet=st.sampled_from([c for c in _SCREENED_CHARACTERS if not "\ud800" <= c <= "\udfff"]))
)
@example("a: \u2013\n")
@example("a: \u2028\n")
@example("a: \r\n")
def test_the_screen_of_an_inputs_bytes_finds_the_characters_of_its_text(text: str) -> None:
    """refused_utf8 on an input's bytes finds the characters the screen of its text finds (not
    the marker lines, which split_marked screens): where it finds none, no piece holds one."""
    expected = any(len(part) == 1 and part in text for part in fastparse._UNREAD)
    expected = expected or re.search(fastparse._NOT_PRINTABLE, text) is not None
    few = fastparse._FEW_FIRST_BYTES
    try:
        for fastparse._FEW_FIRST_BYTES in (0, 1, 1 << 30):
            assert fastparse.refused_utf8(text.encode("utf-8")) is expected
    finally:
        fastparse._FEW_FIRST_BYTES = few


# Documents past Latin-1 (an en dash, a right quote), each alone and with a character that
# the screen refuses in another document of the same input.
_BEYOND_LATIN1 = (
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: \u201cquoted\u201d \u2013 text\n"
    "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    metadata:\n"
    "      annotations:\n        wave.pusher.com/update-on-config-change: 'true'\n    spec:\n"
    "      containers:\n      - name: c\n        envFrom:\n        - configMapRef:\n            name: c\n"
)


@pytest.mark.parametrize(
    "other",
    [
        "",
        '---\nkind: Service\nmetadata:\n  name: s\n  labels:\n    a: "x\u2028y"\n',
        '---\nkind: Service\nmetadata:\n  name: s\n  labels:\n    a: "x\x85y"\n',
        "---\r\nkind: Service\r\nmetadata:\r\n  name: s\r\n",
    ],
)
def test_inputs_past_latin1_are_screened_once_from_their_bytes(other: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run on a UTF-8 input whose bytes hold nothing the screen refuses reads it without
    encoding a piece's text again to look at it; one that holds such a character somewhere has
    each piece looked at, as before; both as libyaml reads them."""
    data = (_BEYOND_LATIN1 + other).encode("utf-8")
    assert_same(data)
    encoded: list[int] = []
    real = fastparse._refused_beyond_latin1
    monkeypatch.setattr(fastparse, "_refused_beyond_latin1", lambda text: encoded.append(1) or real(text))
    run([InputDocument("bundle.yaml", data)], Options(missing="ignore"))
    assert bool(encoded) is bool(other)


@settings(max_examples=300, deadline=None)
@given(st.lists(LINE, min_size=1, max_size=12))
def test_rows_split_from_known_heads_equal_the_pattern_split(parts: list[tuple[str, str, str, str, str]]) -> None:
    """A line whose head (indentation, dash, key) was seen before is split without the pattern, identically."""
    lines = [_line(p) for p in parts]
    for line in lines:
        fastparse._row(line, {})  # learns the heads
    known = dict(fastparse._HEADS)
    for line in lines:
        fastparse._HEADS.clear()
        by_pattern = fastparse._row(line, {})
        fastparse._HEADS.update(known)
        assert fastparse._row(line, {}) == by_pattern, line
    fastparse._row("    - name: x", {})
    assert fastparse._HEADS["    - name"] == (4, " ", "name")  # guards against a head path never taken


# ---- the styles people write (issue 22): the reader now takes them, so they are held to libyaml


SCALARS = st.sampled_from(
    [
        "v", "yes", "No", "1", "1.5", "~", "null", "0x1F", "2001-12-14", "-1", "-x", "--flag=1", "a b", "é", "x/y.z", "?q",
        ":c", "<Client ID>", "<<", "=", "=x", "<", "!!str 1", "!!str  x y", "!!str 'q'", "!!str", "!!int 2",
    ]
)  # fmt: skip
QUOTED = st.sampled_from(
    [
        '"plain"', '"a: b"', '"# not a comment"', '"tab\\there"', '"new\\nline"', '"\\"q\\""', '"\\\\"', '"\\x41\\u00e9"',
        '"\\U0001F600"', '"\\e\\0\\a"', '"\\N\\_\\L\\P"', '"\\ "', '"\\/"', '"\\q"', '"\\ud800"', '"\\x4"',
        "'single'", "'it''s'", "'a: b # c'", "''", '""', "'\\n'",
    ]
)  # fmt: skip
FLOWS = st.sampled_from(
    [
        "{}", "[]", "{a: b}", "{a: b, c: d}", '{a: "b", c: \'d\'}', "[1, 2]", '["x", y]', "[ a , b ]", "{a: [1, {b: c}]}",
        "[{name: x, value: y}]", "{a: b,}", "[a, ]", "{a: b", "[a", "{a:b}", "{a: b: c}", "[a: b]", "{1: x}", "{a: b, a: c}",
        "[-x, --y]", "[- x]", "{a: {b: {c: {d: e}}}}", "[a, [b, [c]]]", "{a: b} # c", "{a: b}#c", "[x] tail", "[http://x]",
        "{? a}", "[a #b]", "[<a>, =x]", "{k: <<}", "[=]",
        '["a, b", c]', "{a: b , c: d}", '{a: "x", b: \'y\'}', '["a","b"]', "[a b, c]", "{a:   b}", "{a: -1, b: ~}",
        "['it''s']", "{url: http://x}", "[*a]", '{"k": v}', '[a"b]', "{a: b}  ", "{a: b, c: d, a: e}", '["x" ]',
        "{a: yes, b: 0o7}", "[,]", "{a: }", '{a: ""}', "{a: 'b, c'}", "{?a: b}", "[?x]", "[x, ?y]", "{a: ?b}",
        "{a: 'b''c'}", '{"a": 1}', "['a': 1]", "[a, }", "{a: b, ]", "[a, b, ]", "{a: b, c: d, }",
        # longer quoted scalars, which a break may split anywhere (see _flow_lines_by_hand)
        '["/bin/sh", "-c", "cp /a /b && run # not a comment, ]"]', "['it''s a, b', 'c d  e']", '{cmd: "a: b [c] {d}", x: y}',
        '["x \\" y", "z \\\\ w"]', '''['a # b', "c' d"]''', '{"k y": "v w", \'q r\': s}',
    ]
)  # fmt: skip
COMMENTS = st.sampled_from(["", "", "", "  # c", " #c", " # a: b"])


def _block_scalar_lines(draw: st.DrawFn, pad: str) -> list[str]:
    header = draw(st.sampled_from(["|", "|-", "|+", ">", ">-", ">+", "|2", "|1-", "|-2", ">2", "|+1", "| # c", ">9"]))
    lines = draw(
        st.lists(
            st.sampled_from(["x", "x y", "", "  more", "# z", "a: b", "- item", "   ", "long text", "\tx", "a\tb", "\t", " \t"]),
            min_size=0,  # none: an empty scalar (a template that rendered no text)
            max_size=5,
        )
    )
    deep = pad + "  " + draw(st.sampled_from(["", "", " "]))
    return [header, *(deep + line if line else "" for line in lines)]


def _flow_lines_by_hand(draw: st.DrawFn, pad: str) -> list[str]:
    """A flow collection broken over lines as people write them by hand: after commas and
    brackets, or anywhere (inside quotes and plain scalars too); later lines at any
    indentation, blank lines, comments and trailing spaces."""
    text = draw(FLOWS)
    cuts = sorted(set(draw(st.lists(st.integers(1, max(len(text) - 1, 1)), min_size=1, max_size=3))))
    if draw(st.booleans()):
        cuts = sorted({m.end() for m in re.finditer(r"[,\[{]", text)} | {m.start() for m in re.finditer(r"[\]}]", text)})
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True) if text[a:b]]
    indents = st.sampled_from([pad + "    ", pad + "  ", pad + " ", pad, "", pad + "      "])
    lines = [pieces[0] + draw(st.sampled_from(["", "", "  ", " # c"]))]
    for piece in pieces[1:]:
        if draw(st.integers(0, 6)) == 0:
            lines.append(draw(st.sampled_from(["", "", "  ", pad + "  # a comment, [x, y]", "# c", pad + '  # "q'])))
        lines.append(draw(indents) + piece.lstrip(" ") + draw(st.sampled_from(["", "", "", " ", " #c", "  # c, ]", "#x"])))
    return lines


# Lines of a quoted scalar over several lines: folding, escapes, escaped breaks, spaces, indicators.
QUOTED_LINES = st.sampled_from(
    ["x", "two words", "", "   ", "end\\", "tab\\t", "sp\\ ", "a: b", "# c", "- d", "it''s", '\\"q\\"', "trail  ", "x #y", "a\tb",
     "trail\t", "\tlead",
     # go-yaml's folded JSON: an escaped space first, escaped quotes and backslashes, a rarer
     # escape (its own or one libyaml refuses) among the usual ones, spaces inside
     '\\ \\"k\\": 1,', "esc\\\\", "esc\\\\  ", "\\\\\\\\", '\\U0001F600 \\"x\\"', "\\x41\\u00e9", "\\uD800", "\\q", "a   b",
     "\\ \\ ", "''", "'"]
)  # fmt: skip


def _quoted_over_lines(draw: st.DrawFn, pad: str) -> list[str]:
    quote = draw(st.sampled_from(['"', "'"]))
    first = draw(QUOTED_LINES)
    more = draw(st.lists(QUOTED_LINES, min_size=1, max_size=4))
    # Each later line at its own indentation: past the key, at its column, or left of it (down
    # to column 0), all of which libyaml takes.
    indents = st.sampled_from([pad + "  ", pad + "    ", pad + " ", pad, pad[:-2], pad[:-1], ""])
    tail = draw(st.sampled_from(["", "", " # c", " x", "  "]))
    body = [draw(indents) + line if line else "" for line in more]
    body[-1] = f"{draw(indents)}{more[-1]}{quote}{tail}"
    return [quote + first, *body]


# Lines after a plain scalar's first: text, indicators first (all continue it but ": "), comments.
PLAIN_CONTINUATIONS = [
    "cont", "more text", "", "# c", "x: y", "- d", '"quoted", "list"], which', "'q' x", "[a, b]", "{x}", "`code`",
    "*", "&a", "!t", "|", ">", "%", "@", "?x", "? x", ":x", "-", "- ", ": y", "x:", "x #c", "a#b", "tab\tin", "last\t",
    "\tlead",
]  # fmt: skip


@st.composite
def styled(draw: st.DrawFn) -> bytes:
    """Documents in every style at once: flow collections, quoted and block scalars, multi-line
    plain scalars, values on the next line, quoted keys, bare dashes and comments, valid or not."""

    def value(pad: str, depth: int) -> list[str]:
        choice = draw(st.integers(0, 8 if depth < 3 else 5))
        if choice == 0:
            return [draw(SCALARS) + draw(COMMENTS)]
        if choice == 1:
            if draw(st.booleans()):
                return _quoted_over_lines(draw, pad)
            return [draw(QUOTED) + draw(COMMENTS)]
        if choice == 2:
            if draw(st.booleans()):
                return _flow_lines_by_hand(draw, pad)
            return [draw(FLOWS)]
        if choice == 3:
            head, *rest = _block_scalar_lines(draw, pad)
            return [head, *rest]
        if choice == 4:  # a plain scalar over several lines
            more = draw(st.lists(st.sampled_from(PLAIN_CONTINUATIONS), min_size=1, max_size=3))
            return [draw(SCALARS), *(f"{pad}  {m}" if m else "" for m in more)]
        if choice == 5:  # the value on the next line
            return ["" + draw(COMMENTS), f"{pad}  {draw(st.one_of(SCALARS, QUOTED, FLOWS))}"]
        if choice == 6:
            return ["" + draw(COMMENTS), *mapping(pad + draw(st.sampled_from(["  ", "    ", " "])), depth + 1)]
        if choice == 7:  # a sequence, some items alone on their dash
            step = draw(st.sampled_from(["", "  "]))
            out = [draw(COMMENTS)]
            for _ in range(draw(st.integers(1, 3))):
                how = draw(st.integers(0, 2))
                if how == 2:  # "- - key: x": a sequence opened on the item's line (Argo Workflows' steps)
                    inner = mapping(pad + step + "    ", depth + 2)
                    first = inner[0][len(pad + step) + 4 :]
                    out.append(f"{pad}{step}- - {first}" if first and first[0] not in " #" else f"{pad}{step}- -")
                    out.extend(inner[1:])
                elif how == 1:
                    inner = mapping(pad + step + "  ", depth + 1)
                    out.append(f"{pad}{step}-")
                    out.extend(inner)
                else:
                    item = value(pad + step + "  ", depth + 1)
                    out.append(f"{pad}{step}- {item[0]}".rstrip(" "))
                    out.extend(item[1:])
            return out
        return [draw(st.sampled_from(["&a x", "*a", "!!str 1", "? x", "x: y"]))]

    def mapping(pad: str, depth: int) -> list[str]:
        out: list[str] = []
        for index in range(draw(st.integers(1, 3))):
            if draw(st.integers(0, 5)) == 0:
                out.append(pad + draw(st.sampled_from(["# comment", "#", "# k: v"])))
            key = draw(
                st.sampled_from(
                    [
                        *(f"k{index}", f'"k {index}"', f"'k{index}'", f"k.{index}/x-y", f'"q\\"{index}"'),
                        *(f"k8s:k{index}", f"=(k{index})", f"$k{index}", f"k {index}", f"k{index} ", f"-k{index}"),
                        *(f'"k{index}" ', f"'k{index}" + "''" * 520 + "'"),
                    ]
                )
            )
            head, *rest = value(pad, depth)
            out.append(f"{pad}{key}: {head}".rstrip(" ") if head else f"{pad}{key}:")
            out.extend(rest)
        return out

    kind = draw(st.sampled_from(["ConfigMap", "Deployment", "Secret", "Service"]))  # a Service is passed through
    body = "\n".join(mapping("  ", 0)) + "\n"
    header = draw(st.sampled_from(["", "# Source: chart/templates/x.yaml\n"]))
    metadata = draw(
        st.sampled_from(
            [
                "metadata:\n  name: n\n",
                "metadata: {name: n}\n",
                'metadata: {name: "n", labels: {a: b}}\n',
                "metadata:\n  name: n\n  labels: {a: b, a: c}\n",  # a key twice where nobody reads
            ]
        )
    )
    # helm's comment for a template that rendered nothing, as a piece of its own
    empty = draw(st.sampled_from(["", "---\n# Source: chart/templates/off.yaml\n", "---\n# Source: x\x07.yaml\n"]))
    start = draw(st.sampled_from(["---", "---", "--- ", "---   ", "--- # c", "---  #c", "---#c", "--- x"]))
    return f"{start}\n{header}apiVersion: v1\nkind: {kind}\n{metadata}data:\n{body}{empty}".encode()


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(styled())
def test_generated_styles(data: bytes) -> None:
    assert_same(data)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(styled(), st.integers(1, 40))
def test_lines_split_a_part_at_a_time_and_shared_read_the_same(data: bytes, part: int) -> None:
    """The reader reads a long document's lines split in parts, equal ones one object
    (_shared_lines): the same values, lines and verdicts as its lines split at once."""
    pieces = split_stream(data.decode())
    at_once = [repr(fastparse.parse(piece.text)) for piece in pieces]
    threshold, size = fastparse._SHARED_LINES_CHARS, fastparse._SHARED_PART_CHARS
    fastparse._SHARED_LINES_CHARS, fastparse._SHARED_PART_CHARS = 0, part
    try:
        for piece in pieces:
            document = fastparse.document_text(piece.text) or ""
            lines = fastparse._shared_lines(document)
            assert lines == document.split("\n")
            assert len({id(line) for line in lines}) == len(set(lines))
        assert [repr(fastparse.parse(piece.text)) for piece in pieces] == at_once
    finally:
        fastparse._SHARED_LINES_CHARS, fastparse._SHARED_PART_CHARS = threshold, size


def _labelled_deployment(labels: str) -> bytes:
    """A Deployment whose labels (which the planner does not read) are written as ``labels``."""
    return f"---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  labels: {labels}\n".encode()


def test_a_key_twice_in_a_flow_mapping_nobody_reads_is_an_error_on_both_paths() -> None:
    """Flow collections outside the planner's fields are only shaped; libyaml accepts a key twice, the reference does not."""
    for flow in ("{app: x, app: y}", "{a: {b: 1, b: 2}}", "[{name: a, name: b}]", "{a, a}", "[{x: 1, y: 2}, {x: 1, x: 2}]"):
        data = _labelled_deployment(flow)
        ran, _ = _outcome(data, Options(missing="ignore"), True)
        assert ran[0] == "error" and "duplicate key" in ran[1], flow
        assert_same(data)


def test_an_alias_anchor_or_tag_in_a_flow_nobody_reads_is_composed() -> None:
    """libyaml's parser passes an undefined alias, an anchor twice or an unknown tag; the reference composer may not."""
    for flow, error in (("[*a]", "undefined alias"), ("[&a x, &a y]", None), ("[!x 1]", None), ("{k: *b}", "undefined alias")):
        data = _labelled_deployment(flow)
        ran, _ = _outcome(data, Options(missing="ignore"), True)
        assert error is None or (ran[0] == "error" and error in ran[1]), (flow, ran)
        assert_same(data)


@st.composite
def quoted_over_lines_documents(draw: st.DrawFn) -> bytes:
    """ConfigMaps whose values are quoted scalars over several lines (and sometimes a sequence of them)."""
    lines = ["---", "apiVersion: v1", "kind: ConfigMap", "metadata:", "  name: q", "data:"]
    for index in range(draw(st.integers(1, 4))):
        if draw(st.booleans()):
            head, *rest = _quoted_over_lines(draw, "  ")
            lines.extend([f"  k{index}: {head}", *rest])
        else:
            head, *rest = _quoted_over_lines(draw, "    ")
            lines.extend([f"  k{index}:", f"    - {head}", *rest])
    return ("\n".join(lines) + "\n").encode()


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(quoted_over_lines_documents())
def test_generated_quoted_scalars_over_lines(data: bytes) -> None:
    assert_same(data)


# A dashboard as go-yaml folds a long JSON text into a double-quoted scalar: escaped quotes and
# line breaks, a line starting with an escaped space, one rarer escape among thousands of usual
# ones; then the less usual lines between: an escaped line break, an empty line, text ending in
# an escaped backslash, spaces inside.
GO_YAML_DASHBOARD = "\n".join(
    [
        r'  dash.json: "{\n  \"panels\": [\n    {\n      \"title\": \"CPU \U0001F600\",\n',
        *(rf"    \     \"p{n}\": \"{n}   apart\",\n\\\\\n" for n in range(60)),
        '    \\ \\ \\"broken\\": \\"here\\',
        r"      and\\",
        "",
        r'    there\"\n  ]\n}"',
        "",
    ]
)


def test_a_long_quoted_scalar_on_one_line_is_read_without_a_state_for_each_escape() -> None:
    """Helm's ``toJson`` of a dashboard writes its JSON as one double-quoted line with an escape
    every few characters: the quoted-scalar patterns are possessive, so matching one keeps no
    state to backtrack to for each escape (a greedy repeat kept 12.8 MB for 96,000 escapes in
    880 KB). The reader's copies of the text (its line, the scalar, its value) stay a few."""
    import tracemalloc

    text = quoted_dashboards(1, panels=1500).split("---\n")[1]
    assert len(text) > 800_000 and text.count("\\") > 80_000
    for quote in ('"', "'"):
        document = text if quote == '"' else text.replace(text[text.index(': "') + 2 :], "'" + "x''" * 300_000 + "'\n")
        tracemalloc.start()
        try:
            read = fastparse.parse(document)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert read is not None and peak < 8 * len(document), (quote, peak)
    assert_same(text.encode())


def test_long_lines_and_values_are_not_kept_for_the_next_documents() -> None:
    """The run's caches of split lines and plain values keep short ones alone: a long line
    seldom comes again, and its row would keep its text twice past its document."""
    long_json = '"' + "x" * 600 + '"'
    long_plain = "y" * 600
    text = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: {long_json}\n  b: {long_plain}\n  c: short\n"
    rows: fastparse.RowCache = {}
    plains: dict[str, Any] = {}
    read = fastparse.parse(text, plains, None, rows)
    assert read is not None and read[0]["data"] == {"a": "x" * 600, "b": long_plain, "c": "short"}
    assert "  c: short" in rows and "short" in plains
    limit = fastparse._MAX_CACHED_CHARS
    assert all(len(line) <= limit for line in rows) and all(len(value) <= limit for value in plains)


def test_a_long_quoted_scalar_in_go_yamls_folding_is_read_and_checked_as_libyaml_does() -> None:
    """Each line of a quoted scalar that only continues it is taken in one match, its escapes
    unescaped (or, for the check, matched) once over the folded text."""
    config_map = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dashboards\ndata:\n{GO_YAML_DASHBOARD}"
    read = fastparse.parse(config_map)
    assert read is not None
    assert read[0]["data"]["dash.json"] == yaml.load(config_map, Loader=yaml.CSafeLoader)["data"]["dash.json"]
    passed_through = config_map.replace("kind: ConfigMap", "kind: GrafanaDashboard")
    assert fastparse.check_passed_through(passed_through)
    for document in (config_map, passed_through):
        assert_same(f"---\n{document}".encode())
    # An escape libyaml refuses, on the scalar's 40th line: refused by both, and by the check.
    refused = passed_through.replace('\\"p40\\"', '\\"p\\q40\\"')
    assert refused != passed_through and not fastparse.check_passed_through(refused)
    for document in (refused, refused.replace("kind: GrafanaDashboard", "kind: ConfigMap")):
        with pytest.raises(yaml.YAMLError):
            yaml.load(document, Loader=yaml.CSafeLoader)
        assert_same(f"---\n{document}".encode())


# Lines of a long literal block scalar (a dashboard, a script): at its indentation or deeper,
# empty, spaces of any width, a comment-like or key-like text (content inside a literal).
LITERAL_LINES = st.sampled_from(
    ["{", '  "a": 1,', "x", "# not a comment", "a: b", "- item", "", "", "  ", "    more", "}", "ok #c", "  ]", "\tk\tv", "\t"]
)


@st.composite
def long_literals(draw: st.DrawFn) -> bytes:
    """ConfigMaps with literal block scalars longer than fastparse._LONG_BLOCK_LINES, and what may follow them."""
    lines = ["---", "apiVersion: v1", "kind: ConfigMap", "metadata:", "  name: long", "data:"]
    for index in range(draw(st.integers(1, 3))):
        nested = draw(st.booleans())
        key = f"  k{index}:" if not nested else f"  k{index}:\n    -"
        header = draw(st.sampled_from(["|", "|-", "|+", "|2", "|+2", "|-1", "| # c", "|4"]))
        pad = " " * (draw(st.sampled_from([4, 4, 5, 6])) + (2 if nested else 0))
        count = draw(st.integers(fastparse._LONG_BLOCK_LINES - 2, 3 * fastparse._LONG_BLOCK_LINES))
        body = draw(st.lists(LITERAL_LINES, min_size=count, max_size=count))
        spaces = draw(st.sampled_from(["", " ", "  ", pad, pad + " "]))
        rows = [(pad + line if line else "") for line in body]
        # sometimes a line of spaces alone, narrower or wider than the indentation
        for at in draw(st.lists(st.integers(0, count - 1), max_size=3)):
            rows[at] = spaces
        lines.append(f"{key} {header}")
        lines.extend(rows)
        # what ends it: nothing, a key of data, a key at the root, a line between the key and the
        # indentation (an error), a comment, empty lines
        lines.extend(draw(st.sampled_from([[], [], ["  next: x"], ["other: y"], ["   odd"], ["# c"], ["", ""], ["  # c"]])))
    return ("\n".join(lines) + "\n").encode()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(long_literals())
def test_generated_long_literal_block_scalars(data: bytes) -> None:
    assert_same(data)


def test_long_literals_are_read_by_the_line_pattern(monkeypatch: pytest.MonkeyPatch) -> None:
    """Guards the comparison above: long literals take _literal_lines's path, not the line-by-line loop."""
    taken: list[int] = []
    real = fastparse._literal_lines

    def counted(lines: list[str], j: int, block: int) -> Any:
        result = real(lines, j, block)
        taken.append(True)
        return result

    monkeypatch.setattr(fastparse, "_literal_lines", counted)
    body = "".join(f'    "line {i}": {i},\n' if i % 7 else "\n" for i in range(200))
    text = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: d\ndata:\n  dash.json: |\n{body}  other: x\n"
    read = fastparse.parse(text)
    assert read is not None
    expected = "".join(f'"line {i}": {i},\n' if i % 7 else "\n" for i in range(200)).rstrip("\n") + "\n"
    assert read[0]["data"] == {"dash.json": expected, "other": "x"}
    assert taken == [True]
    assert_same(("---\n" + text).encode())


@st.composite
def literal_look_alikes(draw: st.DrawFn) -> bytes:
    """ConfigMaps where a line like a long literal's header ("inner: |" and more than
    fastparse._LONG_BLOCK_LINES lines below it) is text of another scalar: a quoted scalar over
    lines, a folded or shorter literal, a comment, a plain scalar; or a real one, with every
    chomping and empty or indentation-wide lines last."""
    header = draw(st.sampled_from(["|", "|-", "|+"]))
    count = fastparse._LONG_BLOCK_LINES + draw(st.integers(1, 3))
    pad = draw(st.sampled_from(["    ", "      "]))
    body = [pad + draw(LITERAL_LINES) for _ in range(count)]
    tail = draw(st.lists(st.sampled_from(["", "  ", pad, pad + " "]), max_size=3))
    inner = [f"    inner: {header}", *(("  " + line) for line in body), *tail]
    kind = draw(st.sampled_from(["quoted", "folded", "literal", "comment", "plain", "real", "item", "key"]))
    if kind == "quoted":
        value = ['  k: "start', *inner, '    end"']
    elif kind == "folded":
        value = ["  k: >", *inner]
    elif kind == "literal":
        value = ["  k: |2", *inner]
    elif kind == "comment":
        value = ["  # k: |", *(line[2:] for line in inner[1:])]
    elif kind == "plain":
        value = ["  k: word", *inner]
    elif kind == "item":
        value = ["  k:", f"  - {header}", *body, *tail]
    elif kind == "key":
        value = [f'  "k": {header}', *body, *tail]
    else:
        value = [f"  k: {header}", *body, *tail]
    after = draw(st.sampled_from([[], ["  next: x"], ["other: y"], ["   odd"], ["# c"], ["  # c"]]))
    lines = ["---", "apiVersion: v1", "kind: ConfigMap", "metadata:", "  name: look", "data:", *value, *after]
    return ("\n".join(lines) + draw(st.sampled_from(["\n", "\n", "", " "]))).encode()


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(st.one_of(literal_look_alikes(), long_literals(), quoted_over_lines_documents(), styled()))
def test_long_literals_left_in_the_text_read_as_their_lines_split(data: bytes) -> None:
    """Every document's long literals left in its text (_holed_lines, as for a document longer
    than _SHARED_LINES_CHARS): the same reads as its lines split, and the run libyaml's."""
    pieces = split_stream(data.decode())
    split = [repr(fastparse.parse(piece.text)) for piece in pieces]
    threshold = fastparse._SHARED_LINES_CHARS
    fastparse._SHARED_LINES_CHARS = 0
    try:
        assert [repr(fastparse.parse(piece.text)) for piece in pieces] == split
        assert_same(data)
    finally:
        fastparse._SHARED_LINES_CHARS = threshold


@pytest.mark.parametrize("header", ["|", "|-", "|+", ">", ">-", ">+"])
@pytest.mark.parametrize("lines", [1, 3, 70])
@pytest.mark.parametrize("split", [False, True])
def test_a_block_scalar_running_to_a_last_line_of_spaces_reads_as_libyaml_reads_it(
    header: str, lines: int, split: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A helm template's last line of spaces without a line break after a block scalar (calico's
    dashboards chart ends so): no wider than the scalar's indentation, the scalar reads as if the
    document ended before it; wider, those spaces are content and the reader declines. Short and
    long scalars, every chomping, empty lines before it, read from the text and from split lines."""
    if not split:
        monkeypatch.setattr(fastparse, "_SHARED_LINES_CHARS", 0)  # long literals read from the text
    for key_indent, block in ((0, 2), (2, 4), (2, 6)):
        pad, margin = " " * key_indent, " " * block
        body = "".join(f'{margin}"line {i}": {i},\n' for i in range(lines))
        for empty in ("", "\n", "\n\n", f"{margin}\n"):
            for width in (1, block - 1, block, block + 1, block + 3):
                top = "data:\n" if key_indent else ""
                text = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n{top}{pad}k: {header}\n{body}{empty}{' ' * width}"
                expected = yaml.load(text, Loader=yaml.CSafeLoader)
                read = fastparse.parse(text)
                literal = header[0] == "|"
                if literal and width <= block:
                    assert read is not None, (text, width)
                if read is not None:
                    assert read[0] == expected, (text, width)
                    assert width <= block, (text, width)


def test_long_literals_left_in_the_text_are_read_from_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Guards the comparison above: a dashboard's literal is read from the text (each chomping,
    empty and indentation-wide lines last), and a header that is text of a quoted scalar makes
    the reader read the document's lines split."""
    taken: list[int] = []
    real = fastparse._LiteralSpan.scalar

    def counted(span: Any, *arguments: Any) -> Any:
        result = real(span, *arguments)
        taken.append(span.start)
        return result

    monkeypatch.setattr(fastparse._LiteralSpan, "scalar", counted)
    monkeypatch.setattr(fastparse, "_SHARED_LINES_CHARS", 0)
    body = "".join(f'    "line {i}": {i},\n' if i % 7 else "\n" for i in range(1, 200))
    for header, last in (("|", "\n"), ("|-", ""), ("|+", "\n\n\n")):
        text = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: d\ndata:\n  dash.json: {header}\n{body}\n    \n  other: x\n"
        taken.clear()
        read = fastparse.parse(text)
        assert read is not None
        expected = "".join(f'"line {i}": {i},\n' if i % 7 else "\n" for i in range(1, 200)).rstrip("\n") + last
        assert read[0]["data"] == {"dash.json": expected, "other": "x"}
        assert len(taken) == 1
        assert_same(("---\n" + text).encode())
    inner = "".join(f"      x{i}\n" for i in range(100))
    quoted = f'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: d\ndata:\n  q: "a\n    dash.json: |\n{inner}    b"\n'
    spans: list[Any] = []
    assert fastparse._readable_lines(quoted, shared=True, spans=spans) is not None
    assert len(spans) == 1  # the look-alike was taken for a literal, then read as lines
    read = fastparse.parse(quoted)
    assert read is not None
    assert read[0]["data"]["q"].startswith("a dash.json: | ")
    assert_same(("---\n" + quoted).encode())


_LONG_BODY = "".join(f"      line {n}\n" for n in range(80))


@pytest.mark.parametrize(
    ("value", "left_in_text"),
    [
        # running to the document's end, with and without a line break last, each chomping
        *((f"  k: {header}\n{_LONG_BODY}{end}", True) for header in ("|", "|-", "|+") for end in ("", "\n", "      \n")),
        *((f"  k: {header}\n{_LONG_BODY.rstrip()}", True) for header in ("|", "|-", "|+")),
        # lines of spaces narrower than the indentation inside and last: empty lines of the scalar
        (f"  k: |\n{_LONG_BODY}  \n{_LONG_BODY}  other: x\n", True),
        *((f"  k: {header}\n{_LONG_BODY} \n\n   \n{_LONG_BODY}   \n \n  other: x\n", True) for header in ("|", "|-", "|+")),
        # lines less indented than the key's block: libyaml ends the scalar empty, then refuses
        (f"  n:\n    k: |\n{_LONG_BODY.replace('      ', '   ')}", True),
        # less indented than the scalar, more than its key: an error
        (f"  k: |\n{_LONG_BODY}    odd\n", True),
    ],
)
def test_long_literals_left_in_the_text_end_as_their_lines_do(
    value: str, left_in_text: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ends the comparison above may not reach: a long literal last in the document (as its
    line break says), a line of spaces after its lines, lines too little indented."""
    text = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: d\ndata:\n  a: b\n{value}"
    split = repr(fastparse.parse(text))
    monkeypatch.setattr(fastparse, "_SHARED_LINES_CHARS", 0)
    spans: list[Any] = []
    fastparse._readable_lines(text, shared=True, spans=spans)
    assert bool(spans) == left_in_text
    assert repr(fastparse.parse(text)) == split
    assert_same(("---\n" + text).encode())


# What may end a document in a stream: nothing, an end marker (as some charts' templates
# write it), with a comment, with comment-only pieces after it; and shapes that are not an end
# marker the reader may take ("....", "... x") or that make the stream context-dependent (a
# bare document after the marker, a directive).
ENDINGS = st.sampled_from(
    ["", "", "...\n", "...\n", "... # end\n", "...\n# after\n", "...  \n\n", "....\n", "... x\n", "...\nbare: doc\n",
     "...\n%YAML 1.1\n", "...\n...\n", "...\t\n"]
)  # fmt: skip


@st.composite
def marked_streams(draw: st.DrawFn) -> bytes:
    """Streams whose documents may end with "..." end markers (kiali's chart writes one after each template)."""
    parts: list[bytes] = []
    for _ in range(draw(st.integers(1, 4))):
        document = draw(documents() | styled() | workloads())
        if not document.endswith(b"\n"):
            document += b"\n"
        if not document.startswith(b"---"):
            document = b"---\n" + document
        parts.append(document + draw(ENDINGS).encode())
    return b"".join(parts)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(marked_streams())
def test_generated_streams_with_end_markers(data: bytes) -> None:
    assert_same(data)


@st.composite
def line_ending_variants(draw: st.DrawFn) -> bytes:
    """Generated streams with CRLF line breaks (files written on Windows): everywhere, on some
    lines (a template of its own among LF ones), or a CR alone (a line break too, to libyaml)."""
    text = draw(st.one_of(styled(), workloads(), quoted_over_lines_documents(), long_literals(), mutated().map(str.encode)))
    lines = text.split(b"\n")
    how = draw(st.sampled_from(["all", "all", "some", "lone"]))
    if how == "all":
        return b"\r\n".join(lines)
    if how == "some":
        ends = draw(st.lists(st.booleans(), min_size=len(lines) - 1, max_size=len(lines) - 1))
        return b"".join(line + (b"\r\n" if crlf else b"\n") for line, crlf in zip(lines, ends, strict=False)) + lines[-1]
    at = draw(st.integers(0, len(text)))
    return text[:at] + b"\r" + text[at:]


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(line_ending_variants())
def test_generated_crlf_streams(data: bytes) -> None:
    assert_same(data)


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(line_ending_variants())
def test_the_pass_through_check_accepts_only_what_libyaml_accepts_with_crs(data: bytes) -> None:
    assert_checked_only_where_libyaml_takes(data)


@st.composite
def open_ended(draw: st.DrawFn) -> bytes:
    """Generated streams whose last line has no line break (a file's last document as some
    editors save it), sometimes spaces or a marker last instead, or CRLF line breaks."""
    sources = st.one_of(styled(), workloads(), quoted_over_lines_documents(), long_literals(), nested(), line_ending_variants())
    text = draw(sources).rstrip(b"\r\n")
    ending = [b"", b"", b"", b"  ", b"\n  ", b"\n...", b"\n# c", b" # c", b"\n\n  x", b"\n ", b"\n      ", b"\n\n    "]
    return text + draw(st.sampled_from(ending))


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(open_ended())
# An empty block scalar for the hash annotation, last and without a line break: libyaml ends it
# on its own line (its line is removed), not on the next (hypothesis found the node builder did).
@example(
    b"---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n name: d\nspec:\n template:\n  spec: {}\n  metadata:\n"
    b"    annotations:\n      wavegen.io/config-hash: |"
)
def test_generated_streams_without_a_final_line_break(data: bytes) -> None:
    assert_same(data)


@pytest.mark.parametrize("ending", ["", "\n", "-", "+\n", "\n  x: y\n"])
def test_a_hash_annotation_left_as_an_empty_block_scalar(ending: str) -> None:
    """Removed as libyaml's marks allow: its line alone when it is last without a line break
    (libyaml ends it there), else through the structural round trip (it ends on the next line)."""
    text = (
        "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n name: d\nspec:\n template:\n  spec: {}\n  metadata:\n"
        f"    annotations:\n      wavegen.io/config-hash: |{ending}"
    )
    assert_same(text.encode())


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(open_ended())
def test_the_pass_through_check_accepts_only_what_libyaml_accepts_without_a_final_line_break(data: bytes) -> None:
    assert_checked_only_where_libyaml_takes(data)


def test_a_last_line_of_spaces_without_a_line_break_is_read_past() -> None:
    """Hand-written manifests end so (60 of the 101 documents the Go module cache census still sent
    to libyaml): the reader reads the document without that line, but for a block scalar running
    to it that the line is wider than (those spaces are its content: libyaml reads that one)."""
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: x\n  b: |\n    y\n  c: z\n"
    for spaces in (" ", "  ", "    ", "     ", "        "):
        assert fastparse.parse(text + spaces) is not None
        assert fastparse.check_passed_through((text + spaces).replace("ConfigMap", "Service"))
        assert_same(("---\n" + text + spaces).encode())
        scalar_last = text.replace("  c: z\n", "")
        assert (fastparse.parse(scalar_last + spaces) is None) is (len(spaces) > 4)
        assert_same(("---\n" + scalar_last + spaces).encode())


@pytest.mark.parametrize("header", ["|", "|+", "|-", ">", "|2"])
@pytest.mark.parametrize("lines", [1, 100])
def test_a_block_scalar_last_in_a_file_without_a_line_break_ends_without_one(header: str, lines: int) -> None:
    """libyaml ends it without a line break whatever its chomping; short and long literals alike."""
    body = "".join(f"    line {n}\n" for n in range(lines)).rstrip("\n")
    text = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: {header}\n{body}"
    read = fastparse.parse(text)
    assert read is not None
    assert read[0] == yaml.load(text, Loader=yaml.CSafeLoader)
    assert not read[0]["data"]["k"].endswith("\n")
    assert_same(("---\n" + text).encode())


@st.composite
def tabbed(draw: st.DrawFn) -> bytes:
    """Generated documents the reader reads, with tabs put in as editors and templates put them:
    anywhere on a line, after a key's colon, last on a line, before a comment."""
    text = draw(st.one_of(styled(), workloads(), quoted_over_lines_documents(), long_literals(), nested())).decode()
    for _ in range(draw(st.integers(1, 3))):
        how = draw(st.integers(0, 3))
        if how == 0:
            at = draw(st.integers(0, len(text)))
        else:
            marks = [m.end() for m in re.finditer({1: ": ", 2: "\n", 3: " #"}[how], text)]
            if not marks:
                continue
            at = draw(st.sampled_from(marks)) - (1 if how == 2 else 0)
        text = text[:at] + draw(st.sampled_from(["\t", "\t", " \t", "\t\t"])) + text[at:]
    return text.encode()


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(tabbed())
def test_generated_documents_with_tabs(data: bytes) -> None:
    assert_same(data)


@pytest.mark.parametrize(
    "value",
    [
        '["/hello",\n      "--port=80"]',  # the kustomize examples' style
        "[\n    --a,\n    --b\n  ]",  # JSON's style: the closing bracket at the key's column
        "{a: b,\n    c: [x,\n     y]}",
        "[a\n  ,b\n ]",  # breaks before a comma and a bracket
        '[\n    "--config",\n    "/etc/config",\n  ]',  # prettier's style: a trailing comma
        "{a: b,\n    c: d, }",
        "[a, # c\n    b]",  # comments, and lines empty or of a comment alone after a comma or bracket
        "[a,\n\n    b]",
        # tekton's controller arguments
        '[  # the images\n    # built by ko\n    "-entrypoint-image", "ko://x",\n\n    "-shell-image", "y",  # why\n  ]',
        "[a # c\n    , b]",
        # a quoted scalar over a break, folded into a space (stable/minio's command); a "#" in it is text
        '[ "/bin/sh", \n    "-ce", \n    "cp /tmp/config.json /root/.minio/ && \n    /usr/bin/docker-entrypoint.sh minio" ]',
        '["a\n    b"]',
        "['it''s a\n  b', c] # d",  # (a quote doubled before the break, too:)
        "['it''\n x']",
        '{x: "a  \n    b\n    c # d"}',
        '[x,\n  "a,\n  b"]',
        '[x, "a # b\n c"]',
        '["a\n b  \n c"]',
    ],
)
def test_flow_collections_over_lines_are_read(value: str) -> None:
    """Guards the generated comparisons: hand-written flow collections over lines are read, with libyaml's values."""
    text = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: {value}\n  after: x\n"
    read = fastparse.parse(text)
    assert read is not None
    assert read[0] == yaml.load(text, Loader=yaml.CSafeLoader)
    assert_same(("---\n" + text).encode())


@pytest.mark.parametrize("closing", ["        ]", "      ]", "    ]", "]"])
def test_findings_after_a_flow_collection_over_lines_are_placed_as_libyaml_places_them(closing: str) -> None:
    """A closing bracket at or left of its key's column: the rows no longer tell the container's
    keys (not walkable), so the warning for envFrom below it is placed by libyaml's nodes."""
    text = (
        "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n"
        f"      containers:\n      - name: c\n        args: [\n          --a,\n          --b\n{closing}\n"
        "        envFrom:\n        - configMapRef:\n            name: missing\n"
    )
    ran, _ = _outcome(text.encode(), Options(), True)
    assert any("line=16," in finding for finding in ran[1]), ran[1]  # the "- configMapRef" item
    assert_same(text.encode(), Options())


@pytest.mark.parametrize(
    "value",
    [
        "[a # c\n    b]", "[a\n\n    b]", "[a,\n    b", "[a,\n    b] x", "[a,\n    \tb]",
        "[a\n    b]", "[{n\n   ame: x}]", "{a\n  : b}", "{a:\n    b}", "[a, }", "[a,\n    }", "{a: b,\n  ]", "[a, ,\n  ]",
        '{"a\n b": c}', '["a\n b" : c]', '["a\n\n b"]', '["a \\\n b"]', '["a\\\\\n b"]', '["a\tb\n c"]',
        '[a"b\n c"]', '[x, "a\n b""c"]', '["a,\n\n b"]', '["a\n b\\\n c"]', '["a\n b\tc"]', '["a\t\n c"]', '[a,\n "b\t\n c"]',
    ],
)  # fmt: skip
def test_flow_collections_over_lines_libyaml_reads_its_own_way_are_left_to_it(value: str) -> None:
    """A comment, a blank line, no closing bracket, text after it, a tab; a quoted key over a
    break (libyaml refuses it), or a quoted scalar over a blank line, a backslash or a tab, or
    one whose quote is inside a plain scalar; a plain scalar over a break (an implicit key may not run over one: hypothesis found
    "{n" / "ame: x}" read as the key "n ame", which libyaml refuses), a break before or after ":"."""
    text = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: {value}\n"
    assert fastparse.parse(text) is None
    assert_same(("---\n" + text).encode())


@pytest.mark.parametrize(
    "body",
    [
        "  k: a\n    b\n    last\t\n",  # libyaml strips a tab last on a plain scalar's line
        "  k: a\n    b\n    \tlead\n",  # and one that leads a continuation
        "  k: a\n    b\n    c\td\n",
        '  k: "a\n    b\n    \tc"\n',  # a quoted scalar's folding strips it too
        '  k: "a\n    b\t\n    c"\n',
    ],
)
def test_tabs_in_later_lines_of_multi_line_scalars(body: str) -> None:
    text = f"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n{body}"
    assert fastparse.parse(text.removeprefix("---\n")) is None
    assert_same(text.encode())


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", ["Service", "ConfigMap"])
def test_a_comment_with_a_tab_after_a_plain_scalar(kind: str) -> None:
    """A tab in a comment is text (libyaml takes it). Found by the generated documents: the
    pass-through check once took such a comment line for the scalar's continuation and looped."""
    text = f"---\napiVersion: v1\nkind: {kind}\nmetadata:\n  name: x\ndata:\n  a: b\n    # c\td\n  e: f\n"
    piece = text.removeprefix("---\n")
    if kind == "Service":
        assert fastparse.check_passed_through(piece)
    else:
        assert fastparse.parse(piece) is not None
    assert_same(text.encode())


NGINX = "server {\n\tlisten 80;\n\tlocation / {\n\t\troot /usr/share/nginx;\n\t}\n}\n"


def _nginx_bundle(eol: str = "\n") -> str:
    conf = "".join(f"    {line}\n" for line in NGINX.splitlines())
    text = (
        f"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: conf\ndata:\n  nginx.conf: |\n{conf}"
        "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    metadata:\n"
        "      labels: {app: web}\n    spec:\n      containers:\n        - name: web\n          image: nginx\n"
        "      volumes:\n        - name: conf\n          configMap:\n            name: conf\n"
    )
    return text.replace("\n", eol)


@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_tabs_in_literals_and_crlf_breaks_are_read_without_libyaml(eol: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Guards the comparisons above: a config file with tabs in a literal block scalar, and CRLF
    line breaks, are read by the subset reader (no document composed), with libyaml's values."""
    text = _nginx_bundle(eol)
    pieces = [piece.text for piece in split_stream(text)]
    configmap = fastparse.parse(pieces[0])
    assert configmap is not None
    assert configmap[0]["data"] == {"nginx.conf": NGINX}
    assert configmap[0] == yaml.load(pieces[0], Loader=yaml.CSafeLoader)
    assert fastparse.parse(pieces[1]) is not None
    assert_same(text.encode())

    def no_libyaml(text: str, *_: object) -> None:
        raise AssertionError(f"libyaml asked: {text[:60]!r}")

    monkeypatch.setattr(nodes_module, "compose", no_libyaml)
    monkeypatch.setattr(nodes_module, "libyaml_accepts", no_libyaml)
    result = run([InputDocument("bundle.yaml", text.encode())], Options(missing="ignore"))
    output = result.outputs[0].decode()
    added = [line for line in output.split(eol) if line not in text.split(eol)]
    assert len(added) == 2 and added[0] == "      annotations:" and "config-hash" in added[1]
    assert output.count("\n") == output.count(eol)  # the lines added end as the file's do


@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_comment_only_pieces_with_crlf_breaks_are_checked_without_libyaml(eol: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Guards the comparisons above: helm's "# Source:" of a template that rendered nothing (a
    piece of comments alone) is accepted without libyaml with CRLF line breaks too, as with LF;
    pieces that libyaml refuses still are not (a tab that starts a line, a lone CR)."""
    empty = "---\n# Source: chart/templates/empty.yaml\n\n# another comment\n".replace("\n", eol)
    assert fastparse.accepts_without_content(empty)
    assert not fastparse.accepts_without_content(empty.replace("# another", "\t# another"))
    assert not fastparse.accepts_without_content(empty.replace(eol + "# another", "\r# another"))
    text = empty + _nginx_bundle(eol) + empty
    assert_same(text.encode())

    def no_libyaml(text: str, *_: object) -> None:
        raise AssertionError(f"libyaml asked: {text[:60]!r}")

    monkeypatch.setattr(nodes_module, "compose", no_libyaml)
    monkeypatch.setattr(nodes_module, "libyaml_accepts", no_libyaml)
    monkeypatch.setattr(nodes_module, "check_depth", no_libyaml)
    result = run([InputDocument("bundle.yaml", text.encode())], Options(missing="ignore"))
    assert "config-hash" in result.outputs[0].decode()


@pytest.mark.parametrize("brk", ["\u2028", "\u2029", "\x85"])
def test_lines_of_an_input_with_exotic_breaks_are_placed_as_libyaml_marks_them(brk: str) -> None:
    """NEL, LS and PS are line breaks to libyaml's marks: in an input holding one (past ASCII,
    cut as bytes), an edited document's line starts are listed with them, not counted by LF, so
    the hash lines land under the template's metadata, where they would without it."""
    text = (
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: conf\ndata:\n  k: v\n---\n"
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  annotations:\n"
        f'    note: "caf\u00e9 one{brk}two"\nspec:\n  template:\n    metadata:\n      labels:\n        app: web\n'
        "    spec:\n      containers:\n        - name: web\n          envFrom:\n            - configMapRef: {name: conf}\n"
    )
    output = run([InputDocument("bundle.yaml", text.encode())], Options(missing="ignore")).outputs[0].decode()
    lines = output.split("\n")
    at = lines.index("      annotations:")
    assert lines[at - 1] == "    metadata:" and "config-hash" in lines[at + 1] and lines[at + 2] == "      labels:"
    assert "\n".join(lines[:at] + lines[at + 2 :]) == text


@pytest.mark.parametrize(
    ("literal", "why"),
    [
        ("    \tx\n", "a tab where libyaml looks for the indentation"),
        ("    y\n   \tx\n", "a tab left of the indentation"),
        (None, "a tab in a folded scalar"),
    ],
)
def test_tabs_libyaml_refuses_or_folds_are_left_to_it(literal: str | None, why: str) -> None:
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n"
    text += f"  k: |\n{literal}" if literal is not None else "  k: >\n    y\n    \tx\n    z\n"
    assert fastparse.parse(text) is None, why
    assert fastparse.check_passed_through(text.replace("ConfigMap", "Service")) is (literal is None), why
    assert_same(("---\n" + text).encode())


def test_documents_ending_with_an_end_marker_are_read_and_checked_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """Guards the comparison above: a document "..." ends is taken by the reader and the pass-through
    check (not left to libyaml), and a stream of them is read in one pass, none composed."""
    assert fastparse.parse("---\na: b\n...\n") is not None
    assert fastparse.parse("a: |\n  x\n... # end\n")[0] == {"a": "x\n"}  # type: ignore[index]
    assert fastparse.check_passed_through("---\nkind: Service\nspec: {}\n...\n")
    for text in ("a: b\n...\nc: d\n", "a: b\n....\n", "a: b\n... x\n", "a: b\n...\t\n"):
        assert fastparse.document_text(text) is None or fastparse.document_text(text) == text, text

    def no_compose(text: str, *_: object) -> None:
        raise AssertionError("composed")

    monkeypatch.setattr(nodes_module, "compose", no_compose)
    documents = [d.strip("\n") for d in styled_bundle(6).split("\n---\n") if d.strip("-\n")]
    stream = "".join(f"---\n{d.removeprefix('---').strip(chr(10))}\n...\n" for d in documents).encode()
    engine = Engine(Options(missing="ignore"))
    engine.add(InputDocument("marked.yaml", stream))
    assert len(engine.objects) == len(documents) > 5


def test_styled_bundle() -> None:
    assert_same(styled_bundle(60).encode())


def test_the_fast_path_reads_the_styles_people_write() -> None:
    """Guards the comparisons above: the reader really takes these styles (else both sides would be libyaml)."""
    pieces = [p.text for p in split_stream(styled_bundle(12)) if p.text.strip() and "ConfigMapList" not in p.text]
    assert pieces and all(fastparse.parse(text) is not None for text in pieces)
    workloads = [t for t in pieces if "kind: Deployment" in t or "kind: StatefulSet" in t or "kind: DaemonSet" in t]
    assert any("      annotations: {" in t for t in workloads) and any("      annotations:\n" in t for t in workloads)
    assert all(fastparse.template_node(t, ("spec", "template")) is not None for t in workloads)
    # flat flow collections are split at their commas, not tokenized (the comparisons above hold both to libyaml)
    assert fastparse._flat_flow('{app: x, tier: "web"}') == {"app": "x", "tier": "web"}
    assert fastparse._flat_flow('["--port", 80]') == ["--port", fastparse.resolve_plain("80")]
    assert fastparse._flat_flow("{a: [b]}") is fastparse._UNSEEN
    over_lines = ('a: "one\n  two"\n', "a:\n  - 'x\n\n    y'\n", 'a: "x\\\n   y" # c\n')
    assert [fastparse.parse(text)[0]["a"] for text in over_lines] == ["one two", ["x\ny"], "xy"]  # type: ignore[index]


# A pod template's metadata written as a one-line flow mapping, as hand-written manifests have it.
FLOW_TEMPLATE_METADATA = [
    "{labels: {app: web}}",
    "{labels: {app: web, tier: front}, annotations: {a: b}}",
    '{annotations: {"wavegen.io/config-hash": old, x: "y"}, labels: {app: web}}',
    "{annotations: {}, labels: {app: web}}",
    "{annotations: null, labels: {app: web}}",
    "{labels: {app: web}, finalizers: [a, b], name: x}  # a comment",
    "{\"labels\": {\"app\": \"web\"}, 'annotations': {'a': 'b'}}",
    "{name: x}",
]


def _assert_built_as_composed(built: Any, composed: Any) -> None:
    """A node the rows built has libyaml's marks, tag, style and value, and so has each node it
    holds (a shallow collection holds none: its marks alone)."""
    mark = (built.start_mark.line, built.start_mark.column, built.end_mark.line, built.end_mark.column)
    assert mark == (composed.start_mark.line, composed.start_mark.column, composed.end_mark.line, composed.end_mark.column)
    assert (built.id, built.tag, built.flow_style if built.id != "scalar" else built.style) == (
        composed.id,
        composed.tag,
        composed.flow_style if composed.id != "scalar" else composed.style,
    )
    if built.id == "scalar":
        assert built.value == composed.value
    elif built.value:
        assert len(built.value) == len(composed.value)
        for built_pair, composed_pair in zip(built.value, composed.value, strict=True):
            for built_node, composed_node in zip(built_pair, composed_pair, strict=True):
                _assert_built_as_composed(built_node, composed_node)


@pytest.mark.parametrize("metadata", FLOW_TEMPLATE_METADATA)
def test_flow_template_metadata_is_edited_without_libyaml(metadata: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pod template's metadata as a one-line flow mapping: its nodes come from the rows (the
    annotations in full, other nested collections shallow), the edits are libyaml's nodes' edits,
    and the run composes nothing."""
    text = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: conf\ndata:\n  k: v\n---\n"
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n"
        f"    metadata: {metadata}\n    spec:\n      containers:\n        - name: web\n          envFrom:\n"
        "            - configMapRef: {name: conf}\n"
    )
    assert_same(text.encode())
    workload = split_stream(text)[1].text
    node = fastparse.template_node(workload, ("spec", "template"))
    assert node is not None
    composed = nodes_module.compose(workload, depth_checked=True)
    reference = next(value for key, value in composed.value if key.value == "spec").value[0][1]  # type: ignore[union-attr]
    doc = DocumentText(workload, line_starts(workload))
    desired = {"wavegen.io/config-hash": "h"}
    assert template_edits(doc, node, desired) == template_edits(doc, reference, desired)  # type: ignore[arg-type]
    metadata = next(value for key, value in node.value if key.value == "metadata")
    _assert_built_as_composed(metadata, next(value for key, value in reference.value if key.value == "metadata"))

    def no_libyaml(text: str, *_: object) -> None:
        raise AssertionError(f"libyaml asked: {text[:60]!r}")

    monkeypatch.setattr(nodes_module, "compose", no_libyaml)
    result = run([InputDocument("bundle.yaml", text.encode())], Options(missing="ignore"))
    assert "config-hash" in result.outputs[0].decode()


@pytest.mark.parametrize(
    "metadata",
    ["{annotations: {a: {b: c}}}", "{labels: {app: web}, annotations: [a]}", "[a]", "{labels: {app: web},\n      name: x}"],
)
def test_flow_template_metadata_the_rows_cannot_tell_is_left_to_libyaml(metadata: str) -> None:
    """Nested collections in the annotations, annotations or metadata that are no mapping, and a
    flow mapping over lines: no nodes from rows, and libyaml's path decides (same outcome)."""
    text = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n"
        f"    metadata: {metadata}\n    spec:\n      containers:\n        - name: web\n"
    )
    if fastparse.parse(text) is not None:
        assert fastparse.template_node(text, ("spec", "template")) is None
    assert_same(("---\n" + text).encode())


LIST_DOCUMENTS = [
    "apiVersion: v1\nkind: List\nitems:\n  - apiVersion: v1\n    kind: ConfigMap\n    metadata: {name: a}\n    data: {k: v}\n",
    "apiVersion: v1\nkind: ConfigMapList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n"
    "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: b\n  data:\n    x: |\n      - not an item\n",
    "kind: List\napiVersion: v1\nitems:\n  # first\n  -\n    apiVersion: v1\n    kind: Secret\n    metadata: {name: s}\n"
    "  - # second\n    apiVersion: apps/v1\n    kind: Deployment\n    metadata: {name: d}\n    spec:\n      template:\n"
    "        spec:\n          containers:\n            - name: c\n              envFrom:\n"
    "                - secretRef: {name: s}\n",
    "apiVersion: v1\nkind: List\nitems:\n  - just a string\n  - kind: ConfigMap\n    apiVersion: v1\n    metadata: {name: c}\n",
    "apiVersion: v1\nkind: List\nitems: []\n",
    "apiVersion: v1\nkind: List\nitems: [{apiVersion: v1, kind: ConfigMap, metadata: {name: f}}]\n",
    "apiVersion: v1\nkind: List\nitems:\n  - apiVersion: v1\n    kind: ConfigMap\n    metadata: {name: a}\n  - apiVersion: v1\n"
    "    kind: ConfigMap\n    metadata: {name: a}\nmetadata: {}\n",
    "apiVersion: v1\nkind: ConfigMapList\nitems:\n  - apiVersion: v1\n    kind: ConfigMap\n    metadata: {name: a}\n"
    '    data:\n      dash.json: |-\n        {\n          "a": 1\n        }\n',
]


@pytest.mark.parametrize(
    "metadata",
    [
        "annotations:\n        {}",
        "annotations:\n        {}  # none",
        "annotations:\n        {team: a, 'x/y': \"b\"}",
        "annotations:\n        {wavegen.io/config-hash: old}",
        "annotations:\n        []",
        "annotations:\n        none",
        "labels:\n        {}\n      annotations:\n        {}",
    ],
)
def test_a_flow_collection_on_the_line_after_its_key_in_a_pod_template(metadata: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """helm's `toYaml` of empty pod annotations under "annotations:" (azure-workload-identity's
    chart): the hash goes in as libyaml's nodes place it, and flow mappings need no libyaml."""
    text = (
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: v\n---\napiVersion: apps/v1\n"
        "kind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    metadata:\n"
        f"      {metadata}\n    spec:\n      containers:\n      - name: c\n        envFrom:\n"
        "        - configMapRef:\n            name: c\n"
    )
    options = Options()
    assert_same(text.encode(), options)
    if "{" in metadata:
        monkeypatch.setattr(nodes_module, "compose", lambda *args: pytest.fail("composed"))
        result = run([InputDocument("d.yaml", text.encode())], options)
        assert result.changed() == [0] and b"wavegen.io/config-hash" in result.outputs[0]


def _relevant_searched_from_the_start(engine: Engine, piece: Any) -> str | None:
    """Engine._relevant as it was: the first kind line, searched from the document's start."""
    text = piece.text
    match = (text.startswith(engine_module._KIND_FIRST) and re.match(engine_module._KIND_LINE, text)) or re.search(
        "\n" + engine_module._KIND_LINE, text
    )
    if match and match.group(1):
        kind = match.group(1)
        return kind if kind in engine.relevant_kinds or kind.endswith("List") else None
    return "" if piece.has_content() else None


def test_kinds_found_near_the_end_are_those_searched_from_the_start() -> None:
    """Sorted keys put the kind after the data (kubectl's and jsonnet's output); a kind line across
    _KIND_NEAR_START; a last line that starts as one but is none; a kind in a quoted scalar."""
    engine = Engine(Options())
    data = "".join(f"  k{n}: {'v' * 40}\n" for n in range(200))
    texts = [p.text for path in FIXTURE_FILES for p in split_stream(path.read_text(errors="replace"))]
    texts += [p.text for p in split_stream(styled_bundle(30) + dashboard_list(3) + crd_bundle(3))]
    texts += [
        f"---\napiVersion: v1\ndata:\n{data}kind: ConfigMap\nmetadata:\n  name: c\n",
        f"---\napiVersion: v1\ndata:\n{data}kind: CustomResourceDefinition\nkindness: x\n",
        f"---\napiVersion: v1\ndata:\n{data}'kind': Secret\nmetadata:\n  name: s\n",
        f'---\napiVersion: v1\ndata:\n{data}kind: ConfigMap\nx: "a\nkind: Service"\n',
        f"---\napiVersion: v1\ndata:\n{data}metadata:\n  name: none\n",
    ]
    for cut in range(4000, 4130, 7):  # a kind line across the first search's end
        texts.append("---\n" + "#" * cut + "\nkind: ConfigMapList\nitems: []\n")
    for text in texts:
        piece = split_stream(text)[-1] if text.startswith("---") else split_stream(text)[0]
        assert engine._relevant(piece) == _relevant_searched_from_the_start(engine, piece), piece.text[:80]
    # A kind found from the end that the reader reads is checked against the body: text of a
    # quoted scalar that looks like a ConfigMap's kind line leaves a Service a Service.
    service = f'---\napiVersion: v1\ndata:\n{data}kind: Service\nmetadata:\n  name: s\nx: "a\nkind: ConfigMap"\n'
    assert engine._relevant(split_stream(service)[0]) == "ConfigMap"
    assert_same(service.encode())
    read = Engine(Options())
    read.add(InputDocument("s.yaml", service.encode()))
    assert [o.body["kind"] for o in read.objects] == ["Service"]


def test_list_documents() -> None:
    for text in LIST_DOCUMENTS:
        assert_same(("---\n" + text).encode())
    assert_same(("---\n" + "---\n".join(LIST_DOCUMENTS)).encode())


def test_the_fast_path_reads_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    """Guards test_list_documents: Lists are read without libyaml's composer."""

    def no_compose(text: str, *_: object) -> None:
        raise AssertionError("composed")

    monkeypatch.setattr(nodes_module, "compose", no_compose)
    engine = Engine(Options(missing="ignore"))
    engine.add(InputDocument("l.yaml", ("---\n" + LIST_DOCUMENTS[1]).encode()))
    assert [o.line for o in engine.objects] == [5, 9]
    assert fastparse.list_item_lines(LIST_DOCUMENTS[2]) == [5, 9]


def _list_item_lines_line_by_line(text: str) -> list[int] | None:
    """list_item_lines as it was, every line looked at in turn: the reference for the one that steps over the items' content."""
    lines = (fastparse.document_text(text.replace("\r\n", "\n")) or text.replace("\r\n", "\n")).split("\n")
    start = next((i for i, line in enumerate(lines) if re.fullmatch(r"items:(?: *| +#.*)", line)), None)
    if start is None:
        return None
    found: list[int] = []
    column = -1
    waiting = False
    for i in range(start + 1, len(lines)):
        line = lines[i]
        content = line.lstrip(" ")
        if not content or content[0] == "#":
            continue
        indent = len(line) - len(content)
        if waiting:
            found.append(i)
            waiting = False
        if column < 0:
            if content[0] != "-":
                return None
            column = indent
        if indent < column:
            break
        if indent == column:
            if content[:2] not in ("- ", "-") or (len(content) > 1 and content[1] != " "):
                break
            rest = content[1:].lstrip(" ")
            if rest and rest[0] != "#":
                found.append(i)
            else:
                waiting = True
    return None if waiting else found


@st.composite
def list_documents(draw: st.DrawFn) -> str:
    """List documents: items at any column, each "- key:", "-" or "- # c" alone, blank,
    space-only and comment lines anywhere, literal content, what follows the sequence."""
    column = draw(st.sampled_from([0, 0, 2, 4, 63, 64]))
    pad = " " * column
    lines = ["apiVersion: v1", "kind: List", draw(st.sampled_from(["items:", "items:  # c", "items: "]))]
    filler = st.sampled_from(["", " ", pad, pad + " ", "# c", pad + "# c", pad + "  # deep", "\t# tab"])
    for index in range(draw(st.integers(0, 5))):
        lines.extend(draw(st.lists(filler, max_size=2)))
        opening = draw(st.sampled_from(["- apiVersion: v1", "-", "- # c", "-  kind: ConfigMap", "-x", "- [a]"]))
        lines.append(pad + opening)
        if opening in ("-", "- # c"):
            lines.extend(draw(st.lists(filler, max_size=2)))
        inner = pad + draw(st.sampled_from(["  ", "    ", " "]))
        lines.append(f"{inner}metadata: {{name: i{index}}}")
        if draw(st.booleans()):
            lines.append(f"{inner}data:")
            lines.append(f"{inner}  k: |")
            lines.extend(
                f"{inner}    {draw(st.sampled_from(['x', '- y', 'items:', '', '  z']))}" for _ in range(draw(st.integers(1, 4)))
            )
    lines.extend(draw(st.sampled_from([[], ["metadata: {}"], ["  odd: 1"], [pad + "x: 1"], ["# end"]])))
    return "\n".join(lines) + draw(st.sampled_from(["\n", "", "\n...\n"]))


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(list_documents())
def test_list_item_lines_are_those_a_line_by_line_reading_finds(text: str) -> None:
    assert fastparse.list_item_lines(text) == _list_item_lines_line_by_line(text)
    assert fastparse.list_item_lines(text.replace("\n", "\r\n")) == _list_item_lines_line_by_line(text)


@settings(max_examples=1000, deadline=None)
@given(
    st.lists(st.sampled_from(["", " ", "  ", "   ", "    ", "     x", "    x", "   x", "  x", "x", "- y", "\t"]), max_size=12),
    st.sampled_from(["\n", "", " ", "    ", "    x"]),
    st.integers(1, 5),
    st.integers(0, 12),
)
@example(["    x"], "", 4, 0)
@example([], "    x", 4, 0)
@example(["", "    x", "  "], "\n", 4, 0)
def test_indented_end_is_where_a_repeated_line_pattern_stops(lines: list[str], last: str, block: int, first: int) -> None:
    """The search for the first shallower line ends where matching the lines one by one ends
    (empty or ``block`` deep, each with its line break), from any line's start: also at a last
    line without a line break, deep or not, and past the text's end."""
    text = "\n".join(lines) + ("\n" if lines else "") + last
    starts = [0] + [index + 1 for index, character in enumerate(text) if character == "\n"]
    at = starts[min(first, len(starts) - 1)]
    repeated = re.compile(rf"(?:(?: {{{block}}}[^\n]*+)?\n)*+")
    expected = repeated.match(text, at)
    assert expected is not None
    assert fastparse.indented_end(text, at, block) == expected.end()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(list_documents())
def test_generated_list_documents(text: str) -> None:
    assert_same(("---\n" + text).encode())


def _field_paths(value: Any, prefix: str = "") -> list[str]:
    """Every field path into a value as findings write them, and one past each end."""
    paths = [f"{prefix}.nope" if prefix else "nope"]
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                continue
            path = f"{prefix}[{key}]" if "." in key or "[" in key else f"{prefix}.{key}" if prefix else key
            paths += [path, *_field_paths(item, path)]
    elif isinstance(value, list):
        paths.append(f"{prefix}[{len(value)}]")
        for index, item in enumerate(value):
            paths += [f"{prefix}[{index}]", *_field_paths(item, f"{prefix}[{index}]")]
    return paths


def assert_same_field_lines(text: str) -> int:
    """Every field's line read from rows is libyaml's (tree.line_of); how many the rows told.
    (Rows step over the lines parse says they must, as the engine has them do.)"""
    read = fastparse.parse(text)
    if read is None or read[5]:
        return 0  # (the engine takes an anchored document's lines from libyaml: rows do not follow aliases)
    root = nodes_module.compose(text)
    assert root is not None
    told = 0
    for path in _field_paths(read[0]):
        line = fastparse.field_line(text, path, covered=read[4])
        if line is not None:
            told += 1
            assert line == line_of(root, path), path
    return told


def test_field_lines_from_rows_are_libyamls() -> None:
    texts = [p.text for path in FIXTURE_FILES for p in split_stream(path.read_text(errors="replace"))]
    texts += [p.text for p in split_stream(styled_bundle(12) + workload_bundle(6))]
    texts += [
        "a:\n- x\n-\n  b: 1\n  c:\n  - - y\n-\n  - z\n- {f: 1}\n- [g]\n",
        "a:\n  -\n    b: 1\n  - c: |\n      t\n    d:\n      e: 2\n  -\n  - q\nf:\n  [1, 2]\n",
        '---\n# c\na: 1\nb:\n  # c\n  c: 2\n  d: {x: [1]}\n  "e.f": 3\n',
    ]
    told = sum(assert_same_field_lines(text) for text in texts if text.strip())
    assert told > 1000  # the rows tell most lines: the comparison is not vacuous


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(styled())
def test_field_lines_of_generated_styles(data: bytes) -> None:
    for piece in split_stream(data.decode()):
        if piece.has_content():
            assert_same_field_lines(piece.text)


@pytest.mark.parametrize(
    "container",
    [
        "envFrom: [{secretRef: {name: s}}]",
        "envFrom: [{configMapRef: {name: c}}, {secretRef: {name: s, optional: false}}]",
        "env: [{name: A, valueFrom: {secretKeyRef: {name: s, key: k}}}]  # one",
        "envFrom:\n          [{secretRef: {name: s}}]",
    ],
)
def test_findings_inside_flow_collections_are_placed_without_libyaml(container: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A missing Secret named in a flow collection (as hand-written manifests and `toJson` write
    them): the finding's line is libyaml's, read from the rows and the flow's value."""
    text = (
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n---\napiVersion: apps/v1\nkind: Deployment\n"
        "metadata:\n  name: d\nspec:\n  template:\n    spec:\n      containers:\n      - name: a\n"
        f"        {container}\n"
    )
    expected = run([InputDocument("d.yaml", text.encode())], Options(), fast=False)
    monkeypatch.setattr(nodes_module, "compose", lambda *args: pytest.fail("composed"))
    result = run([InputDocument("d.yaml", text.encode())], Options())
    assert [repr(f) for f in result.findings] == [repr(f) for f in expected.findings]
    flow_line = 1 + next(n for n, line in enumerate(text.split("\n")) if "[{" in line)
    assert result.findings and all(f.line == flow_line for f in result.findings if "Secret" in f.message)


PASSED_THROUGH = (
    "---\n# Source: chart/templates/service.yaml\napiVersion: v1\nkind: Service\nmetadata:\n  name: s\n"
    "spec:\n  ports: [{port: 80, targetPort: http}]\n  selector: {app: a}\n"
    "---\n# Source: chart/templates/pdb.yaml\n"  # a template that rendered nothing
    "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n"
    "      containers:\n        - name: c\n          args: [--a, --b]\n          securityContext: {capabilities: {drop: [ALL]}}\n"
)


@pytest.mark.parametrize("budget", [0, 1 << 20])
@pytest.mark.parametrize("checker", [True, False])
def test_documents_passed_through_are_checked_without_libyaml(
    budget: int, checker: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Guards the comparisons above for documents nobody reads: the pass-through check takes them
    at any size; without it the reader checks them (and the flows it only shaped) in a small
    input, libyaml in larger ones; every way agrees with the reference."""
    checked: list[str | bytes] = []
    accepts = nodes_module.libyaml_accepts
    monkeypatch.setattr(nodes_module, "libyaml_accepts", lambda text: checked.append(text) or accepts(text))
    monkeypatch.setattr(engine_module, "READ_PASSED_THROUGH_CHARS", budget)
    if not checker:
        monkeypatch.setattr(fastparse, "check_passed_through", lambda text, cache=None, screened=False: False)
    assert_same(PASSED_THROUGH.encode())
    assert bool(checked) is (budget == 0 and not checker)
    bad = PASSED_THROUGH.replace("selector: {app: a}", "selector: {app: a")
    assert_same(bad.encode())  # declined by the reader, refused by libyaml with its words


@pytest.mark.parametrize(("args", "libyaml_checks"), [("[--a, --b]", False), ('["--a", "x y"]', False), ("[http://a:1]", True)])
def test_unread_flows_are_read_when_the_reader_can(args: str, libyaml_checks: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """A flow outside the planner's fields is read (and checked) by the reader, so even a large
    input's document needs no libyaml pass; one the reader cannot read (a ':' in a plain
    scalar) is only shaped, and libyaml checks its document."""
    checked: list[str | bytes] = []
    accepts = nodes_module.libyaml_accepts
    monkeypatch.setattr(nodes_module, "libyaml_accepts", lambda text: checked.append(text) or accepts(text))
    monkeypatch.setattr(engine_module, "READ_PASSED_THROUGH_CHARS", 0)
    data = (
        "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n"
        f"      containers:\n        - name: c\n          args: {args}\n"
    ).encode()
    assert_same(data)
    assert bool(checked) is libyaml_checks
    assert_same(data.replace(b"]\n", b"\n"))  # unclosed: declined by the reader, refused by libyaml


@pytest.mark.parametrize(
    "flow", ["{}", "[]", "{ }", "[ ]", "[a, b, ]", "{a: b, }", '["get",]', "[a , ]", "[,]", "[a,,]", "{,}", "[ , ]"]
)
def test_empty_flows_and_a_trailing_comma_need_no_tokenizer(flow: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """helm's charts write "resources: {}" everywhere, prettier a trailing comma: read by splitting
    at commas, as libyaml reads them; a flow libyaml refuses is still left to the tokenizer."""
    try:
        expected: Any = yaml.load(f"v: {flow}", Loader=yaml.CSafeLoader)["v"]
    except yaml.YAMLError:
        expected = None

    def no_tokens(text: str) -> Any:
        raise AssertionError(f"tokenized {text!r}")

    monkeypatch.setattr(fastparse, "_flow_tokens", no_tokens)
    if expected is None:
        with pytest.raises(AssertionError, match="tokenized"):
            fastparse._flow_line(flow, 4)
    else:
        assert fastparse._flow_line(flow, 4) == expected


def test_a_flow_not_closed_on_its_line_is_declined_without_the_tokenizer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fastparse, "_flow_tokens", lambda text: pytest.fail(f"tokenized {text!r}"))
    for opened in ("[", '["a", "b",', "{a: 'x, y',"):
        with pytest.raises(fastparse._Bail):
            fastparse._flow_line(opened, 4)


# A pod template whose annotation is quoted over lines that sit at the annotations' column (the
# second looks like a key there), beside a ConfigMap present and one absent (a finding to place).
LOOSE_QUOTED_TEMPLATE = (
    "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: present\ndata:\n  k: v\n"
    "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    metadata:\n"
    "      annotations:\n        note: 'a note\n        over: two lines'\n      labels: {app: d}\n    spec:\n"
    "      containers:\n        - name: c\n          envFrom:\n            - configMapRef: {name: present}\n"
    "            - configMapRef: {name: absent}\n"
)


def test_quoted_scalars_whose_lines_reach_their_block_are_read_and_stepped_over() -> None:
    """libyaml takes a quoted scalar's later lines at any indentation (controller-gen's old CRD
    descriptions sit at their key's column). The reader takes them too, and says which lines the
    rows must step over; the template whose annotation is so written is composed for rendering
    (the node builder does not fold quoted scalars), findings are placed from rows."""
    crd_like = "kind: X\nspec:\n  properties:\n    description: 'APIVersion defines\n    of an object: more'\n    type: string\n"
    read = fastparse.parse(crd_like)
    assert read is not None and read[0]["spec"]["properties"]["description"] == "APIVersion defines of an object: more"
    assert read[4] == ((4, 5),)
    assert fastparse.field_line(crd_like, "spec.properties.type", covered=read[4]) == 6
    assert fastparse.field_line(crd_like, "spec.properties.of an object") is not None  # what the rows alone would tell
    assert fastparse.field_line(crd_like, "spec.properties.of an object", covered=read[4]) == 3  # not there: its mapping's line
    indented = crd_like.replace("\n    of an", "\n      of an")
    assert fastparse.parse(indented)[4] == ()  # type: ignore[index]
    deployment = LOOSE_QUOTED_TEMPLATE.split("---\n")[2]
    assert fastparse.parse(deployment)[4] == ((9, 10),)  # type: ignore[index]  # the line "over: two lines'"
    for options in (Options(missing="warn"), Options(missing="ignore"), Options(missing="error")):
        assert_same(LOOSE_QUOTED_TEMPLATE.encode(), options)
    result = run([InputDocument("b.yaml", LOOSE_QUOTED_TEMPLATE.encode())], Options(missing="warn"))
    assert [f.line for f in result.findings if f.line is not None] == [25]  # the absent reference
    output = result.outputs[0].decode()
    assert output.count("\n        wavegen.io/config-hash: ") == 1  # in the annotations, not after "over:"
    assert [line for line in output.split("\n") if "wavegen.io/" not in line] == LOOSE_QUOTED_TEMPLATE.split("\n")


# A Deployment that writes its command as stable/minio's does: a flow sequence over lines at the
# container's column, one of its scalars quoted over a break; a reference after it to place.
COMMAND_OVER_LINES = (
    "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: s\nstringData:\n  k: v\n"
    "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n"
    '      containers:\n      - name: c\n        command: [ "/bin/sh",\n        "-ce",\n        "cp a b &&\n'
    '        run" ]\n        envFrom:\n        - secretRef:\n            name: s\n        - configMapRef:\n'
    "            name: absent\n"
)


# The same after the template's metadata moved below its spec, the command's later lines at the
# template's column: rows that did not step over them would end the template before "metadata".
METADATA_AFTER_COMMAND = COMMAND_OVER_LINES.replace('\n        "-ce",\n        "cp', '\n    "-ce",\n    "cp').replace(
    "            name: absent\n", "            name: absent\n    metadata:\n      labels: {app: d}\n"
)


@pytest.mark.parametrize("text", [COMMAND_OVER_LINES, METADATA_AFTER_COMMAND])
def test_a_command_over_lines_is_read_and_walked_without_libyaml(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Guards the comparisons for values over lines that reach their block: such a workload is
    read, its template built and its findings placed from rows, with libyaml's answers."""
    for options in (Options(missing="warn"), Options(missing="ignore")):
        assert_same(text.encode(), options)
    expected = run([InputDocument("b.yaml", text.encode())], Options(missing="warn"))

    def no_libyaml(text: str, *_: object) -> None:
        raise AssertionError(f"libyaml asked: {text[:60]!r}")

    monkeypatch.setattr(nodes_module, "compose", no_libyaml)
    monkeypatch.setattr(nodes_module, "libyaml_accepts", no_libyaml)
    result = run([InputDocument("b.yaml", text.encode())], Options(missing="warn"))
    assert [f.line for f in result.findings] == [f.line for f in expected.findings] == [25]  # the absent ConfigMap's item
    output = result.outputs[0].decode()
    assert output == expected.outputs[0].decode()
    assert output.count("wavegen.io/config-hash: ") == 1
    assert output.count("\n    metadata:") == 1  # the template's own, or one added for the hash


# The text of a double-quoted scalar: plain characters and one-character escapes (known or not).
ESCAPED_TEXT = st.lists(st.one_of(st.sampled_from('nt"xuU41a/ _é'), st.sampled_from('\\nt"0abefrv N_LP/q1é').map("\\".__add__)))


@settings(max_examples=600, deadline=None)
@given(ESCAPED_TEXT)
def test_one_character_escapes_split_as_the_pattern_reads_them(parts: list[str]) -> None:
    """_unescape's split at backslashes gives what the escape pattern gives (or declines the same)."""
    body = "".join(parts)

    def outcome(unescape: Any) -> str:
        try:
            return str(unescape(body))
        except fastparse._Bail:
            return "declined"

    assert outcome(fastparse._unescape_single) == outcome(fastparse._unescape_codes)


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(["\\\\", "\\ ", "\\\\ ", "é", "€", "😀", "\t", "\n", "\0"]), max_size=6), st.data())
def test_long_texts_unescaped_at_once_as_escape_by_escape(extra: list[str], data: st.DataObject) -> None:
    """Past _DECODED_AT_ONCE, _unescape takes what Python's codec reads as libyaml does in one
    pass: the same value as unescaping the text an escape at a time, or declined the same."""
    parts = data.draw(st.lists(st.one_of(ESCAPED_CODES, st.sampled_from(extra or ["x"])), min_size=1, max_size=8))
    body = "".join(parts)
    body = (body + " x") * (fastparse._DECODED_AT_ONCE // (len(body) + 2) + 1)
    # (a backslash that starts an escape before a line break: the quoted readers never give one,
    # an escaped break ends the line's text)
    assume(re.search(r"(?<!\\)(?:\\\\)*\\\n", body) is None)
    assert len(body) > fastparse._DECODED_AT_ONCE

    def outcome(unescape: Any) -> str:
        try:
            return repr(unescape(body))
        except fastparse._Bail:
            return "declined"

    expected = outcome(fastparse._unescape_codes)
    assert outcome(fastparse._unescape) == expected


@pytest.mark.parametrize("escape", ["\\ud800", "\\uDBFF", "\\udfff", "\\U0000D800", "\\U0000dfff", "\\U00110000", "\\x4"])
def test_long_texts_with_escapes_libyaml_refuses_are_declined(escape: str) -> None:
    """A surrogate's code (which Python's codec would take), past U+10FFFF, too few digits."""
    body = '\\"' * 200 + escape + '\\"'
    with pytest.raises(fastparse._Bail):
        fastparse._unescape_codes(body)
    with pytest.raises(fastparse._Bail):
        fastparse._unescape(body)


def test_a_quoted_dashboard_is_unescaped_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Guards the test above: JSON's escapes, go-yaml's escaped space and an emoji take the codec's pass."""
    decoded: list[int] = []
    real = fastparse.unicode_escape_decode

    def counted(data: bytes) -> tuple[str, int]:
        decoded.append(len(data))
        return real(data)

    monkeypatch.setattr(fastparse, "unicode_escape_decode", counted)
    body = '{\\"expr\\": \\"rate(x{job=\\\\\\"a\\\\\\"}[5m])\\",\\n \\"title\\": \\"\\U0001F600 é\\"}\\ ' * 20
    assert fastparse._unescape(body) == ('{"expr": "rate(x{job=\\"a\\"}[5m])",\n "title": "😀 é"} ' * 20)
    assert len(decoded) == 1
    assert fastparse._unescape(body[:100]) == fastparse._unescape_codes(body[:100]) and len(decoded) == 1


# Escapes with code points too: digits around the surrogates' and U+10FFFF's bounds.
ESCAPED_CODES = st.lists(
    st.one_of(
        ESCAPED_TEXT.map("".join),
        st.builds(
            "".join,
            st.lists(st.sampled_from(["\\x", "\\u", "\\U", "\\", *"01789aBcDeFfg"]), max_size=10),
        ),
    ),
    max_size=4,
).map("".join)


@settings(max_examples=2000, deadline=None)
@given(ESCAPED_CODES)
@example("\\ud7ff\\ue000")
@example("\\uD800")
@example("\\udfff")
@example("\\U0000d7ff\\U0010ffff\\U0001F600")
@example("\\U0000DBFF")
@example("\\U00110000")
@example("\\U0020FFFF")
def test_the_check_takes_the_escapes_the_reader_takes(body: str) -> None:
    """The check's one pattern over a double-quoted scalar's escapes agrees with _unescape."""
    quoted = fastparse._DOUBLE.fullmatch(f'"{body}"')
    assume(quoted is not None)  # what the quoted pattern gives: no lone backslash last, no bare quote
    assert quoted is not None and quoted.group(1) == body
    try:
        fastparse._unescape(body)
        taken = True
    except fastparse._Bail:
        taken = False
    assert bool(re.fullmatch(fastparse._ESCAPES_TAKEN, body)) is taken, body


def _pieces(data: bytes) -> list[str]:
    return [piece.text for piece in split_stream(data.decode("utf-8", "replace"))]


def _libyaml_takes(text: str) -> bool:
    """What the reference path asks of a document it passes through: libyaml parses it, within the depth limit."""
    if not nodes_module.libyaml_accepts(text):
        return False
    try:
        check_depth(text)
    except WavegenError:
        return False
    return _true_depth(text) <= MAX_DEPTH


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(st.one_of(documents(), nested(), styled(), quoted_over_lines_documents(), workloads(), st.deferred(lambda: anchored())))
def test_the_pass_through_check_accepts_only_what_libyaml_accepts(data: bytes) -> None:
    """check_passed_through vouches for a document only when libyaml takes it; the strategies
    draw every style, valid or not, and keys twice or of other types (which libyaml allows)."""
    assert_checked_only_where_libyaml_takes(data)


def assert_checked_only_where_libyaml_takes(data: bytes) -> None:
    cache: fastparse.CheckCache = {}
    for text in _pieces(data):
        if fastparse.check_passed_through(text, cache):
            assert _libyaml_takes(text), text


def _mutate(draw: st.DrawFn, lines: list[str]) -> None:
    """Change one line the way hand edits and template bugs do: its indentation, its key, its dash."""
    index = draw(st.integers(0, len(lines) - 1))
    line = lines[index]
    content = line.lstrip(" ")
    pad = line[: len(line) - len(content)]
    how = draw(st.integers(0, 8))
    if how == 0:
        lines[index] = " " * draw(st.integers(1, 3)) + line  # further right
    elif how == 1:
        lines[index] = line[draw(st.integers(1, 3)) :] if pad else line  # further left
    elif how == 2:
        lines[index] = pad + content.partition(": ")[2] if ": " in content else pad + "- " + content  # the key gone
    elif how == 3:
        lines[index] = pad + ("- " + content if not content.startswith("- ") else content[2:])  # a dash more or less
    elif how == 4:
        inserted = ["x", "x y", "'q'", "[a]", "- x", "x:", "? x", "|", "k: v", "&a", "*a", "- &a", "k: *a", "!!merge <<: *a"]
        lines.insert(index, pad + draw(st.sampled_from(inserted)))
    elif how == 5:
        lines.insert(index, pad + "  " + draw(st.sampled_from(["x", "k: v", "- x", "# c", "'q'", "x #c"])))
    elif how == 6:
        lines.insert(index, draw(st.sampled_from(["", "  ", "#c", "x", "k: v", "- x"])))
    elif how == 7:
        lines[index] = line + draw(st.sampled_from([":", " x", ": y", " #c", " '", ' "', " [", " |", "  ", " &a", " *a", " &"]))
    else:  # a tab: indentation, separation or text, as editors put them
        at = draw(st.integers(0, len(line)))
        lines[index] = line[:at] + "\t" + line[at:]


@st.composite
def mutated(draw: st.DrawFn) -> str:
    """A valid document passed through (a Service), with one line mutated (see _mutate)."""
    source = draw(st.one_of(nested(), styled(), quoted_over_lines_documents(), st.deferred(lambda: anchored())))
    text = source.decode().replace("kind: ConfigMap", "kind: Service").replace("kind: Deployment", "kind: Service")
    pieces = [p for p in _pieces(text.encode()) if p.strip()]
    lines = draw(st.sampled_from(pieces)).split("\n")[:-1]
    for _ in range(draw(st.integers(1, 2))):
        _mutate(draw, lines)
    return "\n".join(lines) + "\n"


@settings(max_examples=2500, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(mutated())
def test_the_pass_through_check_accepts_no_mutation_libyaml_refuses(text: str) -> None:
    if fastparse.check_passed_through(text):
        assert _libyaml_takes(text), text


USUAL_KEYS = st.text("abk8s./_-0", min_size=1, max_size=4).map(lambda key: f"{key}:")
LINE_PARTS = st.builds(
    "".join,
    st.lists(
        st.one_of(
            st.sampled_from([" ", "  ", "a", "k8s", "-", "- ", ".", "/", "_", ":", ": ", "#", " #", "\t", "x:y"]),
            st.sampled_from(["'", '"', "[", "{", "!", "|", '"a b"', "'a'", "''", '\\"', "\\n", '"\\q"', '"\\t"']),
            st.sampled_from(sorted(fastparse._NOT_PLAIN_START)).map(lambda indicator: f" {indicator}"),  # a value's start
            st.sampled_from(list("-?:,[]{}#&*!|>'\"%@`<= =<9Zé\\")),
        ),
        max_size=8,
    ),
)


@settings(max_examples=3000, deadline=None)
@given(st.text(" ", max_size=3), st.one_of(USUAL_KEYS, st.just("")), LINE_PARTS)
@example("", "k" * fastparse._MAX_KEY + ":", " v")
@example("  ", "k" * (fastparse._MAX_KEY + 1) + ":", " v")
@example("", "k:", ' "x"#c')  # no space before the comment: not one
@example("", "k:", ' "\\q"')  # an escape libyaml does not know
@example("", "k:", ' "\t// "')  # a tab (Go's text/template tests quote one so)
@example("", "k:", " 'a\tb'")
@example("", "k:", ' "x" # a\tb')
def test_the_usual_lines_are_classified_as_in_full(indent: str, key: str, rest: str) -> None:
    """_check_row's one-pattern shortcut ("key:", "key: plain", "key: 'quoted'", "- plain", "plain")
    gives the rows its rules give."""
    line = f"{indent}{key}{rest}"
    nothing = re.compile("(?!)").fullmatch
    assert fastparse._check_row(line, re.compile(fastparse._USUAL_LINE).fullmatch) == fastparse._check_row(line, nothing), line


def _check_without_repeats(text: str) -> bool:
    """check_passed_through walking every line: no value is remembered (see _repeated_value)."""
    least = fastparse._MIN_REPEATED_LINES
    fastparse._MIN_REPEATED_LINES = sys.maxsize
    try:
        return fastparse.check_passed_through(text)
    finally:
        fastparse._MIN_REPEATED_LINES = least


# What follows a repeated value: its key's sibling, a dash or text at its key's column, a
# comment or blank line, a line deeper than the key, one further left, or the document's end.
AFTER_REPEATED = [
    "{pad}c: 1",
    "{pad}- x",
    "# c",
    "",
    "{pad}  # c",
    "{pad} x",
    "{pad} y: 2",
    "{pad}   y: 2",
    "{pad}'q",
    "{pad}c: [a",
    "z: 1",
]


@st.composite
def repeated_values(draw: st.DrawFn) -> str:
    """A document passed through whose mapping holds the same value (any generated document's
    lines, indented) under several keys, as CRDs repeat schemas; a later copy may differ by a
    mutated line (see _mutate) or by what follows it."""
    # (nested documents twice as often: most are valid, so copies of them are stepped over)
    source = draw(st.one_of(nested(), nested(), styled(), quoted_over_lines_documents(), documents()))
    pieces = [p for p in _pieces(source) if p.strip()]
    lines = draw(st.sampled_from(pieces)).split("\n")[:-1] if pieces else ["a: b"]
    lines = [line for line in lines if not line.startswith("---")] or ["a: b"]
    column = draw(st.sampled_from([0, 2, 4]))
    pad = " " * column
    step = draw(st.integers(1, 3))
    value = [f"{pad}{' ' * step}{line}" if line else line for line in lines]
    out = ["kind: Service"]
    if column:
        out += ["spec:", *([" " * 2 + "inner:"] if column == 4 else [])]
    for index in range(draw(st.integers(2, 3))):
        copy = list(value)
        if index and draw(st.booleans()):
            _mutate(draw, copy)
        out.append(f"{pad}k{index}:")
        out.extend(copy)
        out.extend(line.format(pad=pad) for line in draw(st.lists(st.sampled_from(AFTER_REPEATED), max_size=2)))
    if draw(st.booleans()):
        return "\n".join(out) + "\n"
    return "\n".join(out)  # the last line without a line break


@settings(max_examples=2500, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(repeated_values())
def test_repeated_values_are_checked_as_their_first_copy_was(text: str) -> None:
    """Stepping over a value whose lines were checked before in the document changes no verdict."""
    checked = fastparse.check_passed_through(text)
    assert checked == _check_without_repeats(text), text
    if checked:
        assert _libyaml_takes(text), text


# A CRD's schema served in two versions: the second version's schema is stepped over.
VERSION = """  - name: {name}
    schema:
      openAPIV3Schema:
        properties:
          spec:
            description: |-
              The desired state.
            properties:
              replicas:
                format: int32
                type: integer
              selector:
                description: a plain description
                  over two lines
                type: string
            type: object
        type: object
    served: true
"""
TWO_VERSIONS = "kind: CustomResourceDefinition\nspec:\n  versions:\n" + "".join(
    VERSION.format(name=name) for name in ("v1alpha1", "v1")
)


def test_a_repeated_schema_is_stepped_over(monkeypatch: pytest.MonkeyPatch) -> None:
    stepped: list[int] = []
    find = fastparse._repeated_value

    def counted(lines: list[str], i: int, column: int, depth: int, repeats: fastparse._Repeats) -> int:
        end = find(lines, i, column, depth, repeats)
        if end >= 0:
            stepped.append(end - i)
        return end

    monkeypatch.setattr(fastparse, "_repeated_value", counted)
    assert fastparse.check_passed_through(TWO_VERSIONS)
    assert stepped == [15]  # the second version's openAPIV3Schema, at once
    stepped.clear()
    # A line in the second copy that libyaml refuses: not stepped over, and found
    broken = TWO_VERSIONS[::-1].replace("type: integer"[::-1], "type: integer: x"[::-1], 1)[::-1]
    assert not fastparse.check_passed_through(broken) and not _libyaml_takes(broken)
    assert stepped == []
    # The second copy's lines followed by a comment at the left margin and more of the value:
    # a comment ends no value, so these lines are not the first copy's value
    more = TWO_VERSIONS[::-1].replace(
        "        type: object\n    served: true\n"[::-1],
        "        type: object\n# note\n        x-kubernetes-preserve-unknown-fields: true\n    served: true\n"[::-1],
        1,
    )[::-1]
    assert fastparse.check_passed_through(more) and _libyaml_takes(more)
    assert stepped == [12]  # only the value of "spec:" inside it
    stepped.clear()
    # ... or by an empty line
    more = more.replace("\n# note\n", "\n\n")
    assert fastparse.check_passed_through(more) and _libyaml_takes(more)
    assert stepped == [12]


def test_a_repeated_value_deeper_in_blocks_keeps_to_the_depth_limit() -> None:
    """The same value at the same column but one block deeper (a sequence at its key's column
    around it) is not stepped over: near the depth limit the check refuses it there only."""

    def document(height: int) -> str:
        value = "".join(f"{' ' * (4 + level)}a{level}:\n" for level in range(height)) + f"{' ' * (4 + height)}z: 1\n"
        return f"kind: Service\nx:\n  k:\n{value}y:\n- k:\n{value}z: 1\n"

    heights = range(fastparse._MOST_CHECKED - 4, fastparse._MOST_CHECKED + 2)
    verdicts = [fastparse.check_passed_through(document(height)) for height in heights]
    assert verdicts == [_check_without_repeats(document(height)) for height in heights]
    assert True in verdicts and False in verdicts


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(deep_documents())
def test_the_pass_through_check_keeps_to_the_depth_limit(text: str) -> None:
    if fastparse.check_passed_through(text):
        assert _libyaml_takes(text)


# Valid documents the reader's rules take, in the shapes of CRDs and manifests: the check must
# take them all (else it would only ever say "not known" and the tests above would prove little).
PASSED_THROUGH_SHAPES = [
    "kind: A\nspec:\n  versions:\n  - name: v1\n    schema:\n      openAPIV3Schema:\n        properties:\n"
    "          a:\n            description: |-\n              Text over\n\n                more-indented lines.\n"
    "            type: string\n          b:\n            description: plain text\n              over two lines\n"
    "            type: integer\n        type: object\n    served: true\n",
    "kind: A\nspec:\n  properties:\n    description: 'APIVersion defines\n    of an object: more'\n    type: string\n",
    "kind: B\nmetadata:\n  annotations:\n    {}\n  labels: {a: b, c: 'd'}\n  \"helm.sh/hook\": post-install\nspec:\n"
    '  ports:\n  -\n    port: 80\n  - port: 81  # c\n    name: "x\\ty"\n  note: x\n   y\n  empty:\n  -\n  - z\n',
    "kind: B\nlist:\n  - - x\n",
    "kind: C\nspec:\n  x: >2\n     indented\n    base\n  y: |+\n    kept\n\n  z:\n    - a\n    -   b: 1\n        c: 2\n",
    "kind: D\nspec:\n  1: a key that is a number\n  true: and one that is a bool\n  a: x\n  a: twice\n",
    "kind: E\nspec: {}\nitems: []\nother:\n",
    # flow sequences over lines, as metallb's and (in prettier's style) rook's ClusterRoles write them
    'kind: F\nrules:\n- resourceNames: ["a","b",\n    "c"]\n  verbs:\n    [\n      "get",\n      "list",\n    ]\n  x: 1\n',
    # sequences opened on an item's line, as Argo Workflows write steps
    "kind: W\nspec:\n  steps:\n  - - name: a\n      template: t\n    - name: b\n  - - name: c\n  - -  - x\n       - y\n    - z\n",
    "kind: G\nspec:\n  s:\n    k8s:app: x\n    maxUnavailable : 25%\n  =(hostPID): 'false'\n  $patch: delete\n  v: !!str 1\n",
    # prometheus-operator's AlertmanagerConfig CRD: "=" among its matchers' operators (the
    # reader refuses "=" and "<<" alone, which only PyYAML's constructor cannot take)
    "kind: C\nspec:\n  matchType:\n    enum:\n    - '!='\n    - =\n    - =~\n    - '!~'\n    type: string\n"
    "  m: <<  # c\n  e: =\n",
]


def test_the_pass_through_check_takes_what_manifests_hold() -> None:
    assert [fastparse.check_passed_through(text) for text in PASSED_THROUGH_SHAPES] == [True] * len(PASSED_THROUGH_SHAPES)
    assert all(_libyaml_takes(text) for text in PASSED_THROUGH_SHAPES)
    pieces = [p for p in _pieces(crd_bundle(6).encode()) if p.strip()]
    assert pieces and all(fastparse.check_passed_through(text) for text in pieces)
    for path in FIXTURE_FILES:
        for text in _pieces(path.read_bytes()):
            if fastparse.check_passed_through(text):
                assert _libyaml_takes(text), path


def test_the_pass_through_check_declines_what_libyaml_refuses() -> None:
    """Each of these breaks one rule of the check; libyaml refuses them all (and the engine words it as before)."""
    broken = [
        "kind: X\nspec:\n  a: 1\n   b: 2\n",  # a key right of its block's column
        "kind: X\nspec:\n    a: 1\n  b: 2\n",  # back to a column no block is at
        "kind: X\nspec:\n  a: x\n  - b\n",  # an item in a mapping
        "kind: X\nspec:\n  - a\n  b: 1\n",  # a key after a sequence that is not its key's
        "kind: X\nspec:\n  a: x\n    y: z\n",  # a mapping inside a plain scalar
        "kind: X\nspec:\n  a: |\n    x\n   y\n",  # a block scalar's line short of its column
        "kind: X\nspec:\n  a: 'open\n",  # an unclosed quote
        'kind: X\nspec:\n  a: "\\q"\n',  # an escape libyaml does not know
        "kind: X\nspec:\n  a: [x, y\n",  # an unclosed flow
        "kind: X\nspec:\n  a: b: c\n",  # a mapping value in a plain scalar
        "kind: X\nspec:\n  a: x # c\n    y\n",  # text after a comment
        "kind: X\nspec:\n  a: 1\n  foo\n",  # a scalar where a key belongs
        "kind: X\nspec:\n  a: =\n    b: c\n",  # a mapping inside a plain scalar "="
    ]
    for text in broken:
        assert not fastparse.check_passed_through(text), text
        assert not nodes_module.libyaml_accepts(text), text
        assert_same(("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n---\n" + text).encode())


# Anchors, aliases and merge keys as Knative's release manifests write them (yq's "!!merge <<").
KNATIVE_ANCHORS = """\
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: config-logging
data:
  level: info
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: controller
  labels: &labels  # shared below
    app: controller
spec:
  selector:
    matchLabels: &match
      app: controller
  template:
    metadata:
      labels:
        !!merge <<: *labels
        tier: control
    spec:
      containers:
      - name: c
        readinessProbe: &probe
          httpGet:
            path: /ready
          periodSeconds: 5
        livenessProbe:
          !!merge <<: *probe
          periodSeconds: 10
        envFrom: &refs
        - configMapRef:
            name: config-logging
      initContainers:
      - name: i
        envFrom: *refs
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: r
rules:
- apiGroups: [""]
  verbs: &everything
  - get
  - list
- apiGroups: [apps]
  verbs: *everything
- apiGroups: [batch]
  verbs: &everything
  - get
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: things.example.com
spec:
  versions:
  - &version
    name: v1
    served: true
    schema:
      openAPIV3Schema:
        properties: &props
          spec:
            type: object
  - <<: *version
    name: v2
    storage: true
"""


def test_anchors_aliases_and_merge_keys_are_read_without_libyaml(monkeypatch: pytest.MonkeyPatch) -> None:
    """Guards the comparisons below: the reader takes Knative's shapes (an anchor defined twice in a
    document passed through, too), sharing what an alias names as libyaml's path does."""
    pieces = [p.text for p in split_stream(KNATIVE_ANCHORS) if p.has_content()]
    assert all(fastparse.check_passed_through(text) for text in pieces)
    reads = [fastparse.parse(text) for text in pieces]
    assert [None if read is None else read[5] for read in reads] == [
        0,
        fastparse.ALIASED,
        fastparse.PARSED_ONLY,
        fastparse.ALIASED,
    ]
    deployment = reads[1][0]  # type: ignore[index]
    template = deployment["spec"]["template"]
    assert list(template["metadata"]["labels"].items()) == [("tier", "control"), ("app", "controller")]
    containers = template["spec"]["containers"]
    probe = containers[0]["livenessProbe"]
    assert list(probe) == ["periodSeconds", "httpGet"] and probe["httpGet"] is containers[0]["readinessProbe"]["httpGet"]
    assert template["spec"]["initContainers"][0]["envFrom"] is containers[0]["envFrom"]
    crd = reads[3][0]  # type: ignore[index]
    assert crd["spec"]["versions"][1]["schema"] is crd["spec"]["versions"][0]["schema"]
    # A run reads all of it without PyYAML; the changed Deployment is rendered as the reference
    # path renders a document with aliases (composed once, to splice its hash lines where the
    # edits touch nothing an alias shares), with the same hash.
    expected = run([InputDocument("k.yaml", KNATIVE_ANCHORS.encode())], Options(), fast=False)
    real_compose = nodes_module.compose
    composed: list[str] = []

    def counted(text: str, depth_checked: bool = False) -> Any:
        composed.append(text)
        return real_compose(text, depth_checked)

    monkeypatch.setattr(nodes_module, "compose", counted)
    monkeypatch.setattr(nodes_module, "libyaml_accepts", lambda *args: pytest.fail("checked by libyaml"))
    result = run([InputDocument("k.yaml", KNATIVE_ANCHORS.encode())], Options())
    assert result.outputs == expected.outputs and result.fallbacks == expected.fallbacks == []
    assert b"wavegen.io/config-hash" in result.outputs[0]
    assert len(composed) == 1 and "kind: Deployment" in composed[0]


def test_anchors_aliases_and_merge_keys_read_as_libyamls_path_reads_them() -> None:
    assert_same(KNATIVE_ANCHORS.encode())
    assert_same(KNATIVE_ANCHORS.replace("kind: ClusterRole", "kind: ConfigMap").encode())  # the anchor twice: an error


def _anchored_configmap(body: str) -> bytes:
    return f"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n{body}".encode()


@pytest.mark.parametrize(
    "body",
    [
        "a: &x\n  k: 1\nb: *x\n",
        "a: &x\nb: *x\n",  # an anchored null
        "a: &x # c\n  k: 1\nb: *x  # c\n",
        "a: *x\n",  # undefined
        "a: &x\n  k: 1\nb: &x\n  k: 2\n",  # defined twice
        "a: &x\n  k: 1\nb: &x\n",  # defined twice, the second last
        "a: &x\n  k: *x\n",  # inside itself
        "a: &x\n  - *x\n",
        "a: &x\n  b:\n    c: *x\n",
        "a: &x\n  k: 1\nb:\n  <<: *x\n  k: 2\n  j: 3\n",  # its own keys win
        "a: &x\n  k: 1\nb:\n  k: 2\n  <<: *x\n",
        "a: &x\n  k: 1\n  m: 1\nc: &y\n  m: 2\n  n: 2\nb:\n  <<: *x\n  <<: *y\n",  # two merge keys
        "a: &x\n  - k: 1\n  - k: 2\n    j: 2\nb:\n  <<: *x\n",  # a sequence of mappings
        "a: &x\n  - k: 1\n  - 2\nb:\n  <<: *x\n",  # not all mappings
        "a: &x\n  - 1\nb:\n  !!merge <<: *x\n",
        "a: &x\nb:\n  <<: *x\n",  # a merge of null
        "a: &x\n  k: 1\nb:\n  <<: *y\n",
        "a: &x\n  k: 1\nb:\n  '<<': *x\n",  # a quoted key: no merge
        "a: &x\n  <<: *x\n",
        "a: &x\n  k: 1\nb: &y\n  <<: *x\n  j: 2\nc:\n  <<: *y\n",  # a merged mapping merged
        "a:\n- &x\n  k: 1\n- <<: *x\n  j: 2\n- !!merge <<: *x\n- *x\n",
        "a:\n- &x\n- *x\n",
        "a: &x\n- 1\nb: *x\n",  # a sequence at its key's column
        "a: &x 1\nb: *x\n",  # an anchored scalar: left to libyaml
        "a: &x\n  1\nb: *x\n",
        "a: &x [1]\nb: *x\n",
        "a: &x\n  k: 1\nb: *x x\n",
        "a: &x\n  k: 1\nb: *x:\n",
        "a: &x\n  k: 1\nb: [*x]\n",
        "a: &x\n  k: 1\nb:\n  <<: [*x]\n",
        "a: &x\n  k: 1\nb:\n  << : *x\n",
        "a: &x\n  k: 1\n*x : 1\n",
        "&x a: 1\n",
        "a: &x\n  k: 1\nb: !!map *x\n",
        "a: &x\n  k: 1\nb:\n  !!merge <<:   *x   # c\n",
        "a: &\n  k: 1\n",
        "a: &x\n  k: 1\nb: *\n",
    ],
)
def test_properties_of_every_shape_read_as_libyamls_path_reads_them(body: str) -> None:
    assert_same(_anchored_configmap(body))
    assert_same(_anchored_configmap(body).replace(b"kind: ConfigMap", b"kind: Role"))  # passed through
    text = _anchored_configmap(body).decode().split("---\n", 1)[1]
    if fastparse.check_passed_through(text):
        assert _libyaml_takes(text)


@pytest.mark.parametrize(
    ("body", "taken"),
    [
        ("a: &x\n  k: 1\nb: *x\n", True),
        ("a: &x  # c\n  - 1\nb: *x  # c\nc:\n  <<: *x\n  !!merge <<: *x\n", True),
        ("a:\n- &x\n  k: 1\n- <<: *x\n- !!merge <<: *x\n  j: 2\n- *x\n- &y\n- *y\n", True),
        ("a: &x\n- 1\nb: *zz\nc: &x\n", True),  # undefined, and defined twice: the parser takes both
        ("a:\n- k: &x\n    j: 1\n  l: *x\n  !!merge <<: *x\n- - &y\n", False),  # (the last: "- - &y")
        ("a:\n- k: &x\n    j: 1\n  l: *x\n  !!merge <<: *x\n", True),
        ("a: &x\n  k: 1\nb:\n  *x\n", False),  # an alias on the line after its key: left to libyaml
        ("a:\n- &y\n  *x\n", False),  # an anchor of an alias, which libyaml refuses
        ("a: &y\n  *x\n", False),
        ("a: *x\n  b: 1\n", False),  # a block after an alias
        ("a: *x\n  b\n", False),
        ("a:\n- *x\n  b: 1\n", False),
        ("a: !!str *x\n", False),  # a tag on an alias
        ("a: &x !!str *y\n", False),
        ("a:\n  &x\n", False),  # an anchor of nothing on a line of its own: left to libyaml
        ("a: &x &y\n  k: 1\n", False),
        ("a:\n  !!merge k: *x\n", False),
        ("a: *x:\n", False),
    ],
)
def test_the_pass_through_check_takes_anchors_aliases_and_merge_keys_as_libyamls_parser_does(body: str, taken: bool) -> None:
    text = f"kind: Role\nspec:\n{''.join('  ' + line + chr(10) for line in body.splitlines())}"
    assert fastparse.check_passed_through(text) is taken, text
    assert _libyaml_takes(text) or not taken, text


@pytest.mark.parametrize("by", ["items", "merge keys"])
def test_aliases_that_expand_too_far_are_refused_on_both_paths(by: str) -> None:
    """Forty of the level below at each of four levels: too many nodes for libyaml's path, though
    merge keys add no new key to the reader's mappings."""
    lines = ["a0: &a0\n  - x\n" if by == "items" else "a0: &a0\n  k: x\n"]
    for level in range(1, 5):
        previous = f"*a{level - 1}"
        lines.append(f"a{level}: &a{level}\n" + (f"  - {previous}\n" if by == "items" else f"  <<: {previous}\n") * 40)
    data = _anchored_configmap("".join(lines))
    assert fastparse.parse(data.decode().split("---\n", 1)[1])[5] == fastparse.PARSED_ONLY  # type: ignore[index]
    ran, _ = _outcome(data, Options(missing="ignore"), True)
    assert ran[0] == "error" and "aliases expand" in ran[1]
    assert_same(data)
    fewer = data.replace(b"a4: &a4", b"a4: &a4\n  k: x\na5:").replace(b"\n  - *a3" if by == "items" else b"\n  <<: *a3", b"")
    assert fastparse.parse(fewer.decode().split("---\n", 1)[1])[5] == fastparse.ALIASED  # type: ignore[index]


def test_an_anchor_nobody_reads_is_read_whole_for_the_aliases_the_planner_reads() -> None:
    """The anchored collection sits under a key the planner does not read; an alias of it, where
    the planner reads, names the ConfigMap whose hash the template gets."""
    text = (
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: v\n"
        "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  x-refs: &refs\n"
        "  - configMapRef:\n      name: cm\n  x-volume: &volume\n    configMap:\n      name: cm\n"
        "  template:\n    spec:\n      containers:\n      - name: c\n        envFrom: *refs\n"
        "      volumes:\n      - name: v\n        <<: *volume\n"
    )
    result = run([InputDocument("d.yaml", text.encode())], Options())
    assert result.fallbacks == [] and b"config-hash" in result.outputs[0]  # (spliced: the template has no alias)
    assert_same(text.encode(), Options())


@st.composite
def anchored(draw: st.DrawFn) -> bytes:
    """Documents whose blocks carry anchors, and later keys and items aliases and merge keys:
    mostly of collections closed before (a merge key's mostly of a mapping); now and then of a
    name defined twice, never defined, or still open (inside its own block)."""
    closed: dict[str, str] = {}  # name: "map", "seq" or "null"
    opened: list[str] = []
    comment = st.sampled_from(["", "  # c"])

    def new_name() -> str:
        every = [*closed, *opened]
        if every and draw(st.integers(0, 29)) == 0:
            return draw(st.sampled_from(every))  # defined twice
        return f"a{len(every)}"

    def alias(kind: str, otherwise: str) -> str:
        """An alias, mostly of a closed collection of ``kind``; ``otherwise`` where none is defined yet."""
        luck = draw(st.integers(0, 39))
        preferred = [name for name, its in closed.items() if its == kind]
        if luck < 34 and preferred:
            return "*" + draw(st.sampled_from(preferred))
        if luck < 37 and closed:
            return "*" + draw(st.sampled_from(list(closed)))
        if luck < 39 and opened:
            return "*" + draw(st.sampled_from(opened))
        return "*zz" if luck == 39 else otherwise

    def opening(name: str) -> None:
        if name:
            opened.append(name)

    def closing(name: str, kind: str) -> None:
        if name:
            opened.remove(name)
            closed[name] = kind

    def items(depth: int, column: int) -> list[str]:
        out: list[str] = []
        for _ in range(draw(st.integers(1, 3))):
            item = draw(st.integers(0, 3))
            if item == 0:
                out.append(f"{' ' * column}- {alias(draw(st.sampled_from(['map', 'seq', 'null'])), 'v')}")
            elif item == 1:
                name = new_name()
                out.append(f"{' ' * column}- &{name}")
                opening(name)
                out.extend(block(depth + 1, column + 2))
                closing(name, "map")
            else:
                inner = block(depth + 1, column + 2)
                inner[0] = " " * column + "- " + inner[0].lstrip(" ")
                out.extend(inner)
        return out

    def block(depth: int, indent: int) -> list[str]:
        out: list[str] = []
        pad = " " * indent
        step = draw(st.integers(1, 3))
        for index in range(draw(st.integers(1, 3))):
            key = f"k{index}"
            choice = draw(st.integers(0, 7 if depth < 3 else 3))
            if choice == 0:
                out.append(f"{pad}{key}: {draw(st.sampled_from(['v', '1', '~', '{}', 'cm']))}")
            elif choice == 1:
                out.append(f"{pad}{key}: {alias(draw(st.sampled_from(['map', 'seq', 'null'])), 'v')}{draw(comment)}")
            elif choice == 2:
                merged = alias("map", "")
                merge = draw(st.sampled_from(["<<", "!!merge <<"])) if merged else key
                out.append(f"{pad}{merge}: {merged or 'v'}{draw(comment)}")
            elif choice == 3:
                name = new_name()
                out.append(f"{pad}{key}: &{name}{draw(comment)}")
                closed[name] = "null"
            elif choice in (4, 5):
                name = new_name() if choice == 4 else ""
                out.append(f"{pad}{key}:{f' &{name}' if name else ''}{draw(comment)}")
                opening(name)
                out.extend(block(depth + 1, indent + step))
                closing(name, "map")
            else:
                name = new_name() if choice == 6 else ""
                out.append(f"{pad}{key}:{f' &{name}' if name else ''}")
                column = indent + draw(st.sampled_from([0, step]))
                opening(name)
                out.extend(items(depth, column))
                closing(name, "seq")
        return out

    kind = draw(st.sampled_from(["ConfigMap", "Deployment", "Role"]))
    body = "\n".join(block(0, 2)) + "\n"
    template = (
        f"  template:\n    metadata:\n      labels: {alias('map', '{}')}\n    spec:\n      containers:\n      - name: c\n"
        f"        envFrom: {alias('seq', '[]')}\n"
        if kind == "Deployment" and draw(st.booleans())
        else ""
    )
    configmap = "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: v\n"
    return f"{configmap}---\napiVersion: v1\nkind: {kind}\nmetadata:\n  name: n\nspec:\n{body}{template}".encode()


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(anchored())
def test_generated_anchors_aliases_and_merge_keys(data: bytes) -> None:
    assert_same(data)


@pytest.mark.parametrize("aliased", [True, False])
def test_findings_under_anchors_are_placed_as_libyaml_places_them(aliased: bool) -> None:
    """A missing ConfigMap named inside an anchored collection and, through an alias, in another
    container: both findings carry libyaml's lines (an alias's at its anchor's)."""
    init = "      initContainers:\n      - name: i\n        envFrom: *refs\n" if aliased else ""
    text = (
        "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n"
        "    metadata:\n      labels: &labels\n        app: d\n    spec:\n      containers:\n      - name: c\n"
        "        envFrom: &refs\n        - configMapRef:\n            name: absent\n" + init
    )
    result = run([InputDocument("d.yaml", text.encode())], Options())
    assert len([f for f in result.findings if "absent" in f.message]) == (2 if aliased else 1)
    assert fastparse.parse(text.split("---\n", 1)[1])[5] == (fastparse.ALIASED if aliased else fastparse.ANCHORED)  # type: ignore[index]
    assert_same(text.encode(), Options())


@pytest.mark.parametrize(
    "document",
    [
        "resources:\n- a.yaml\n- b.yaml\n",  # kustomize's own file, without its apiVersion and kind
        "resources: [a.yaml, {b: c}]\nimages:\n- name: x\n  newTag: '1'\n",
        "labels: {a: 1, a: 2}\n",  # shaped, and a key twice: the reference path refuses it
        "apiVersion: v1\nresources: []\n",  # an object without its kind: an error on both paths
        "kind:\napiVersion: v1\n",
        "metadata:\n  name: x\nspec: &s\n  a: 1\nother: *s\n",
    ],
)
def test_a_document_that_is_no_object_reads_as_on_the_reference_path(document: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A mapping without a kind (a kustomization.yaml written without its apiVersion and kind, as
    Gateway API's CRD directory holds one) adds nothing on either path; the reader's alone need
    not be composed."""
    data = ("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n---\n" + document).encode()
    assert_same(data)
    if "kind" not in document and "apiVersion" not in document and "{a: 1, a: 2}" not in document:
        expected = run([InputDocument("k.yaml", data)], Options())
        monkeypatch.setattr(nodes_module, "compose", lambda *args: pytest.fail("composed"))
        monkeypatch.setattr(nodes_module, "libyaml_accepts", lambda *args: pytest.fail("checked by libyaml"))
        assert run([InputDocument("k.yaml", data)], Options()).outputs == expected.outputs


@st.composite
def mutated_anchored(draw: st.DrawFn) -> bytes:
    """A generated document of anchors, aliases and merge keys (see anchored) with one or two
    lines changed as hand edits change them (see _mutate), read as a ConfigMap, a Deployment or
    a Role is: what the reader takes of it must be what libyaml's path reads."""
    head, _, document = draw(anchored()).decode().rpartition("---\n")
    lines = document.split("\n")[:-1]
    for _ in range(draw(st.integers(1, 2))):
        _mutate(draw, lines)
    return (head + "---\n" + "\n".join(lines) + "\n").encode()


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_anchored())
def test_mutated_anchors_aliases_and_merge_keys(data: bytes) -> None:
    assert_same(data)
    assert_checked_only_where_libyaml_takes(data)
