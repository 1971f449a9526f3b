"""Hypothesis properties of the planner's shortcuts: the digest cache hashes by the definition; Secret data is strict base64."""

from __future__ import annotations

import hashlib
from types import MappingProxyType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.base64_reference import go_std_encoding
from wavegen.core.hashing import CanonicalCache, canonical_bytes, config_hash
from wavegen.core.model import ConfigSource, SourceKey, is_mapping
from wavegen.core.sources import SourceError, config_source

KEYS = ["a", "b", "c.conf", "D_1", "é"]
NAMES = ["one", "two"]
NAMESPACES = ["default", "other"]

key_sets = st.one_of(st.none(), st.frozensets(st.sampled_from([*KEYS, "absent"]), max_size=4))


@st.composite
def sources(draw: st.DrawFn) -> ConfigSource:
    kind = draw(st.sampled_from(["ConfigMap", "Secret"]))
    key = SourceKey(kind, draw(st.sampled_from(NAMESPACES)), draw(st.sampled_from(NAMES)))
    keys = draw(st.lists(st.sampled_from(KEYS), unique=True, max_size=len(KEYS)))
    if kind == "Secret":
        return ConfigSource(key, {}, {k: draw(st.binary(max_size=8)) for k in keys})
    text_keys = set(draw(st.lists(st.sampled_from(keys), unique=True))) if keys else set()
    text = {k: draw(st.text(max_size=8).filter(lambda s: not any("\ud800" <= c <= "\udfff" for c in s))) for k in text_keys}
    binary = {k: draw(st.binary(max_size=8)) for k in keys if k not in text_keys}
    return ConfigSource(key, text, binary)


def _reference_canonical(visible: list[tuple[ConfigSource, frozenset[str] | None]]) -> bytes:
    """The canonical form written out from its definition (README), independent of wavegen's hashing module."""
    out = b"wavegen.io/config-hash v1\n"
    for source, keys in sorted(visible, key=lambda pair: (pair[0].key.kind, pair[0].key.namespace, pair[0].key.name)):
        stored = {k: v.encode() for k, v in source.text_data.items()} | dict(source.binary_data)
        out += f"{source.key.kind} {source.key.namespace}/{source.key.name}\n".encode()
        for k in sorted(stored):
            if keys is None or k in keys:
                out += f"{k} {hashlib.sha256(stored[k]).hexdigest()}\n".encode()
    return out


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.tuples(sources(), key_sets), max_size=4), min_size=1, max_size=6), st.sampled_from([None, b"k"]))
def test_cache_builds_the_defined_canonical_bytes_across_calls(
    calls: list[list[tuple[ConfigSource, frozenset[str] | None]]], hmac_key: bytes | None
) -> None:
    # One cache across all calls, as in a plan: a later call may see the same key through
    # other keys, or a different ConfigSource object under the same SourceKey.
    cache = CanonicalCache()
    for drawn in calls:
        visible = list({source.key: (source, keys) for source, keys in drawn}.values())  # a plan sees each source once
        expected = _reference_canonical(visible)
        assert canonical_bytes(visible) == expected
        assert cache.canonical(visible) == expected
        assert cache.config_hash(visible, hmac_key) == config_hash(visible, hmac_key)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="AQab+/=\n\r -_é\t", max_size=12))
def test_secret_data_decodes_exactly_as_the_api_server_decodes_it(text: str) -> None:
    """Line breaks skipped, then what Go's StdEncoding takes (tests/support/base64_reference.py)."""
    expected = go_std_encoding(text.replace("\n", "").replace("\r", ""))
    if expected is None:
        with pytest.raises(SourceError, match="is not valid base64"):
            config_source("Secret", "ns", "s", {"data": {"k": text}})
    else:
        assert dict(config_source("Secret", "ns", "s", {"data": {"k": text}}).binary_data) == {"k": expected}


def test_is_mapping_agrees_with_the_mapping_abc() -> None:
    class Custom(dict[str, int]):
        pass

    for value in ({}, {"a": 1}, Custom(), MappingProxyType({"a": 1})):
        assert is_mapping(value)
    for value in (None, [], (), "text", b"x", 0, {1, 2}):
        assert not is_mapping(value)


def test_source_keys_order_and_print_as_before() -> None:
    keys = [SourceKey("Secret", "a", "x"), SourceKey("ConfigMap", "b", "y"), SourceKey("ConfigMap", "a", "z")]
    assert sorted(keys) == [SourceKey("ConfigMap", "a", "z"), SourceKey("ConfigMap", "b", "y"), SourceKey("Secret", "a", "x")]
    assert str(keys[0]) == "Secret/a/x"
    assert repr(keys[0]) == "SourceKey(kind='Secret', namespace='a', name='x')"
    assert hash(keys[0]) == hash(("Secret", "a", "x"))
