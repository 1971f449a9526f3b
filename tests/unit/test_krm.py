"""The KRM function adapter: ResourceList in, same list out with hashes and results; functionConfig schemas."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from wavegen.core.plan import HASH_ANNOTATION, Options
from wavegen.errors import WavegenError
from wavegen.integrations import krm
from wavegen.integrations.krm import process, with_results
from wavegen.integrations.kustomize_names import hash_suffix
from wavegen.stream.engine import InputDocument, run

ITEMS = """\
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: app-config
    annotations:
      internal.config.kubernetes.io/path: 'config/app.yaml'
      internal.config.kubernetes.io/index: '0'
      config.k8s.io/id: '1'
  data:
    LOG_LEVEL: info
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: build-settings
    annotations:
      config.kubernetes.io/local-config: "true"
  data:
    TARGET: staging
- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: web
    annotations:
      internal.config.kubernetes.io/path: 'config/web.yaml'
      internal.config.kubernetes.io/index: '1'
      config.kubernetes.io/index: '1'
      kustomize.config.k8s.io/id: |
        group: apps
        kind: Deployment
        name: web
  spec:
    template:
      spec:
        containers:
        - name: web
          envFrom:
          - configMapRef:
              name: app-config
          - configMapRef:
              name: build-settings
              optional: true
