"""The streaming list reader: the same items and metadata as json.loads, whatever the chunking, and clear errors."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wavegen.controller.liststream import ListStream, ListStreamError


def read(chunks: list[bytes]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    stream = ListStream(chunks)
    items = list(stream)
    return items, stream.fields


def split_every(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


LIST: dict[str, Any] = {
    "kind": "SecretList",
    "apiVersion": "v1",
    "metadata": {"resourceVersion": "42", "continue": 'tok"en\\'},
    "items": [
        {"metadata": {"name": "a", "annotations": {"x": '}]{["\\\u00e9\U0001f600'}}, "data": {"k": "dmFs"}},
        {"metadata": {"name": "b"}, "data": {}, "immutable": True, "n": -1.5e3, "none": None, "list": [[], {}, [1, [2]]]},
        {"metadata": {"name": "c"}, "stringData": {"s": "line\nnext\ttab \\u0041"}},
    ],
}


@pytest.mark.parametrize("indent", [None, 1])
def test_every_chunk_boundary(indent: int | None) -> None:
    data = json.dumps(LIST, indent=indent, ensure_ascii=False).encode()
    for cut in range(1, len(data)):
        items, fields = read([data[:cut], data[cut:]])
        assert items == LIST["items"], cut
        assert fields == {k: v for k, v in LIST.items() if k != "items"}, cut


def test_one_byte_chunks_and_empty_chunks() -> None:
    data = json.dumps(LIST).encode()
    chunks = [b""] + [b for c in split_every(data, 1) for b in (c, b"")]
    assert read(chunks)[0] == LIST["items"]


def test_metadata_after_items_and_empty_items() -> None:
    data = b'{"items": [], "metadata": {"resourceVersion": "7"}, "kind": "ConfigMapList"}'
    assert read([data]) == ([], {"metadata": {"resourceVersion": "7"}, "kind": "ConfigMapList"})
    assert read([b'{"items": null, "metadata": {}}']) == ([], {"items": None, "metadata": {}})


def test_items_are_yielded_before_the_answer_ends() -> None:
    """An item is handed over as soon as its bytes are in: a page is never held whole."""
    head = b'{"metadata": {"resourceVersion": "1"}, "items": [{"metadata": {"name": "a"}},'
    fed: list[bytes] = []

    def chunks() -> Any:
        for part in (head, b'{"metadata": {"name": "b"}}]}'):
            fed.append(part)
            yield part

    stream = iter(ListStream(chunks()))
    assert next(stream) == {"metadata": {"name": "a"}}
    assert len(fed) == 1
    assert list(stream) == [{"metadata": {"name": "b"}}]


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"[]",
        b'{"items": [1]}',
        b'{"items": [{"a": 1}',
        b'{"items": [{"a": "unterminated}]}',
        b'{"items": [{"a": 1} {"b": 2}]}',
        b'{"items": [{"a": nope}]}',
        b'{"metadata": {}} trailing',
        b'{"metadata" {}}',
        b"{1: 2}",
    ],
)
def test_malformed_answers_are_one_error(data: bytes) -> None:
    with pytest.raises(ListStreamError):
        read(split_every(data, 3) if data else [])


json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=20),
)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
list_answer = st.fixed_dictionaries(
    {
        "metadata": st.dictionaries(st.sampled_from(["resourceVersion", "continue"]), st.text(max_size=10)),
        "items": st.lists(st.dictionaries(st.text(max_size=8), json_value, max_size=5), max_size=6),
    },
    optional={"kind": st.text(max_size=10), "apiVersion": st.just("v1")},
)


@settings(max_examples=300, deadline=None)
@given(
    answer=list_answer,
    ascii_only=st.booleans(),
    indent=st.sampled_from([None, 0, 2]),
    cuts=st.lists(st.integers(1, 50), max_size=30),
)
def test_streaming_equals_json_loads(answer: dict[str, Any], ascii_only: bool, indent: int | None, cuts: list[int]) -> None:
    data = json.dumps(answer, ensure_ascii=ascii_only, indent=indent).encode()
    chunks, pos = [], 0
    for size in cuts:
        chunks.append(data[pos : pos + size])
        pos += size
    chunks.append(data[pos:])
    expected = json.loads(data)
    items, fields = read(chunks)
    assert items == expected.pop("items")
    assert fields == expected
