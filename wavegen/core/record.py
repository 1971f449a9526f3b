"""Base classes for small value types: field-wise ==, hash, repr (and order) without importing dataclasses or typing."""

from __future__ import annotations

# The C getters operator.py re-exports: operator.py itself first defines its ~60 functions in Python,
# which cost a small run about 0.2 ms to import.
from _operator import attrgetter, itemgetter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ClassVar


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
            # (tests/unit/test_records.py checks every subclass's slots against these: checked here, at
            # each class statement, it cost every run about 40 us)
            cls._fields = code.co_varnames[1 : code.co_argcount + code.co_kwonlyargcount]
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


def _tuple_repr(self: tuple[Any, ...]) -> str:
    fields = ", ".join(f"{name}={value!r}" for name, value in zip(self._fields, self, strict=True))  # type: ignore[attr-defined]
    return f"{self.__class__.__name__}({fields})"


def _tuple_replace(self: tuple[Any, ...], **changes: Any) -> Any:
    values = [changes.pop(name, value) for name, value in zip(self._fields, self, strict=True)]  # type: ignore[attr-defined]
    if changes:
        raise ValueError(f"Got unexpected field names: {list(changes)!r}")
    return tuple.__new__(self.__class__, values)


def _tuple_dict(self: tuple[Any, ...]) -> dict[str, Any]:
    return dict(zip(self._fields, self, strict=True))  # type: ignore[attr-defined]


def _tuple_new_args(self: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(self)


# __new__ for 0 to 8 fields, whose parameters _new_taking renames: namedtuple compiles each from its
# source instead, which cost a run about 50 us a class.
def _new_0(_cls: Any) -> Any:
    return _tuple_new(_cls, ())


def _new_1(_cls: Any, a: Any) -> Any:
    return _tuple_new(_cls, (a,))


def _new_2(_cls: Any, a: Any, b: Any) -> Any:
    return _tuple_new(_cls, (a, b))


def _new_3(_cls: Any, a: Any, b: Any, c: Any) -> Any:
    return _tuple_new(_cls, (a, b, c))


def _new_4(_cls: Any, a: Any, b: Any, c: Any, d: Any) -> Any:
    return _tuple_new(_cls, (a, b, c, d))


def _new_5(_cls: Any, a: Any, b: Any, c: Any, d: Any, e: Any) -> Any:
    return _tuple_new(_cls, (a, b, c, d, e))


def _new_6(_cls: Any, a: Any, b: Any, c: Any, d: Any, e: Any, f: Any) -> Any:
    return _tuple_new(_cls, (a, b, c, d, e, f))


def _new_7(_cls: Any, a: Any, b: Any, c: Any, d: Any, e: Any, f: Any, g: Any) -> Any:
    return _tuple_new(_cls, (a, b, c, d, e, f, g))


def _new_8(_cls: Any, a: Any, b: Any, c: Any, d: Any, e: Any, f: Any, g: Any, h: Any) -> Any:
    return _tuple_new(_cls, (a, b, c, d, e, f, g, h))


_tuple_new = tuple.__new__
_NEW_BY_FIELD_COUNT = (_new_0, _new_1, _new_2, _new_3, _new_4, _new_5, _new_6, _new_7, _new_8)
_Function: Any = type(_new_0)  # types.FunctionType, without importing types


def _new_taking(fields: list[str], qualname: str) -> Any:
    """``__new__(_cls, *fields)`` building the tuple of its arguments, with the fields as parameter names."""
    if len(fields) < len(_NEW_BY_FIELD_COUNT):
        template = _NEW_BY_FIELD_COUNT[len(fields)]
        code = template.__code__.replace(co_varnames=("_cls", *fields), co_name="__new__", co_qualname=qualname)
        return _Function(code, template.__globals__, "__new__")
    parameters = ", ".join(fields)
    scope: dict[str, Any] = {"_tuple_new": tuple.__new__}
    exec(f"def __new__(_cls, {parameters}):\n    return _tuple_new(_cls, ({parameters},))\n", scope)
    new = scope["__new__"]
    new.__qualname__ = qualname
    return new


def _named_tuple(name: str, fields: list[str], defaults: list[Any], namespace: dict[str, Any]) -> type:
    """A tuple class with the fields as properties, what ``collections.namedtuple`` builds.

    Not collections.namedtuple itself: importing collections costs a run about 1 ms. ``__new__``
    takes the fields as its parameters, as namedtuple's does, so that building one takes keywords
    and defaults at the speed of a plain call.
    """
    parameters = ", ".join(fields)
    qualname = namespace.get("__qualname__", name)
    new = _new_taking(fields, f"{qualname}.__new__")
    new.__defaults__ = tuple(defaults) or None
    members: dict[str, Any] = {
        "__slots__": (),
        "__module__": namespace.get("__module__"),
        "__qualname__": qualname,
        "__doc__": f"{name}({parameters})",
        "__new__": new,
        "__repr__": _tuple_repr,
        "__getnewargs__": _tuple_new_args,
        "__match_args__": tuple(fields),
        "_fields": tuple(fields),
        "_field_defaults": dict(zip(fields[len(fields) - len(defaults) :], defaults, strict=True)),
        "_replace": _tuple_replace,
        "_asdict": _tuple_dict,
    }
    for index, field in enumerate(fields):
        members[field] = property(itemgetter(index), doc=f"Alias for field number {index}")
    for key, value in namespace.items():
        if key not in _CLASS_MACHINERY and key not in fields:
            members[key] = value
    return type(name, (tuple,), members)


class _NamedTupleMeta(type):
    def __new__(cls, name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> Any:
        fields = list(namespace.get("__annotations__", {}))
        defaults = [namespace[field] for field in fields if field in namespace]
        return _named_tuple(name, fields, defaults, namespace)


# The base a named tuple's class statement names: built by type itself, so that only the
# classes deriving from it go through _NamedTupleMeta.
_NamedTupleBase = type.__new__(_NamedTupleMeta, "_NamedTupleBase", (), {})


class _NamedTupleStandIn:
    """``class Point(NamedTuple): x: int`` at run time, built as collections.namedtuple builds it.

    Modules on the ``wavegen transform`` path import ``typing.NamedTuple`` for type
    checkers only (``if TYPE_CHECKING``) and this at run time: importing typing costs
    a one-document run about 4 ms. Fields are the class's annotations, in order;
    defaults and methods carry over, as with typing's.
    """

    def __mro_entries__(self, bases: tuple[Any, ...]) -> tuple[type, ...]:
        return (_NamedTupleBase,)


NamedTuple: Any = _NamedTupleStandIn()