"""


def resource_list(version: str = "config.kubernetes.io/v1", function_config: str = "", items: str = ITEMS) -> bytes:
    return f"apiVersion: {version}\nkind: ResourceList\n{items}{function_config}".encode()


def parsed(data: bytes) -> dict[str, Any]:
    loaded = yaml.safe_load(data)
    assert isinstance(loaded, dict)
    return loaded


def template_annotations(doc: dict[str, Any], name: str) -> dict[str, str]:
    item = next(i for i in doc["items"] if i["metadata"]["name"] == name)
    annotations: dict[str, str] = (item["spec"]["template"].get("metadata") or {}).get("annotations") or {}
    return annotations


def expected_hash(namespace: str = "default") -> str:
    """What ``wavegen transform`` computes for the same objects as a plain stream (local-config left out)."""
    stream = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-config\ndata:\n  LOG_LEVEL: info\n---\n"
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n"
        "      containers:\n      - name: web\n        envFrom:\n        - configMapRef:\n            name: app-config\n"
        "        - configMapRef:\n            name: build-settings\n            optional: true\n"
    )
    result = run([InputDocument("x", stream.encode())], Options(namespace=namespace))
    docs = list(yaml.safe_load_all(result.outputs[0]))
    value: str = docs[1]["spec"]["template"]["metadata"]["annotations"][HASH_ANNOTATION]
    return value


@pytest.mark.parametrize("version", ["config.kubernetes.io/v1", "config.kubernetes.io/v1beta1"])
def test_annotates_and_keeps_everything_else(version: str) -> None:
    data = resource_list(version)
    outcome = process(data, environ={})
    assert outcome.exit_code == 0
    assert outcome.results == []
    out = parsed(outcome.output)
    assert out["apiVersion"] == version and out["kind"] == "ResourceList"
    assert [i["metadata"]["name"] for i in out["items"]] == ["app-config", "build-settings", "web"]
    annotations = template_annotations(out, "web")
    assert annotations[HASH_ANNOTATION] == expected_hash()
    # the local-config ConfigMap is neither hashed nor counted as present
    assert annotations["wavegen.io/unhashed-refs"] == "ConfigMap/build-settings"
    # only added lines: every input line is still there, in order, byte for byte
    added = [line for line in outcome.output.decode().splitlines() if line not in data.decode().splitlines()]
    assert all(("wavegen.io/" in line) or line.strip() in ("metadata:", "annotations:") for line in added), added
    assert "results" not in out


def test_local_config_workload_is_not_annotated() -> None:
    items = ITEMS.replace(
        "    name: web\n    annotations:\n", '    name: web\n    annotations:\n      config.kubernetes.io/local-config: "true"\n'
    )
    outcome = process(resource_list(items=items), environ={})
    assert outcome.output == resource_list(items=items)


def test_configmap_function_config_sets_namespace_and_policy() -> None:
    function_config = (
        "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: wavegen\n"
        "  data:\n    namespace: prod\n    missing: error\n    optIn: 'false'\n"
    )
    items = ITEMS.replace("              optional: true\n", "")
    outcome = process(resource_list(function_config=function_config, items=items), environ={})
    assert outcome.exit_code == 1
    out = parsed(outcome.output)
    # an error: the items come back untouched, with the reason in results
    assert HASH_ANNOTATION not in template_annotations(out, "web")
    assert outcome.results == out["results"]
    [result] = out["results"]
    assert result["severity"] == "error"
    assert "ConfigMap prod/build-settings" in result["message"]
    assert result["resourceRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
    assert result["field"]["path"].endswith("envFrom[1].configMapRef")
    assert result["file"] == {"path": "config/web.yaml", "index": 1}


def test_typed_function_config() -> None:
    function_config = (
        "functionConfig:\n  apiVersion: wavegen.io/v1alpha1\n  kind: ConfigHash\n  metadata:\n    name: wavegen\n"
        "  spec:\n    namespace: prod\n    optIn: false\n    workloads:\n    - kind: Thing\n      group: example.com\n"
        "      templatePaths: [spec.template]\n"
    )
    outcome = process(resource_list(function_config=function_config), environ={})
    assert outcome.exit_code == 0
    assert template_annotations(parsed(outcome.output), "web")[HASH_ANNOTATION] == expected_hash("prod")


def test_configmap_workloads_as_flag_specs() -> None:
    thing = (
        "- apiVersion: example.com/v1\n  kind: Thing\n  metadata:\n    name: t\n  spec:\n    template:\n      spec:\n"
        "        containers:\n        - name: c\n          envFrom:\n          - configMapRef:\n              name: app-config\n"
    )
    function_config = (
        "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: wavegen\n"
        "  data:\n    workloads: Thing.example.com=spec.template\n"
    )
    outcome = process(resource_list(function_config=function_config, items=ITEMS + thing), environ={})
    assert HASH_ANNOTATION in template_annotations(parsed(outcome.output), "t")


@pytest.mark.parametrize(
    "function_config",
    [
        "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: x\n  data:\n    misssing: warn\n",
        "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: x\n  data:\n    profile: nope\n",
        "functionConfig:\n  apiVersion: example.com/v1\n  kind: Other\n  metadata:\n    name: x\n",
    ],
)
def test_bad_function_config_is_an_error_result(function_config: str) -> None:
    data = resource_list(function_config=function_config)
    outcome = process(data, environ={})
    assert outcome.exit_code != 0
    out = parsed(outcome.output)
    assert [r["severity"] for r in out["results"]] == ["error"]
    assert out["items"] == parsed(data)["items"]


def test_missing_reference_warning_keeps_exit_zero() -> None:
    items = ITEMS.replace("              optional: true\n", "")
    outcome = process(resource_list(items=items), environ={})
    assert outcome.exit_code == 0
    out = parsed(outcome.output)
    assert [r["severity"] for r in out["results"]] == ["warning"]
    assert HASH_ANNOTATION in template_annotations(out, "web")


def test_previous_results_are_replaced() -> None:
    data = resource_list() + b"results:\n- message: stale\n  severity: error\n"
    outcome = process(data, environ={})
    assert "results" not in parsed(outcome.output)
    assert outcome.exit_code == 0


def test_idempotent() -> None:
    once = process(resource_list(), environ={}).output
    assert process(once, environ={}).output == once


def test_json_input() -> None:
    doc = parsed(resource_list())
    outcome = process(json.dumps(doc).encode(), environ={})
    assert template_annotations(parsed(outcome.output), "web")[HASH_ANNOTATION] == expected_hash()


def test_secret_values_never_in_results() -> None:
    items = ITEMS + "- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: s\n  stringData:\n    k: [hunter2]\n"
    outcome = process(resource_list(items=items), environ={})
    assert outcome.exit_code != 0
    assert b"hunter2" not in json.dumps(outcome.results).encode()


@pytest.mark.parametrize(
    "data",
    [
        b"apiVersion: v1\nkind: List\nitems: []\n",
        b"a: [",
        b"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: 3\n",
        resource_list() + b"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
    ],
    ids=["a-list", "no-yaml", "items-scalar", "two-documents"],
)
def test_not_a_resource_list(data: bytes) -> None:
    with pytest.raises(WavegenError):
        process(data, environ={})


def test_with_results_splices_only_the_results_block() -> None:
    text = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nresults: []\nitems:\n- a: 1 # keep me\n"
    out = with_results(text, [{"message": "m", "severity": "info"}])
    assert out.startswith("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- a: 1 # keep me\n")
    assert yaml.safe_load(out)["results"] == [{"message": "m", "severity": "info"}]
    assert with_results(out, None) == "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- a: 1 # keep me\n"


def test_kustomize_hash_suffix_matches_kustomize() -> None:
    # names kustomize v5.8 gave these generated objects (configMapGenerator / secretGenerator literals)
    assert hash_suffix({"kind": "ConfigMap", "metadata": {"name": "app-env"}, "data": {"FEATURE_X": "on"}}) == "f78mmf5m89"
    secret = {"kind": "Secret", "type": "Opaque", "metadata": {"name": "s"}, "data": {"token": "bm90LWEtcmVhbC10b2tlbg=="}}
    assert hash_suffix(secret) == "879htmcftm"


def test_kustomize_pending_renames_are_predicted() -> None:
    items = """\
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: prod-app-env
    namespace: prod
    annotations:
      internal.config.kubernetes.io/needsHashSuffix: enabled
      internal.config.kubernetes.io/previousNames: app-env,app-env
  data:
    FEATURE_X: "on"
- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: prod-web
    namespace: prod
  spec:
    template:
      spec:
        containers:
        - name: web
          envFrom:
          - configMapRef:
              name: app-env
"""
    outcome = process(resource_list(items=items), environ={})
    assert outcome.results == []
    final = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: prod-app-env-f78mmf5m89\n  namespace: prod\n"
        'data:\n  FEATURE_X: "on"\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: prod-web\n'
        "  namespace: prod\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        envFrom:\n"
        "        - configMapRef:\n            name: prod-app-env-f78mmf5m89\n"
    )
    applied = list(yaml.safe_load_all(run([InputDocument("x", final.encode())], Options()).outputs[0]))
    want = applied[1]["spec"]["template"]["metadata"]["annotations"][HASH_ANNOTATION]
    assert template_annotations(parsed(outcome.output), "prod-web")[HASH_ANNOTATION] == want


def test_command_writes_only_the_resource_list_and_exits_nonzero_on_errors() -> None:
    items = ITEMS.replace("              optional: true\n", "")
    proc = subprocess.run(
        [sys.executable, "-m", "wavegen", "krm", "--missing=error"],
        input=resource_list(items=items),
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 1
    out = parsed(proc.stdout)
    assert out["kind"] == "ResourceList" and out["results"][0]["severity"] == "error"
    assert b"build-settings" in proc.stderr
    ok = subprocess.run([sys.executable, "-m", "wavegen", "krm"], input=resource_list(), capture_output=True, check=False)
    assert ok.returncode == 0, ok.stderr
    assert ok.stderr == b""


# ---- the list read as the engine reads any input -------------------------------------------------

FUNCTION_CONFIG = "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: wavegen\n  data:\n"
#: Lists as kustomize and kpt write them (read without PyYAML: FAST), and lists whose own fields the
#: engine may read otherwise than PyYAML's loader, or not at all.
LISTS = {
    "kustomize": resource_list(function_config=FUNCTION_CONFIG + "    missing: warn\n"),
    "no-function-config": resource_list(),
    "typed": resource_list(
        function_config="functionConfig:\n  apiVersion: wavegen.io/v1alpha1\n  kind: ConfigHash\n  spec:\n"
        "    optIn: true\n    workloads:\n    - kind: Thing\n      templatePaths: [spec.template]\n"
    ),
    "results-before": b"results: []\n" + resource_list(),
    "crlf": resource_list(function_config=FUNCTION_CONFIG + "    namespace: team\n").replace(b"\n", b"\r\n"),
    "timestamp": resource_list(function_config=FUNCTION_CONFIG + "    namespace: 2001-12-14\n"),
    "hex": resource_list(function_config=FUNCTION_CONFIG + "    namespace: 0x10\n"),
    "float": resource_list(function_config=FUNCTION_CONFIG + "    namespace: 1.5\n"),
    "marker": b"---\n" + resource_list(),
    "two-documents": resource_list() + b"---\nkind: ResourceList\n",
    "end-marker": resource_list() + b"...\n",
    "json": json.dumps(parsed(resource_list())).encode(),
    "anchored": resource_list(function_config=FUNCTION_CONFIG + "    a: &x team\n    namespace: *x\n"),
    "items-flow": b"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: [{kind: A}]\n",
    "items-scalar": b"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: 3\n",
    "kind-number": b"apiVersion: 1\nkind: ResourceList\nitems: []\n",
    "not-a-list": b"apiVersion: v1\nkind: List\nitems: []\n",
}
# (anchored and items-flow are read by the engine's reference path: libyaml composes them, PyYAML loads nothing)
FAST = ("kustomize", "no-function-config", "typed", "results-before", "crlf", "anchored", "items-flow")


def _fields(root: dict[str, Any]) -> tuple[Any, ...]:
    items = root.get("items")
    shape = (type(items).__name__, len(items) if isinstance(items, list) else items)
    return root.get("apiVersion"), root.get("kind"), root.get("functionConfig"), "results" in root, shape


@pytest.mark.parametrize("name", sorted(LISTS))
def test_the_list_s_own_fields_are_what_pyyaml_loads(name: str) -> None:
    data = LISTS[name]
    read = krm._read_list(data)[2]
    if name in FAST:
        assert read is not None  # the guard: kustomize's lists are read as the engine reads any input
    if read is not None:
        assert _fields(read) == _fields(yaml.load(data, Loader=yaml.CSafeLoader))


#: Plain scalars PyYAML's loader makes values of other types from, or reads otherwise than they look.
SCALARS = st.sampled_from(
    ["team", "1", "-1", "+1", "0", "012", "0o12", "1_000", "0x1F", "0b11", "1:30", "1.5", "1e3", "1.0e+3", ".inf",
     ".NaN", "yes", "No", "on", "OFF", "true", "~", "null", "", "2001-12-14", "2001-12-14 21:59:43.10 -5", "=", "<<",
     "'quoted'", '"a\\tb"', '"x: y"', "|\n      block", ">-\n      folded", "[a, b]", "{a: b}", "a # c", "é", "-"]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(values=st.lists(SCALARS, min_size=1, max_size=4))
def test_function_config_values_are_read_as_pyyaml_loads_them(values: list[str]) -> None:
    body = "".join(f"    k{index}: {value}\n" for index, value in enumerate(values))
    text = resource_list(function_config=FUNCTION_CONFIG + body).decode()
    try:
        loaded = yaml.load(text, Loader=yaml.CSafeLoader)
    except (yaml.YAMLError, ValueError):
        loaded = None
    read = krm._read_list(text.encode())[2]
    if read is not None:
        assert loaded is not None and _fields(read) == _fields(loaded)


def test_a_kustomize_list_is_read_without_pyyaml_or_libyaml(monkeypatch: pytest.MonkeyPatch) -> None:
    """Guards the comparisons: the engine reads the items with the subset reader, and nothing loads the list."""
    from wavegen.stream import engine as stream_engine

    def refuse(*args: Any) -> Any:
        raise AssertionError("took the PyYAML path")

    monkeypatch.setattr(krm, "_load_resource_list", refuse)
    monkeypatch.setattr(stream_engine.Engine, "_compose_piece", refuse)
    outcome = process(LISTS["kustomize"], environ={})
    assert outcome.exit_code == 0 and HASH_ANNOTATION in template_annotations(parsed(outcome.output), "web")


def test_a_finding_on_an_item_s_first_line_names_that_item() -> None:
    """A definition made twice is found on the second's first line: its result names it, not the item before."""
    items = ITEMS + (
        "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: app-config\n    annotations:\n"
        "      internal.config.kubernetes.io/path: 'config/again.yaml'\n  data:\n    LOG_LEVEL: debug\n"
    )
    outcome = process(resource_list(items=items), environ={})
    [twice] = [r for r in outcome.results if "defined twice" in r["message"]]
    assert twice["resourceRef"] == {"apiVersion": "v1", "kind": "ConfigMap", "name": "app-config"}
    assert twice["file"] == {"path": "config/again.yaml"}


