"""The one hash function: canonical bytes of the visible config data, then SHA-256 (or HMAC-SHA-256)."""

from __future__ import annotations

import sys
from _collections_abc import Iterable, Mapping

from .model import ConfigSource, SourceKey
from .record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Final

CANONICAL_HEADER = b"wavegen.io/config-hash v1\n"


# hashlib's SHA-256 is OpenSSL's: loading it costs a small run about 6 ms and 3.7 MB of
# peak memory, more than its work. CPython's own SHA-256 (the module hashlib falls back
# to) gives the same digests at a seventh of the speed, so it hashes the first MiB of a
# process, and OpenSSL's the rest.
_BUILTIN_SHA256_BYTES = 1 << 20
_hashed = [0]  # bytes hashed so far in this process
# CPython's own constructor once looked up, or None without one: a failed import is not cached
# by Python, and looking again searched sys.path each time.
_builtin: list[Callable[[bytes], Any] | None] = []


def _builtin_sha256() -> Callable[[bytes], Any] | None:
    """CPython's own SHA-256 constructor (None when built without it)."""
    if not _builtin:
        _builtin.append(_find_builtin_sha256())
    return _builtin[0]


def _find_builtin_sha256() -> Callable[[bytes], Any] | None:
    # Python 3.12 and later, Python 3.11: the right one first (a failed import searches sys.path)
    for name in ("_sha2", "_sha256") if sys.version_info >= (3, 12) else ("_sha256", "_sha2"):
        try:
            constructor: Callable[[bytes], Any] = __import__(name).sha256
        except (ImportError, AttributeError):
            continue
        return constructor
    return None  # pragma: no cover - built without CPython's own hashes


def _sha256_constructor(size: int) -> Callable[[bytes], Any]:
    _hashed[0] += size
    if _hashed[0] <= _BUILTIN_SHA256_BYTES:
        builtin = _builtin_sha256()
        if builtin is not None:
            return builtin
    import hashlib

    return hashlib.sha256


def sha256_hex(data: bytes) -> str:
    """Hex SHA-256 of data (the one place wavegen computes one)."""
    return str(_sha256_constructor(len(data))(data).hexdigest())


def value_digest(value: bytes) -> str:
    """Hex SHA-256 of one stored value: the only thing the canonical form keeps of it."""
    return sha256_hex(value)


class KeyDigests(Record):
    """A ConfigMap/Secret reduced to what the hash needs: key -> hex SHA-256 of its stored value, never a value.

    Watch mode keeps these instead of the data: equal digests give the same
    canonical bytes, hence the same hash as ``wavegen transform`` computes.
    """

    __slots__ = ("digests", "ignored", "key")
    key: Final[SourceKey]
    digests: Final[Mapping[str, str]]
    ignored: Final[bool]

    def __init__(self, key: SourceKey, digests: Mapping[str, str], ignored: bool = False) -> None:
        self.key = key
        self.digests = digests
        self.ignored = ignored

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


def _source_line(key: SourceKey) -> bytes:
    return f"{key.kind} {key.namespace}/{key.name}\n".encode()


def _key_line(data_key: str, hex_digest: str) -> bytes:
    return f"{data_key} {hex_digest}\n".encode()


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
        out.append(_source_line(key))
        for data_key in sorted(digests):
            out.append(_key_line(data_key, digests[data_key]))
    return b"".join(out)


def _source_of(part: tuple[SourceKey, frozenset[str] | None, _Lines]) -> SourceKey:
    return part[0]


# Per source: the ConfigSource, its header line, and the line of each key digested so far.
_Lines = tuple[ConfigSource, bytes, dict[str, bytes]]


def _sorted_keys(source: ConfigSource) -> list[str]:
    text, binary = source.text_data, source.binary_data
    if not binary or not text:
        return sorted(binary or text)
    return sorted(source.key_names())


class CanonicalCache:
    """Builds the same canonical bytes as :func:`canonical_bytes`, digesting each stored value once.

    A plan hashes many workloads that may share sources; this keeps, per
    source, its stored values and the canonical line of every key digested so
    far. Entries are found by the source's key and rebuilt if a different
    ``ConfigSource`` object with that key comes along.
    """

    __slots__ = ("_entries",)

    def __init__(self) -> None:
        self._entries: dict[SourceKey, _Lines] = {}

    def canonical(self, visible: Iterable[tuple[ConfigSource, frozenset[str] | None]]) -> bytes:
        entries = self._entries
        parts: list[tuple[SourceKey, frozenset[str] | None, _Lines]] = []
        for source, keys in visible:
            key = source.key
            entry = entries.get(key)
            if entry is None or entry[0] is not source:
                entry = entries[key] = (source, _source_line(key), {})
            parts.append((key, keys, entry))
        if len(parts) > 1:
            parts.sort(key=_source_of)
        out = [CANONICAL_HEADER]
        for _, keys, (source, header, lines) in parts:
            out.append(header)
            for data_key in _sorted_keys(source) if keys is None else sorted(keys):
                line = lines.get(data_key)
                if line is None:
                    value = source.stored_value(data_key)
                    if value is None:
                        continue
                    line = lines[data_key] = _key_line(data_key, value_digest(value))
                out.append(line)
        return b"".join(out)

    def config_hash(self, visible: Iterable[tuple[ConfigSource, frozenset[str] | None]], hmac_key: bytes | None = None) -> str:
        """The same hash as :func:`config_hash`."""
        return digest(self.canonical(visible), hmac_key)


def canonical_bytes(visible: Iterable[tuple[ConfigSource, frozenset[str] | None]]) -> bytes:
    """Canonical form of the given sources seen through the given keys (see :func:`canonical_from_digests`)."""
    return canonical_from_digests(
        (source.key, {k: value_digest(v) for k, v in source.visible_items(keys).items()}) for source, keys in visible
    )


def digest(canonical: bytes, hmac_key: bytes | None = None) -> str:
    """Hex SHA-256 of the canonical bytes, or HMAC-SHA-256 when a key is given."""
    if hmac_key is not None:
        import hashlib
        import hmac

        return hmac.new(hmac_key, canonical, hashlib.sha256).hexdigest()
    return sha256_hex(canonical)


def config_hash(visible: Iterable[tuple[ConfigSource, frozenset[str] | None]], hmac_key: bytes | None = None) -> str:
    """The ``wavegen`` profile hash of the given sources seen through the given keys."""
    return digest(canonical_bytes(visible), hmac_key)


def config_hash_from_digests(visible: Iterable[tuple[KeyDigests, frozenset[str] | None]], hmac_key: bytes | None = None) -> str:
    """The same hash as :func:`config_hash`, from per-key digests (watch mode holds no values)."""
    return digest(canonical_from_digests((source.key, source.visible(keys)) for source, keys in visible), hmac_key)
