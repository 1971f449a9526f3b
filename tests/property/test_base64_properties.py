"""Secret data decodes as the API server decodes it, the same in Python below the bound and by binascii above, on every Python."""

from __future__ import annotations

import base64

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.support.base64_reference import go_std_encoding
from wavegen.core import sources

_DIGITS = st.sampled_from("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
_OTHERS = st.sampled_from(["=", "==", " ", "-", "_", "\t", "é", "\0", "\x7f", "A=", "=A"])


@st.composite
def _texts(draw: st.DrawFn) -> str:
    """Encodings of random bytes, some with a character inserted, dropped or changed, and random text."""
    kind = draw(st.sampled_from(["encoded", "edited", "any"]))
    if kind == "any":
        return "".join(draw(st.lists(st.one_of(_DIGITS, _OTHERS), max_size=24)))
    text = base64.b64encode(draw(st.binary(max_size=48))).decode("ascii")
    if kind == "edited" and text:
        at = draw(st.integers(0, len(text)))
        edit = draw(st.sampled_from(["insert", "drop", "change"]))
        piece = draw(st.one_of(_DIGITS, _OTHERS))
        if edit == "insert":
            text = text[:at] + piece + text[at:]
        elif edit == "drop":
            text = text[:at] + text[at + 1 :]
        else:
            text = text[:at] + piece + text[at + 1 :]
    return text


@settings(max_examples=3000)
@given(_texts(), st.booleans())
@example("", False)
@example("=", False)
@example("QQ", False)
@example("QR==", False)  # bits past the last byte: ignored, as Go's StdEncoding ignores them
@example("QUI=", False)
@example("AAAA=", False)  # "=" after a whole group: Go refuses it (binascii took it before 3.13)
@example("AAAA=", True)
@example("UaDw====", False)
@example("QUI=QUI=", False)
@example("QQ=", False)
@example("Q===", False)
@example("AAAA" * 3 + "A", True)
def test_secret_data_decodes_as_the_api_server_decodes_it(text: str, past_the_bound: bool) -> None:
    spent = sources._PYTHON_BASE64_CHARS if past_the_bound else 0
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sources, "_python_decoded", [spent])
        assert sources._decode_base64(text) == go_std_encoding(text)


def test_a_run_decodes_in_python_up_to_the_bound_then_with_binascii(monkeypatch: pytest.MonkeyPatch) -> None:
    value = bytes(range(256)) * 200  # past the bound (64 KiB of digits) at once
    monkeypatch.setattr(sources, "_python_decoded", [0])
    assert sources._decode_base64("QUJD") == b"ABC" and sources._python_decoded == [4]
    assert sources._decode_base64(base64.b64encode(value).decode("ascii")) == value and sources._python_decoded == [4]
