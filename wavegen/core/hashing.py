"""The one hash function: canonical bytes of the visible config data, then SHA-256 (or HMAC-SHA-256)."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable

from .model import ConfigSource

CANONICAL_HEADER = b"wavegen.io/config-hash v1\n"


def canonical_bytes(visible: Iterable[tuple[ConfigSource, frozenset[str] | None]]) -> bytes:
    """Canonical form of what a workload can see.

    One header line, then for each source sorted by (kind, namespace, name) a
    line ``<Kind> <namespace>/<name>`` followed by one line per visible key,
    sorted by key: ``<key> <hex SHA-256 of the stored value bytes>``. Lines
    end with LF. Values are hashed individually so that the canonical form is
    printable and free of escaping rules.
    """
    out = [CANONICAL_HEADER]
    for source, keys in sorted(visible, key=lambda pair: pair[0].key):
        key = source.key
        out.append(f"{key.kind} {key.namespace}/{key.name}\n".encode())
        items = source.visible_items(keys)
        for data_key in sorted(items):
            out.append(f"{data_key} {hashlib.sha256(items[data_key]).hexdigest()}\n".encode())
    return b"".join(out)


def digest(canonical: bytes, hmac_key: bytes | None = None) -> str:
    """Hex SHA-256 of the canonical bytes, or HMAC-SHA-256 when a key is given."""
    if hmac_key is not None:
        return hmac.new(hmac_key, canonical, hashlib.sha256).hexdigest()
    return hashlib.sha256(canonical).hexdigest()


def config_hash(visible: Iterable[tuple[ConfigSource, frozenset[str] | None]], hmac_key: bytes | None = None) -> str:
    """The ``wavegen`` profile hash of the given sources seen through the given keys."""
    return digest(canonical_bytes(visible), hmac_key)