# ---- results put back without composing the list ------------------------------------------------

#: Values as a ResourceList's top-level keys may hold them (the text after "key:"), in the styles
#: with_results must step over: on the key's line, below it, empty, and over lines that look like keys.
VALUES = [
    " v\n", " 'q: x'\n", ' "a\\"b"\n', " []\n", " {}\n", " [a, b] # c\n", "\n", " # only a comment\n",
    "\n- a\n- b: c\n  d: e\n", "\n  - a\n  -\n    b\n", "\n  a: b\n  c:\n    d: e\n", " # c\n  a: b\n",
    "\n  plain\n  continued\n", " |\n  text\n\n  more\n", " >-\n  folded\n", " [\n  a,\n  b\n  ]\n",
    "\n  # inner\n  - a\n", ' "multi\nresults: x\n  end"\n', ' "x\nresults:\n  - y"\n', " 'over\nkind:\n  a: b'\n",
    '\n  a: "x\nresults:\n  - y"\n', " &a\n  x: y\n", " *a\n", "\n  'quoted': x\n", "\n  ? complex\n  : value\n",
    " !!map\n  a: b\n", "\n  [a, b]\n", "\n  -x\n",
]  # fmt: skip
BETWEEN = ["", "\n", "# a comment\n", "  # an indented one\n", "\n# after a blank\n", "   \n"]
KEYS = ["apiVersion", "kind", "items", "functionConfig", "results", "metadata"]


