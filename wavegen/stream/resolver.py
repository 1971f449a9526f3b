"""The tag PyYAML's safe loader gives a plain scalar (YAML 1.1 implicit types), without importing PyYAML."""

from __future__ import annotations

from . import patterns

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re

STR_TAG = "tag:yaml.org,2002:str"
NULL_TAG = "tag:yaml.org,2002:null"
BOOL_TAG = "tag:yaml.org,2002:bool"
INT_TAG = "tag:yaml.org,2002:int"
FLOAT_TAG = "tag:yaml.org,2002:float"
TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
MERGE_TAG = "tag:yaml.org,2002:merge"
VALUE_TAG = "tag:yaml.org,2002:value"
YAML_TAG = "tag:yaml.org,2002:yaml"
SEQ_TAG = "tag:yaml.org,2002:seq"
MAP_TAG = "tag:yaml.org,2002:map"

# The languages of the YAML 1.1 types (https://yaml.org/type/) as PyYAML reads them, which
# differs from the type pages in places: a float's exponent needs its sign, an octal is a
# leading "0" (no "0o"), sexagesimal numbers take no fraction part but after the last
# group, and a timestamp's date and time parts are fixed in width but for month, day and hour.
_DIGITS = "[0-9][0-9_]*"
_SIGN = "[-+]?"
_EXPONENT = "(?:[eE][-+][0-9]+)?"
_SEXAGESIMAL = "(?::[0-5]?[0-9])+"
_INT = "|".join(
    (
        f"{_SIGN}0b[01_]+",
        f"{_SIGN}0[0-7_]+",
        f"{_SIGN}(?:0|[1-9][0-9_]*)",
        f"{_SIGN}0x[0-9a-fA-F_]+",
        f"{_SIGN}[1-9][0-9_]*{_SEXAGESIMAL}",
    )
)
_FLOAT = "|".join(
    (
        rf"{_SIGN}{_DIGITS}\.[0-9_]*{_EXPONENT}",
        rf"\.[0-9][0-9_]*{_EXPONENT}",
        rf"{_SIGN}{_DIGITS}{_SEXAGESIMAL}\.[0-9_]*",
        rf"{_SIGN}\.(?:inf|Inf|INF)",
        r"\.(?:nan|NaN|NAN)",
    )
)
_DATE = "[0-9]{4}-[0-9]{2}-[0-9]{2}"
_DATE_TIME = (
    r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}"
    r"(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?"
    r"(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?"
)
# Types whose language is a few words: looked up, not matched.
_WORDS = {
    BOOL_TAG: frozenset(
        case for word in ("yes", "no", "true", "false", "on", "off") for case in (word, word.title(), word.upper())
    ),
    NULL_TAG: frozenset(("~", "null", "Null", "NULL", "")),
    MERGE_TAG: frozenset(("<<",)),
    VALUE_TAG: frozenset(("=",)),
    YAML_TAG: frozenset(("!", "&", "*")),
}
_LANGUAGES = {FLOAT_TAG: _FLOAT, INT_TAG: _INT, TIMESTAMP_TAG: f"{_DATE}|{_DATE_TIME}"}
# Every character a float, int or timestamp can hold (and a final line break, see _language).
_NUMERIC_CHARS = frozenset("0123456789+-._: \t\neEbxabcdfABCDFinINtTZ")
# The characters each type's scalars can start with ("" for the empty scalar): only these
# are tried, in PyYAML's order (bool, float, int, merge, null, timestamp, value, yaml).
_FIRST_CHARS = {
    BOOL_TAG: "yYnNtTfFoO",
    FLOAT_TAG: "-+0123456789.",
    INT_TAG: "-+0123456789",
    MERGE_TAG: "<",
    NULL_TAG: "~nN",
    TIMESTAMP_TAG: "0123456789",
    VALUE_TAG: "=",
    YAML_TAG: "!&*",
}


def _tags_by_first_char() -> dict[str, tuple[str, ...]]:
    table: dict[str, list[str]] = {"": [NULL_TAG]}
    for tag, firsts in _FIRST_CHARS.items():
        for first in firsts:
            table.setdefault(first, []).append(tag)
    return {first: tuple(tags) for first, tags in table.items()}


# Which types a plain scalar may be, by its first character; tried in order, the first match wins.
TAGS_BY_FIRST_CHAR = _tags_by_first_char()


def _language(tag: str) -> re.Pattern[str]:
    # Compiled when first needed (patterns keeps it): the three cost about a millisecond to build with re.
    # "$", not "\Z": PyYAML's patterns end so, and "$" also matches before a final line break.
    return patterns.compile(f"(?:{_LANGUAGES[tag]})$")


_INT_BODY_CHARS = frozenset("0123456789_:\n")


def _may_be(tag: str, value: str) -> bool:
    """What every scalar of a numeric type has (a cheap test, so that "-c", "0.39.1" or a hex
    digest compile none of the patterns): a float one ".", an int a digit after its sign and
    only digits, "_" and ":" unless it is "0b" or "0x", a timestamp "-" after four digits."""
    if tag == FLOAT_TAG:
        return value.count(".") == 1
    if tag == INT_TAG:
        unsigned = value[1:] if value[0] in "+-" else value
        return unsigned[:1].isdigit() and (unsigned[:2] in ("0b", "0x") or _INT_BODY_CHARS.issuperset(unsigned))
    return value[4:5] == "-"


def implicit_tag(value: str) -> str:
    """The tag of a plain scalar: the first type whose language holds it, else str."""
    tags = TAGS_BY_FIRST_CHAR.get(value[:1])
    if tags is None:
        return STR_TAG
    if value.isdigit() and value.isascii() and (value[0] != "0" or value == "0"):
        return INT_TAG  # the usual number ("1", "8080"), which no float or timestamp is
    for tag in tags:
        words = _WORDS.get(tag)
        if words is not None:
            if value in words or (value[-1:] == "\n" and value[:-1] in words):
                return tag
        elif _NUMERIC_CHARS.issuperset(value) and _may_be(tag, value) and _language(tag).match(value):
            return tag
    return STR_TAG
