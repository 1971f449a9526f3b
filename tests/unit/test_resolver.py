"""The subset reader's own resolver table gives every plain scalar the tag PyYAML's safe loader gives it."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from yaml.nodes import ScalarNode

from wavegen.stream import resolver

# Characters that take part in some type's language, and a few that take part in none.
_ALPHABET = "0123456789+-._:eExXbBoO aAfFiInNlLsSuUtTyYZ~<=!&*\t\n"

VECTORS = [
    "", "~", "null", "Null", "NULL", "nULL", "none", "yes", "Yes", "YES", "yEs", "y", "n", "Y", "on", "ON",
    "oN", "off", "true", "True", "TRUE", "tRUE", "false", "no", "NO", "0", "-0", "+0", "00", "007", "08",
    "0b101", "0b2", "-0b1_0", "0x1F", "0xfg", "0X1F", "0o17", "1_000", "1__", "_1", "190:20:30", "1:60",
    "1:5", "0:30", "-1:30", "1.0", "1.", ".5", "._5", "1e5", "1.0e5", "1.0e+5", "1.0E-5", "-.inf", "+.Inf",
    ".INF", ".nan", "-.nan", ".NaN", "190:20:30.15", "1:20.", "2001-12-14", "2001-12-14t21:59:43.10-05:00",
    "2001-12-14 21:59:43.10 -5", "2001-12-15T02:59:43.1Z", "2001-12-15 2:59:43.10", "2002-1-1", "2002-01-1",
    "2001-12-14 21:59:43.10 Z", "2001-12-14\t21:59:43", "2001-12-14T21:59:43+05:30", "20011-12-14",
    "<<", "<", "=", "==", "!", "&", "*", "**", "1\n", "yes\n", "500m", "128Mi", "10.0.0.1", "1.2.3",
    "v1", "8080", "0.5", "3.11", "1e", "e5", "+", "-", ".", "..", "1_0.0_1", "0x_", "0b_",
    # what container args, file modes, versions and digests hold (resolver._may_be turns most away)
    "-c", "--", "-ec", "-n", "0400", "0644", "0.39.1", "-0x1f", "+0b1", "0x", "-0b", "0x1_f", "-1", "+12", "1:2.5",
    "68c00ea91b7ba5c04efc55555ef2307f52aaf738b04e9665e91bb756c8f32b22", "2bbec78", "1e3", "-.5", "+.5", "2001-12-14\n",
]  # fmt: skip


def pyyaml_tag(value: str) -> str:
    """The tag PyYAML's safe loader resolves a plain scalar to."""
    return str(yaml.SafeLoader("").resolve(ScalarNode, value, (True, False)))  # type: ignore[no-untyped-call]


@pytest.mark.parametrize("value", VECTORS)
def test_vectors(value: str) -> None:
    assert resolver.implicit_tag(value) == pyyaml_tag(value)


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=_ALPHABET, max_size=30))
def test_any_string_of_the_alphabet(value: str) -> None:
    assert resolver.implicit_tag(value) == pyyaml_tag(value)


@settings(max_examples=1000, deadline=None)
@given(
    st.from_regex(
        r"\A[-+]?[0-9_.:eExXbo]{1,12}\Z"
        r"|\A[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt ]+[0-9]{1,2}:[0-9]{2}:[0-9]{2}(\.[0-9]*)?( *(Z|[-+][0-9]{1,2}(:[0-9]{2})?))?)?\Z"
    )
)
def test_number_and_date_shapes(value: str) -> None:
    assert resolver.implicit_tag(value) == pyyaml_tag(value)


def test_the_first_characters_are_pyyamls() -> None:
    # Same keys, and for each the same tags in the same order (first match wins).
    ours = {first: list(tags) for first, tags in resolver.TAGS_BY_FIRST_CHAR.items()}
    theirs = {first: [tag for tag, _ in pairs] for first, pairs in yaml.SafeLoader.yaml_implicit_resolvers.items()}
    assert ours == theirs
