"""The tag PyYAML's safe loader gives a plain scalar (YAML 1.1 implicit types), without importing PyYAML."""

from __future__ import annotations

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
_WORDS = {
    BOOL_TAG: tuple(case for word in ("yes", "no", "true", "false", "on", "off") for case in (word, word.title(), word.upper())),
    NULL_TAG: ("~", "null", "Null", "NULL", ""),
    MERGE_TAG: ("<<",),
    VALUE_TAG: ("=",),
    YAML_TAG: ("!", "&", "*"),
}  # fmt: skip
_LANGUAGES = {
    FLOAT_TAG: _FLOAT,
    INT_TAG: _INT,
    TIMESTAMP_TAG: f"{_DATE}|{_DATE_TIME}",
    **{tag: "|".join(re.escape(word) for word in words) for tag, words in _WORDS.items()},
}
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


def _by_first_char() -> dict[str, tuple[tuple[str, re.Pattern[str]], ...]]:
    # "$", not "\Z": PyYAML's patterns end so, and "$" also matches before a final line break.
    patterns = {tag: re.compile(f"(?:{language})$") for tag, language in _LANGUAGES.items()}
    table: dict[str, list[tuple[str, re.Pattern[str]]]] = {"": [(NULL_TAG, patterns[NULL_TAG])]}
    for tag, firsts in _FIRST_CHARS.items():
        for first in firsts:
            table.setdefault(first, []).append((tag, patterns[tag]))
    return {first: tuple(pairs) for first, pairs in table.items()}


# Which types a plain scalar may be, by its first character; tried in order, the first match wins.
BY_FIRST_CHAR = _by_first_char()


def implicit_tag(value: str) -> str:
    """The tag of a plain scalar: the first type whose language holds it, else str."""
    for tag, pattern in BY_FIRST_CHAR.get(value[:1], ()):
        if pattern.match(value):
            return tag
    return STR_TAG
