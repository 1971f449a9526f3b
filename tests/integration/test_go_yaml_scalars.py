"""ConfigMap data YAML 1.1 reads as no string, held to sigs.k8s.io/yaml itself (what kubectl, helm and Argo CD send).

tests/vectors/go_yaml_scalars is built with the go command from the module proxy's
sigs.k8s.io/yaml (Go's own caches, outside the repo): the recorded answers the unit tests
use must be its answers, and so must wavegen's for scalars drawn in every YAML 1.1 spelling
of numbers, times and dates.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from wavegen.core.model import TypedScalar
from wavegen.core.yamltojson import sent_as_string
from wavegen.stream.resolver import BOOL_TAG, NULL_TAG, STR_TAG, implicit_tag

VECTORS = Path(__file__).resolve().parents[1] / "vectors" / "go_yaml_scalars"


@pytest.fixture(scope="module")
def go_yaml(tmp_path_factory: pytest.TempPathFactory) -> Path:
    go = shutil.which("go")
    if go is None:
        if os.environ.get("CI"):
            pytest.fail("the go command is needed to build tests/vectors/go_yaml_scalars")
        pytest.skip("no go command")
    program = tmp_path_factory.mktemp("go-yaml") / "go_yaml_scalars"
    env = {**os.environ, "GOFLAGS": "-mod=mod -buildvcs=false", "GOTOOLCHAIN": "local", "GOWORK": "off", "CGO_ENABLED": "0"}
    subprocess.run([go, "build", "-o", str(program), "."], cwd=VECTORS, env=env, check=True, timeout=900)
    return program


def sent(program: Path, scalars: list[str]) -> list[str]:
    """sigs.k8s.io/yaml's JSON for ``v: <scalar>``, one line per scalar."""
    proc = subprocess.run(
        [str(program)], input="".join(json.dumps(s) + "\n" for s in scalars), capture_output=True, text=True, check=True
    )
    lines = proc.stdout.splitlines()
    assert len(lines) == len(scalars)
    return lines


def test_the_recorded_answers_are_sigs_k8s_io_yamls(go_yaml: Path) -> None:
    scalars = [json.loads(line) for line in (VECTORS / "scalars.txt").read_text().splitlines()]
    assert sent(go_yaml, scalars) == (VECTORS / "answers.jsonl").read_text().splitlines()


def drawn_scalars(rng: random.Random, count: int) -> list[str]:
    """Plain scalars in the spellings YAML 1.1 gives numbers, times and dates (and near them)."""
    digits = "0123456789"
    out: set[str] = set()
    while len(out) < count:
        how = rng.randrange(6)
        if how == 0:  # numbers with signs, prefixes, "_", dots and exponents
            text = "".join(rng.choice(".0123456789_eE+-xb") for _ in range(rng.randint(1, 10)))
        elif how == 1:  # base 60
            groups = (f":{rng.randint(0, 99):0{rng.randint(1, 2)}d}" for _ in range(rng.randint(1, 3)))
            text = str(rng.randint(1, 999)) + "".join(groups)
            text = rng.choice(["", "-", "+"]) + text + rng.choice(["", "", ".5", ".", "_"])
        elif how == 2:  # dates and timestamps
            month, day = (f"{rng.randint(1, top):0{rng.randint(1, 2)}d}" for top in (12, 31))
            text = f"{rng.randint(1000, 9999)}-{month}-{day}"
            if rng.random() < 0.6:
                sep = rng.choice(["T", "t", " ", "  "])
                text += f"{sep}{rng.randint(0, 23)}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"
                text += rng.choice(["", ".1", ".123456"]) + rng.choice(["", "Z", "-5", " -05:00", "+01:30"])
        elif how == 3:  # long numbers, past 64 bits or float64's range
            prefix = rng.choice(["", "-", "+", "0x", "-0x", "+0x", "0b", "-0b", "0"])
            alphabet = "01" if prefix.endswith("b") else "0123456789abcdefABCDEF" if prefix.endswith("x") else digits
            text = prefix + "".join(rng.choice(alphabet) for _ in range(rng.randint(15, 70)))
            if rng.random() < 0.2:
                text += rng.choice([".5", "e+400", ".0e+308", "e-400"])
        elif how == 4:
            text = rng.choice(["=", "<<", ".inf", "-.Inf", "+.INF", ".NaN", "0x_", "0b_", "._5", ".5_", ".5_5"])
        else:  # floats starting with "."
            text = "." + "".join(rng.choice("0123456789_") for _ in range(rng.randint(1, 6))) + rng.choice(["", "e+3", "e-9"])
        if implicit_tag(text) not in (STR_TAG, NULL_TAG, BOOL_TAG):
            out.add(text)
    return sorted(out)


def test_drawn_scalars_are_sent_as_sigs_k8s_io_yaml_sends_them(go_yaml: Path) -> None:
    scalars = drawn_scalars(random.Random(22), 4000)
    mismatches = []
    for scalar, line in zip(scalars, sent(go_yaml, scalars), strict=True):
        answer = json.loads(line)
        expected = answer["v"] if isinstance(answer.get("v"), str) else None
        if sent_as_string(TypedScalar(implicit_tag(scalar), scalar)) != expected:
            mismatches.append((scalar, line))
    assert not mismatches, mismatches[:20]
    assert sum(1 for s in scalars if sent_as_string(TypedScalar(implicit_tag(s), s)) is not None) > 500
