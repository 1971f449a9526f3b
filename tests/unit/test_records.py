"""Every Record subclass in the package has its __init__'s parameters as its __slots__ (class statements do not check)."""

from __future__ import annotations

import importlib
import pkgutil

import wavegen
from wavegen.core.record import OrderedRecord, Record


def _slot_names(cls: type) -> list[str]:
    names: list[str] = []
    for klass in cls.__mro__:
        slots = klass.__dict__.get("__slots__", ())
        names.extend((slots,) if isinstance(slots, str) else slots)
    return names


def _mismatched(cls: type[Record]) -> bool:
    """Whether a class that writes its own __init__ has slots other than its fields."""
    return "__init__" in cls.__dict__ and sorted(cls._fields) != sorted(_slot_names(cls))


def _subclasses(cls: type) -> set[type]:
    found = set(cls.__subclasses__())
    for sub in list(found):
        found |= _subclasses(sub)
    return found


def test_every_record_in_the_package_has_its_fields_as_slots() -> None:
    for module in pkgutil.walk_packages(wavegen.__path__, "wavegen."):
        if module.name != "wavegen.__main__":  # (runs the command)
            importlib.import_module(module.name)
    records = {cls for cls in _subclasses(Record) if cls.__module__.startswith("wavegen.")} - {OrderedRecord}
    assert len(records) >= 20  # the walk found the package's records (20 when this was written)
    assert [cls.__qualname__ for cls in records if _mismatched(cls)] == []


def test_a_slot_missing_or_extra_is_found() -> None:
    class Missing(Record):
        __slots__ = ("a",)

        def __init__(self, a: int, b: int) -> None:
            self.a = a

    class Extra(OrderedRecord):
        __slots__ = ("a", "b")

        def __init__(self, a: int) -> None:
            self.a = a

    class Inherited(Record):
        __slots__ = ("b",)

        def __init__(self, a: int, b: int) -> None:
            self.b = b

    class Child(Inherited):
        __slots__ = ("a",)

        def __init__(self, a: int, b: int) -> None:
            super().__init__(a, b)

    assert _mismatched(Missing) and _mismatched(Extra) and _mismatched(Inherited) and not _mismatched(Child)
