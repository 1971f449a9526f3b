"""The tests' reference for base64: what the API server takes (Go's StdEncoding), by binascii's strict mode and one rule."""

from __future__ import annotations

import binascii


def go_std_encoding(text: str) -> bytes | None:
    """``text`` decoded as Go's ``base64.StdEncoding`` decodes it, or None where Go refuses it.

    binascii's strict mode, which before Python 3.13 also took "=" after a whole group of four
    digits ("QUJD="); Go takes "=" only to complete a last group of two or three digits.
    """
    digits = text.rstrip("=")
    padding = len(text) - len(digits)
    if padding and (len(digits) % 4 in (0, 1) or len(digits) % 4 + padding != 4):
        return None
    try:
        return binascii.a2b_base64(text.encode("ascii"), strict_mode=True)
    except (binascii.Error, ValueError):
        return None
