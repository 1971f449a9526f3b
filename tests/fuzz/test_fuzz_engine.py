"""Fuzzes the engine with YAML-ish byte streams and structured bundles: clean errors or sound, idempotent output."""

from __future__ import annotations

import os
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wavegen.core.plan import HASH_ANNOTATION, UNHASHED_ANNOTATION, Options
from wavegen.core.wave import WAVE_HASH_ANNOTATION
from wavegen.errors import WavegenError
from wavegen.stream.engine import InputDocument, run

# Bounded for CI: the whole module takes well under a minute; WAVEGEN_FUZZ_EXAMPLES raises it locally.
EXAMPLES = int(os.environ.get("WAVEGEN_FUZZ_EXAMPLES", "300"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=bool(os.environ.get("CI")),
)

FRAGMENTS = [
    "---\n",
    "...\n",
    "--- ",
    "apiVersion: v1\n",
    "apiVersion: apps/v1\n",
    "kind: ConfigMap\n",
    "kind: Secret\n",
    "kind: Deployment\n",
    "kind: List\n",
    "kind: Widget\n",
    "metadata:\n",
    "  name: app\n",
    "metadata: {name: app}\n",
    "data:\n",
    "  k: v\n",
    "  k: dg==\n",
    "stringData:\n",
    "spec:\n",
    "  template:\n",
    "    spec:\n",
    "      containers:\n",
    "      - name: c\n",
    "        envFrom:\n",
    "        - configMapRef: {name: app}\n",
    "        - secretRef: {name: app}\n",
    "    metadata:\n",
    "      annotations:\n",
    f"        {HASH_ANNOTATION}: old\n",
    "items:\n",
    "- ",
    "  ",
    "\t",
    ": ",
    ":",
    ",",
    "[",
    "]",
    "{",
    "}",
    "&a ",
    "*a",
    "<<: ",
    "? ",
    "!!str ",
    "!!binary ",
    "!x ",
    "|\n",
    ">-\n",
    "'",
    '"',
    "\\",
    "#",
    " # c\n",
    "\n",
    "\r\n",
    "\r",
    "%YAML 1.1\n",
    "\ufeff",
    "\x00",
    "\x01",
    "\x85",
    "\u2028",
    "é",
    "0",
    "~",
    "null",
    "yes",
    "1e3",
    "-1",
]


OWNED = frozenset((HASH_ANNOTATION, UNHASHED_ANNOTATION, WAVE_HASH_ANNOTATION))


def _strip_owned(value: Any) -> Any:
    """Drop wavegen's annotations (and containers left empty by that) so input and output compare."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key == "annotations" and isinstance(item, dict):
                item = {k: v for k, v in item.items() if k not in OWNED}
            item = _strip_owned(item)
            if key in ("annotations", "metadata") and item == {}:
                continue
            out[key] = item
        return out
    if isinstance(value, list):
        return [_strip_owned(item) for item in value]
    return value


def _load_all(data: bytes) -> list[Any] | None:
    try:
        return [_strip_owned(doc) for doc in yaml.safe_load_all(data.decode("utf-8"))]
    except (yaml.YAMLError, UnicodeDecodeError, RecursionError, ValueError, TypeError):
        return None


def check_sound(data: bytes, options: Options | None = None) -> bytes | None:
    """Run once; accepted input must give idempotent output equal to the input plus annotations."""
    options = options or Options()
    try:
        first = run([InputDocument("fuzz.yaml", data)], options)
    except WavegenError as err:
        assert "\n" not in str(err), str(err)
        return None
    if first.has_errors:
        return None
    output = first.outputs[0]
    second = run([InputDocument("fuzz.yaml", output)], options)
    assert not second.has_errors
    assert second.outputs[0] == output, "not idempotent"
    before = _load_all(data)
    if before is not None:
        after = _load_all(output)
        assert after is not None, "output does not parse"
        assert after == before, "output differs from input beyond wavegen's annotations"
    return output


@FUZZ
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join).map(lambda s: s.encode("utf-8", "surrogatepass")))
def test_yamlish_streams(data: bytes) -> None:
    check_sound(data)


@FUZZ
@given(st.binary(max_size=200))
def test_random_bytes(data: bytes) -> None:
    check_sound(data)


# ---- structured bundles --------------------------------------------------------

NAMES = st.sampled_from(["app", "db", "shared", "x.y", "a-b"])
TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=12)
KEYS = st.sampled_from(["k", "a.b", "c_d", "ünï", "KEY"])


def _scalar(value: str, style: int) -> str:
    if style == 0:
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return "'" + value.replace("'", "''") + "'"


@st.composite
def bundles(draw: st.DrawFn) -> tuple[bytes, int]:
    docs: list[str] = []
    used: set[tuple[str, str]] = set()
    flow = draw(st.booleans())
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["ConfigMap", "Secret"]))
        name = draw(NAMES)
        if (kind, name) in used:
            continue
        used.add((kind, name))
        items = draw(st.dictionaries(KEYS, TEXT, max_size=3))
        field = "data" if kind == "ConfigMap" else draw(st.sampled_from(["stringData", "data"]))
        if field == "data" and kind == "Secret":
            import base64

            items = {k: base64.b64encode(v.encode()).decode() for k, v in items.items()}
        style = draw(st.integers(0, 1))
        body = "".join(f"\n  {_scalar(k, style)}: {_scalar(v, style)}" for k, v in items.items()) or " {}"
        docs.append(f"apiVersion: v1\nkind: {kind}\nmetadata:\n  name: {name}\n{field}:{body}\n")
    workloads = 0
    for index in range(draw(st.integers(0, 3))):
        refs = draw(st.lists(st.tuples(st.sampled_from(["configMapRef", "secretRef"]), NAMES), max_size=3))
        env_from = "".join(f"\n        - {ref}:\n            name: {name}" for ref, name in refs) or " []"
        kind = draw(st.sampled_from(["Deployment", "StatefulSet", "DaemonSet"]))
        annotations = draw(
            st.sampled_from(
                [
                    "",
                    "    metadata:\n      annotations:\n        team: a\n",
                    f"    metadata:\n      annotations: {{{HASH_ANNOTATION}: stale}}\n",
                ]
            )
        )
        text = (
            f"apiVersion: apps/v1\nkind: {kind}\nmetadata:\n  name: w{index}\nspec:\n  template:\n{annotations}"
            f"    spec:\n      containers:\n      - name: c\n        image: nginx\n        envFrom:{env_from}\n"
        )
        if flow:
            text = yaml.safe_dump(yaml.safe_load(text), default_flow_style=True, width=10**6)
        docs.append(text)
        workloads += 1
    comment = draw(st.sampled_from(["", "# Source: chart/templates/x.yaml\n"]))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    return ("---\n".join(comment + d for d in docs)).replace("\n", newline).encode(), workloads


@FUZZ
@given(bundles(), st.sampled_from([None, b"k3y"]), st.sampled_from(["wavegen", "wave"]))
def test_structured_bundles(bundle: tuple[bytes, int], key: bytes | None, profile: str) -> None:
    data, _ = bundle
    options = Options(profile=profile, hmac_key=key)  # type: ignore[arg-type]
    output = check_sound(data, options)
    assert output is not None, "well-formed bundles are accepted"
