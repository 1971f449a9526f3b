"""The canonical hash: the README's worked example, stored-form rules, and HMAC mode."""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path

import pytest

from wavegen.core.hashing import canonical_bytes, config_hash
from wavegen.core.model import TypedScalar
from wavegen.core.plan import Options
from wavegen.core.sources import SourceError, config_source
from wavegen.core.yamltojson import sent_as_string
from wavegen.errors import WavegenError
from wavegen.stream.engine import InputDocument, run
from wavegen.stream.resolver import BOOL_TAG, NULL_TAG, STR_TAG, implicit_tag

# The README's worked example; the digest was computed with printf | sha256sum.
README_DIGEST = "952fd5929b91f15d5d0e5c9092180ce4fa025180b1a43bd461f4df8b72a1a005"


def _worked_example() -> list[tuple[object, frozenset[str] | None]]:
    cm = config_source("ConfigMap", "default", "app-config", {"data": {"LOG_LEVEL": "info", "unused": "x"}})
    secret = config_source("Secret", "default", "db", {"stringData": {"password": "hunter2"}})
    return [(secret, None), (cm, frozenset({"LOG_LEVEL"}))]


def test_worked_example_from_readme() -> None:
    visible = _worked_example()
    expected = (
        "wavegen.io/config-hash v1\n"
        "ConfigMap default/app-config\n"
        f"LOG_LEVEL {hashlib.sha256(b'info').hexdigest()}\n"
        "Secret default/db\n"
        f"password {hashlib.sha256(b'hunter2').hexdigest()}\n"
    ).encode()
    assert canonical_bytes(visible) == expected  # type: ignore[arg-type]
    assert config_hash(visible) == README_DIGEST  # type: ignore[arg-type]


def test_string_data_folds_over_data_like_the_api_server() -> None:
    both = config_source("Secret", "ns", "s", {"data": {"a": "b2xk", "b": "Yg=="}, "stringData": {"a": "new"}})
    assert dict(both.binary_data) == {"a": b"new", "b": b"b"}


def test_binary_data_is_decoded_and_counts() -> None:
    cm = config_source("ConfigMap", "ns", "c", {"data": {"t": "x"}, "binaryData": {"bin": "AAEC"}})
    assert cm.visible_items(None) == {"t": b"x", "bin": b"\x00\x01\x02"}


def test_metadata_and_key_order_do_not_count() -> None:
    a = config_source("ConfigMap", "ns", "c", {"metadata": {"labels": {"x": "1"}}, "data": {"a": "1", "b": "2"}})
    b = config_source("ConfigMap", "ns", "c", {"metadata": {"labels": {"y": "2"}}, "data": {"b": "2", "a": "1"}})
    assert config_hash([(a, None)]) == config_hash([(b, None)])


def test_same_bytes_through_data_or_string_data_hash_the_same() -> None:
    a = config_source("Secret", "ns", "s", {"data": {"k": "aHVudGVyMg=="}})
    b = config_source("Secret", "ns", "s", {"stringData": {"k": "hunter2"}})
    assert config_hash([(a, None)]) == config_hash([(b, None)])


def test_configmap_and_secret_with_same_name_are_distinct() -> None:
    cm = config_source("ConfigMap", "ns", "same", {"data": {"k": "v"}})
    secret = config_source("Secret", "ns", "same", {"stringData": {"k": "v"}})
    assert config_hash([(cm, None)]) != config_hash([(secret, None)])


