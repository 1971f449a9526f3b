"""The strings kubectl, helm and Argo CD send for ConfigMap and Secret data YAML 1.1 reads as no string.

They turn YAML into JSON with sigs.k8s.io/yaml, whose go-yaml types plain scalars by rules of
its own; the API server stores what it sends. Held to sigs.k8s.io/yaml by recorded vectors
(tests/vectors/go_yaml_scalars) and to a real API server end to end (tests/e2e/test_stored_hash.py).
"""

from __future__ import annotations

from .model import TypedScalar

# YAML 1.1's tags of scalars that are no strings, as the stream's resolver gives them (the
# core reads no YAML).
_INT_TAG = "tag:yaml.org,2002:int"
_FLOAT_TAG = "tag:yaml.org,2002:float"
# Scalars YAML 1.1 reads as a timestamp, "=" or "<<", which go-yaml reads as strings, as written.
_GO_STRING_TAGS = frozenset(("tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:value", "tag:yaml.org,2002:merge"))


def sent_as_string(scalar: TypedScalar) -> str | None:
    """The string kubectl, helm and Argo CD send for a scalar YAML 1.1 reads as no string, or None
    when they send no string either (then the API server refuses it in a ConfigMap's data).

    They turn YAML into JSON with sigs.k8s.io/yaml, whose go-yaml v2 reads as strings what it has no
    number for: a timestamp (``2024-01-15``, kept as written), ``=`` and ``<<`` as values,
    base-60 numbers (``12:30``: go-yaml has none), a number past its range (``0x`` and 17 hex
    digits, ``1e+400``), and a float starting with ``.`` whose ``_`` does not stand between two
    digits (``.5_``: Go's float parser refuses it). Held to sigs.k8s.io/yaml by recorded vectors
    and to a real API server end to end."""
    tag, text = scalar.tag, scalar.text
    if tag in _GO_STRING_TAGS:
        return text
    if tag != _INT_TAG and tag != _FLOAT_TAG:
        return None
    if ":" in text:
        return text
    if text[:1] == "." and not all(
        text[at - 1].isdigit() and text[at + 1 : at + 2].isdigit() for at, char in enumerate(text) if char == "_"
    ):
        return text  # go-yaml parses ".5_5" as Go does, where a "_" stands between two digits
    plain = text.replace("_", "")
    unsigned = plain.lstrip("+-")
    try:
        if unsigned[:2] in ("0x", "0b"):
            digits = unsigned[2:]
            if not digits:
                return text  # "0x_": no number to go-yaml
            magnitude = int(digits, 16 if unsigned[1] == "x" else 2)
            # Unsigned, it must fit a uint64; signed, an int64.
            fits = magnitude < (1 << 64) if plain[0] == "0" else magnitude <= (1 << 63) - (plain[0] == "+")
            return None if fits else text
        lowered = plain.lower()
        if "inf" in lowered or "nan" in lowered:
            return None  # ".inf", ".nan": go-yaml's floats too
        # Past float64's range go-yaml's number parsers fail, and it keeps the text.
        return text if abs(float(plain)) == float("inf") else None
    except ValueError:
        return None  # an explicit !!int or !!float on text that is no number: go-yaml refuses it too


def stored_key(key: object) -> str | None:
    """The key the API server stores for a data key YAML 1.1 reads as no string: a decimal integer
    (ingress-nginx's tcp-services ConfigMap: ``5432: ns/svc:5432``) as its digits, which
    sigs.k8s.io/yaml writes for it, and a key go-yaml reads as a string as written (see
    sent_as_string; a ``<<`` key merges, never reaching here). None for any other key that is
    not a string: hex, octal and ``_`` spellings (sigs.k8s.io/yaml writes their decimal value),
    floats, booleans and nulls."""
    if not isinstance(key, TypedScalar):
        return None
    sent = sent_as_string(key)
    if sent is not None or key.tag != _INT_TAG:
        return sent
    text = key.text
    digits = text[1:] if text[:1] == "-" else text
    if digits.isascii() and digits.isdigit() and (digits == "0" or digits[0] != "0") and len(digits) <= 18:
        return text
    return None