@st.composite
def resource_list_texts(draw: st.DrawFn) -> str:
    keys = draw(st.lists(st.sampled_from(KEYS), min_size=1, max_size=5, unique=True))
    text = draw(st.sampled_from(BETWEEN))
    for key in keys:
        text += key + ":" + draw(st.sampled_from(VALUES)) + draw(st.sampled_from(BETWEEN))
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    if draw(st.booleans()):
        text = text.rstrip("\r\n")
    return text


def _put_back(put: Any, text: str, results: list[dict[str, Any]] | None, *keys: Any) -> tuple[str, str]:
    try:
        return put(text, results, *keys), ""
    except (WavegenError, yaml.YAMLError) as err:  # (removing an anchored results can leave an alias without it)
        return "", f"{type(err).__name__}: {err}"


RESULTS = [None, [], [{"message": "m: 'x'", "severity": "info"}], [{"message": "é\nsecond", "severity": "error"}]]


@settings(max_examples=600, deadline=None)
@given(text=resource_list_texts(), results=st.sampled_from(RESULTS))
def test_results_are_put_back_where_composing_the_list_puts_them(text: str, results: Any) -> None:
    try:
        root = yaml.load(text, Loader=yaml.CSafeLoader)
    except yaml.YAMLError:
        return  # (not a list any reader takes)
    if not isinstance(root, dict):
        return
    composed = _put_back(krm._with_results_composed, text, results or None)
    assert _put_back(with_results, text, results or None, list(root)) == composed