def test_hmac_mode_uses_the_key() -> None:
    visible = _worked_example()
    canonical = canonical_bytes(visible)  # type: ignore[arg-type]
    keyed = config_hash(visible, b"k1")  # type: ignore[arg-type]
    assert keyed == hmac.new(b"k1", canonical, hashlib.sha256).hexdigest()
    assert keyed != config_hash(visible, b"k2") != README_DIGEST  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("body", "pattern"),
    [
        ({"data": {"k": 5}}, "not a string"),
        ({"data": {"k": "v"}, "binaryData": {"k": "AA=="}}, "both data and binaryData"),
        ({"binaryData": {"k": "%%%"}}, "not valid base64"),
        ({"binaryData": {"k": "QUJD="}}, "not valid base64"),  # "=" after a whole group: Go refuses it
        ({"data": ["x"]}, "must be a mapping"),
    ],
)
def test_invalid_configmaps_are_refused(body: dict[str, object], pattern: str) -> None:
    with pytest.raises(SourceError, match=pattern):
        config_source("ConfigMap", "ns", "c", body)


INT = "tag:yaml.org,2002:int"


@pytest.mark.parametrize(
    ("written", "stored"),
    [("5432", "5432"), ("0", "0"), ("-1", "-1"), ("0x1538", None), ("010", None), ("1_000", None), ("1:20", "1:20")],
)
def test_a_data_key_written_as_a_decimal_integer_is_stored_as_its_digits(written: str, stored: str | None) -> None:
    """As kubectl's YAML-to-JSON conversion stores ingress-nginx's tcp-services keys; a base-60 one
    (no number to go-yaml) as written; other spellings are refused."""
    body = {"data": {TypedScalar(INT, written): "ns/svc:5432"}}
    if stored is None:
        with pytest.raises(SourceError, match="non-string key"):
            config_source("ConfigMap", "ns", "tcp-services", body)
    else:
        assert config_source("ConfigMap", "ns", "tcp-services", body).text_data == {stored: "ns/svc:5432"}


def test_a_bundle_with_integer_data_keys_gets_the_hash_of_quoted_ones() -> None:
    """ingress-nginx's documented tcp-services ConfigMap: the hash is the one the cluster's stored object gives."""
    bundle = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tcp-services\n  namespace: ingress\ndata:\n"
        "  KEY: default/example-go:8080\n---\n"
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: controller\n  namespace: ingress\nspec:\n"
        "  template:\n    spec:\n      containers:\n      - name: c\n        envFrom:\n"
        "        - configMapRef:\n            name: tcp-services\n"
    )

    def hash_of(key: str) -> str:
        result = run([InputDocument("b.yaml", bundle.replace("KEY", key).encode())], Options())
        assert not result.has_errors
        text = "".join(result.files[0].chunks)
        return next(line for line in text.splitlines() if "config-hash" in line)

    assert hash_of("9000") == hash_of('"9000"') != hash_of('"9001"')


def test_invalid_base64_error_never_contains_the_value() -> None:
    with pytest.raises(SourceError) as caught:
        config_source("Secret", "ns", "s", {"data": {"password": "hunter2-not-base64!"}})
    assert "hunter2" not in str(caught.value)


def test_the_builtin_sha256_gives_hashlibs_digests(monkeypatch: pytest.MonkeyPatch) -> None:
    """Small runs hash with CPython's own SHA-256 (no OpenSSL to load), larger ones with hashlib's: same digests."""
    import hashlib
    import os

    from wavegen.core import hashing

    values = [b"", b"x", os.urandom(1000), os.urandom(70_000)]
    monkeypatch.setattr(hashing, "_hashed", [0])
    builtin = [hashing.sha256_hex(value) for value in values]
    assert hashing._sha256_constructor(0) is not hashlib.sha256  # the builtin one was used
    monkeypatch.setattr(hashing, "_hashed", [hashing._BUILTIN_SHA256_BYTES + 1])
    assert hashing._sha256_constructor(0) is hashlib.sha256
    assert builtin == [hashing.sha256_hex(value) for value in values] == [hashlib.sha256(v).hexdigest() for v in values]


