"""A ConfigMap's data whose long values a reader makes only when they are read (imported only then)."""

# Imported after the transform path (which is compiled without it), this module has no
# `from __future__ import annotations`: the first module to have one imports __future__ (about 0.4 ms).
from _collections_abc import Mapping

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator


class TextData(Mapping[str, str]):
    """A ConfigMap's ``data`` as a reader found it, its long values made only when first read.

    Every key is a string and every value a string or a function of no arguments that makes
    it, replaced by what it makes the first time that key is read. Only the ConfigMaps a pod
    template references are hashed: a dashboard nothing mounts (Grafana's sidecar finds those
    by label) never has its hundreds of KB of text built. As a mapping, and in its repr, it is
    exactly the data it stands for.
    """

    __slots__ = ("_values",)

    def __init__(self, values: "dict[str, str | Callable[[], str]]") -> None:
        self._values = values

    def __getitem__(self, key: str) -> str:
        value = self._values[key]
        if isinstance(value, str):
            return value
        text = self._values[key] = value()
        return text

    def __contains__(self, key: object) -> bool:
        return key in self._values

    def __iter__(self) -> "Iterator[str]":
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return repr(dict(self))  # (so a ConfigSource's repr is the same either way)