def test_a_kustomize_list_s_results_are_put_back_without_composing_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Guards the comparison: the lists kustomize and kpt write take the textual path."""
    data = resource_list(function_config=FUNCTION_CONFIG + "    missing: warn\n") + b"results:\n- message: old\n"
    monkeypatch.setattr(krm, "_with_results_composed", lambda *args: pytest.fail("composed the list"))
    monkeypatch.setattr(krm, "_root_mapping", lambda *args: pytest.fail("composed the list"))
    outcome = process(data.replace(b"              optional: true\n", b""), environ={})
    assert [r["severity"] for r in outcome.results] == ["warning"]
    assert parsed(outcome.output)["results"] == outcome.results


def test_a_plain_equals_sign_is_the_string_transform_reads() -> None:
    """prometheus-operator's CRDs hold `- =` (YAML 1.1's value key, which PyYAML cannot construct):
    the function read the list with PyYAML and refused it, where kustomize and transform take it."""
    crd = (
        "- apiVersion: apiextensions.k8s.io/v1\n  kind: CustomResourceDefinition\n  metadata:\n    name: x.example.com\n"
        "  spec:\n    enum:\n    - '!='\n    - =\n"
    )
    items = ITEMS.replace("    LOG_LEVEL: info\n", "    LOG_LEVEL: =\n") + crd
    outcome = process(resource_list(items=items), environ={})
    assert outcome.exit_code == 0, outcome.results
    stream = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-config\ndata:\n  LOG_LEVEL: =\n---\n"
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n"
        "      containers:\n      - name: web\n        envFrom:\n        - configMapRef:\n            name: app-config\n"
        "        - configMapRef:\n            name: build-settings\n            optional: true\n"
    )

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("tag:yaml.org,2002:value", Loader.construct_scalar)
    transformed = list(yaml.load_all(run([InputDocument("x", stream.encode())], Options()).outputs[0], Loader=Loader))
    want = transformed[1]["spec"]["template"]["metadata"]["annotations"][HASH_ANNOTATION]
    assert template_annotations(yaml.load(outcome.output, Loader=Loader), "web")[HASH_ANNOTATION] == want
    assert want != expected_hash()  # (the value is read, and hashed as "=")


LOCAL_ONLY = (
    "items:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: c\n    annotations:\n"
    "      config.kubernetes.io/local-config: 'true'\n  data:\n    k: v\n"
)


@pytest.mark.parametrize("items", ["items: []\n", "items:\n", "", LOCAL_ONLY], ids=["empty", "null", "none", "local-config"])
def test_a_list_without_objects_comes_back_as_it_is(items: str) -> None:
    data = resource_list(items=items)
    outcome = process(data, environ={})
    assert (outcome.exit_code, outcome.output, outcome.results) == (0, data, [])


PRINTABLE = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=40) | st.sampled_from(
    ["", "yes", "No", "null", "~", "1", "0x1F", "1.5", "2001-12-14", "- a", "a: b", "#x", "x #y", "'", '"', " lead",
     "trail ", "[a]", "{a}", "*a", "&a", "!t", "|", ">", "%", "@", "`", "=", "<<", "?", ":", "-"]
)  # fmt: skip
RESULT = st.fixed_dictionaries(
    {"message": PRINTABLE, "severity": st.sampled_from(["error", "warning", "info"])},
    optional={
        "resourceRef": st.fixed_dictionaries({"apiVersion": PRINTABLE, "kind": PRINTABLE, "name": PRINTABLE}),
        "field": st.fixed_dictionaries({"path": PRINTABLE}),
        "file": st.fixed_dictionaries({"path": PRINTABLE}, optional={"index": st.integers()}),
    },
)


@settings(max_examples=400, deadline=None)
@given(results=st.lists(RESULT, max_size=4), indent=st.sampled_from(["", "  "]), newline=st.sampled_from(["\n", "\r\n"]))
def test_results_of_printable_ascii_are_written_as_pyyaml_s_python_emitter_writes_them(
    results: list[dict[str, Any]], indent: str, newline: str
) -> None:
    """libyaml's emitter writes them (six times faster): the same bytes."""
    assert krm._printable_ascii(results)
    python = yaml.dump({"results": results}, Dumper=yaml.SafeDumper, sort_keys=False, allow_unicode=True, width=1 << 16)
    assert krm._dump_results(results, indent, newline) == "".join(indent + line + newline for line in python.split("\n")[:-1])


@pytest.mark.parametrize("message", ["\U00010000", "é", "a\tb", "a\nb", "a\x85b", "a\u2028b", "a\x0cb"])
def test_results_past_printable_ascii_are_written_by_pyyaml_s_python_emitter(message: str) -> None:
    """Byte for byte as PyYAML writes them (a NEL, LS or PS in a message cut the line it was in)."""
    results = [{"message": message, "severity": "info"}]
    assert not krm._printable_ascii(results)
    python = yaml.dump({"results": results}, Dumper=yaml.SafeDumper, sort_keys=False, allow_unicode=True, width=1 << 16)
    written = krm._dump_results(results, "", "\n")
    assert written == python
