"""Base classes for small value types: field-wise ==, hash, repr (and order) without importing dataclasses or typing."""

from __future__ import annotations

from collections import namedtuple
from operator import attrgetter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ClassVar


def _slot_names(cls: type) -> list[str]:
    names: list[str] = []
    for klass in cls.__mro__:
        slots = klass.__dict__.get("__slots__", ())
        names.extend((slots,) if isinstance(slots, str) else slots)
    return names


class Record:
    """Compares, hashes and prints by its fields, as a dataclass would.

    A subclass writes an annotated ``__init__`` whose parameters (after
    ``self``) are its fields, in order, and lists the same names in
    ``__slots__``; type checkers see the constructor as written. Fields that
    never change are annotated ``Final``. ``hashable=False`` in the class
    statement makes instances unhashable, as a mutable dataclass's are.
    ``dataclasses`` is not used because importing it (it imports ``inspect``)
    and building each class with it cost more than a one-document
    ``wavegen transform`` spends on its work.
    """

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()
    # Returns the field values as a tuple (a single value when there is one field).
    _values: ClassVar[attrgetter[Any]]

    def __init_subclass__(cls, *, hashable: bool = True, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is not None:
            code = init.__code__
            cls._fields = code.co_varnames[1 : code.co_argcount + code.co_kwonlyargcount]
            if sorted(cls._fields) != sorted(_slot_names(cls)):
                raise TypeError(
                    f"{cls.__qualname__}: __slots__ {_slot_names(cls)} differ from __init__'s parameters {cls._fields}"
                )
            cls._values = attrgetter(*cls._fields)
        if not hashable:
            cls.__hash__ = None  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return bool(self._values(self) == self._values(other))

    def __hash__(self) -> int:
        return hash(self._values(self))

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{self.__class__.__qualname__}({fields})"


class OrderedRecord(Record):
    """A :class:`Record` that also orders by its fields, in order (like ``@dataclass(order=True)``)."""

    __slots__ = ()

    def __lt__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return bool(self._values(self) < self._values(other))

    def __le__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return bool(self._values(self) <= self._values(other))

    def __gt__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return bool(self._values(self) > self._values(other))

    def __ge__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return bool(self._values(self) >= self._values(other))


# What a class statement puts in its namespace besides the fields and methods it declares.
_CLASS_MACHINERY = frozenset(("__module__", "__qualname__", "__orig_bases__"))


class _NamedTupleMeta(type):
    def __new__(cls, name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> Any:
        fields = list(namespace.get("__annotations__", {}))
        defaults = [namespace[field] for field in fields if field in namespace]
        make: Any = namedtuple  # called with computed names and defaults, which type checkers refuse to follow
        built: Any = make(name, fields, defaults=defaults, module=namespace.get("__module__"))
        built.__qualname__ = namespace.get("__qualname__", name)
        for key, value in namespace.items():
            if key not in _CLASS_MACHINERY and key not in fields:
                setattr(built, key, value)
        return built


# The base a named tuple's class statement names: built by type itself, so that only the
# classes deriving from it go through _NamedTupleMeta.
_NamedTupleBase = type.__new__(_NamedTupleMeta, "_NamedTupleBase", (), {})


class _NamedTupleStandIn:
    """``class Point(NamedTuple): x: int`` at run time, built with collections.namedtuple.

    Modules on the ``wavegen transform`` path import ``typing.NamedTuple`` for type
    checkers only (``if TYPE_CHECKING``) and this at run time: importing typing costs
    a one-document run about 4 ms. Fields are the class's annotations, in order;
    defaults and methods carry over, as with typing's.
    """

    def __mro_entries__(self, bases: tuple[Any, ...]) -> tuple[type, ...]:
        return (_NamedTupleBase,)


NamedTuple: Any = _NamedTupleStandIn()
