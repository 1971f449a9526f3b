"""The one hash function: canonical bytes of the visible config data, then SHA-256 (or HMAC-SHA-256)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .model import ConfigSource, SourceKey

CANONICAL_HEADER = b"wavegen.io/config-hash v1\n"


def value_digest(value: bytes) -> str:
    """Hex SHA-256 of one stored value: the only thing the canonical form keeps of it."""
    import hashlib  # here, not at module level: a run that hashes nothing skips loading OpenSSL

    return hashlib.sha256(value).hexdigest()


@dataclass(frozen=True, slots=True)
class KeyDigests:
    """A ConfigMap/Secret reduced to what the hash needs: key -> hex SHA-256 of its stored value, never a value.

    Watch mode keeps these instead of the data: equal digests give the same
    canonical bytes, hence the same hash as ``wavegen transform`` computes.
    """

    key: SourceKey
    digests: Mapping[str, str]
    ignored: bool = False

    def visible(self, keys: frozenset[str] | None) -> dict[str, str]:
        """The key -> digest a reference sees (all keys when ``keys`` is None)."""
        if keys is None:
            return dict(self.digests)
        return {k: v for k, v in self.digests.items() if k in keys}


def key_digests(source: ConfigSource) -> KeyDigests:
    """Digest every stored value of a source; the caller drops the source (and its values) afterwards."""
    return KeyDigests(
        source.key,
        {k: value_digest(v) for k, v in source.visible_items(None).items()},
        source.ignored,
    )


def canonical_from_digests(visible: Iterable[tuple[SourceKey, Mapping[str, str]]]) -> bytes:
    """Canonical form of what a workload can see, from per-key digests.

    One header line, then for each source sorted by (kind, namespace, name) a
    line ``<Kind> <namespace>/<name>`` followed by one line per visible key,
    sorted by key: ``<key> <hex SHA-256 of the stored value bytes>``. Lines
    end with LF. Values are hashed individually so that the canonical form is
    printable and free of escaping rules (and so that it can be computed from
    the digests alone).
    """
    out = [CANONICAL_HEADER]
    for key, digests in sorted(visible, key=lambda pair: pair[0]):
        out.append(f"{key.kind} {key.namespace}/{key.name}\n".encode())
        for data_key in sorted(digests):
            out.append(f"{data_key} {digests[data_key]}\n".encode())
    return b"".join(out)


def canonical_bytes(visible: Iterable[tuple[ConfigSource, frozenset[str] | None]]) -> bytes:
    """Canonical form of the given sources seen through the given keys (see :func:`canonical_from_digests`)."""
    return canonical_from_digests(
        (source.key, {k: value_digest(v) for k, v in source.visible_items(keys).items()}) for source, keys in visible
    )


def digest(canonical: bytes, hmac_key: bytes | None = None) -> str:
    """Hex SHA-256 of the canonical bytes, or HMAC-SHA-256 when a key is given."""
    import hashlib

    if hmac_key is not None:
        import hmac

        return hmac.new(hmac_key, canonical, hashlib.sha256).hexdigest()
    return hashlib.sha256(canonical).hexdigest()


def config_hash(visible: Iterable[tuple[ConfigSource, frozenset[str] | None]], hmac_key: bytes | None = None) -> str:
    """The ``wavegen`` profile hash of the given sources seen through the given keys."""
    return digest(canonical_bytes(visible), hmac_key)


def config_hash_from_digests(visible: Iterable[tuple[KeyDigests, frozenset[str] | None]], hmac_key: bytes | None = None) -> str:
    """The same hash as :func:`config_hash`, from per-key digests (watch mode holds no values)."""
    return digest(canonical_from_digests((source.key, source.visible(keys)) for source, keys in visible), hmac_key)