def test_the_builtin_sha256_is_looked_up_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # A failed import is not cached by Python: looking for _sha2 on every digest (3.11 has _sha256)
    # searched sys.path each time and made a 6,000-document run twice as slow.
    import builtins

    from wavegen.core import hashing

    monkeypatch.setattr(hashing, "_hashed", [0])
    monkeypatch.setattr(hashing, "_builtin", [])  # not looked up yet
    imports: list[str] = []
    real_import = builtins.__import__

    def counting(name: str, *args: object, **kwargs: object) -> object:
        imports.append(name)
        return real_import(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", counting)
    for value in range(100):
        hashing.sha256_hex(str(value).encode())
    assert len([name for name in imports if name.startswith("_sha")]) <= 2


# What sigs.k8s.io/yaml (kubectl, helm, Argo CD) sends for plain scalars YAML 1.1 reads as no
# string: recorded by tests/vectors/go_yaml_scalars (tests/integration/test_go_yaml_scalars.py
# runs it again against the module proxy's sigs.k8s.io/yaml).
GO_YAML = Path(__file__).resolve().parents[1] / "vectors" / "go_yaml_scalars"


def go_yaml_answers() -> list[tuple[str, object]]:
    scalars = [json.loads(line) for line in (GO_YAML / "scalars.txt").read_text().splitlines()]
    answers = [json.loads(line) for line in (GO_YAML / "answers.jsonl").read_text().splitlines()]
    assert len(scalars) == len(answers) > 70
    return [(scalar, answer.get("v", answer)) for scalar, answer in zip(scalars, answers, strict=True)]


@pytest.mark.parametrize(("scalar", "sent"), go_yaml_answers())
def test_scalars_yaml_reads_as_no_string_are_sent_as_sigs_k8s_io_yaml_sends_them(scalar: str, sent: object) -> None:
    tag = implicit_tag(scalar)
    assert tag not in (STR_TAG, NULL_TAG, BOOL_TAG), scalar  # the vectors are of the scalars the question is about
    expected = sent if isinstance(sent, str) else None
    assert sent_as_string(TypedScalar(tag, scalar)) == expected


GO_YAML_STRINGS = "  start: 12:30\n  released: 2024-01-15\n  stamp: 2001-12-14 21:59:43.10 -5\n  op: =\n  2024-01-15: noon\n"


@pytest.mark.parametrize("fast", [True, False])
def test_data_go_yaml_reads_as_strings_gets_the_hash_of_the_quoted_strings(fast: bool) -> None:
    """Times, dates and "=", as values and keys: kubectl sends them as strings, the API server stores them so."""
    bundle = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\nDATA---\n"
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n"
        "  template:\n    spec:\n      containers:\n      - name: c\n        envFrom:\n"
        "        - configMapRef:\n            name: app\n"
    )

    def hash_of(data: str) -> str:
        result = run([InputDocument("b.yaml", bundle.replace("DATA", data).encode())], Options(), fast=fast)
        assert not result.has_errors, result.findings
        text = "".join(result.files[0].chunks)
        return next(line for line in text.splitlines() if "config-hash" in line)

    quoted = "".join(f'  "{k}": "{v}"\n' for k, v in (line.strip().split(": ", 1) for line in GO_YAML_STRINGS.splitlines()))
    assert hash_of(GO_YAML_STRINGS) == hash_of(quoted) != hash_of(quoted.replace("12:30", "12:31"))


@pytest.mark.parametrize(
    ("data", "pattern"),
    [("  port: 8080\n", "not a string"), ("  <<: x\n", "merge key"), ("  k: !!int 2\n    more\n", "not a string")],
)
def test_what_kubectl_sends_as_no_string_is_still_refused(data: str, pattern: str) -> None:
    bundle = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n{data}"
    for fast in (True, False):
        try:
            result = run([InputDocument("b.yaml", bundle.encode())], Options(), fast=fast)
        except WavegenError as err:  # a document libyaml's path cannot build
            assert pattern in str(err)
        else:  # ConfigMap content the API server rejects: a finding
            assert result.has_errors and any(pattern in finding.message for finding in result.findings)
