"""HMAC-keyed hashes: stable per key, different across keys, default unchanged; the threat they answer, demonstrated."""

from __future__ import annotations

import hashlib
import hmac
import re
from pathlib import Path

from tests.support.hostile import run_wavegen

BUNDLE = b"""apiVersion: v1
kind: Secret
metadata:
  name: door
stringData:
  pin: "4821"
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: lock
spec:
  template:
    spec:
      containers:
      - name: lock
        image: example/lock
        env:
        - name: PIN
          valueFrom:
            secretKeyRef:
              name: door
              key: pin
"""
HASH = re.compile(rb'wavegen\.io/config-hash: "([0-9a-f]{64})"')


def canonical(pin: bytes) -> bytes:
    """The documented canonical form for this bundle (docs/hashing), rebuilt independently."""
    return b"wavegen.io/config-hash v1\nSecret default/door\npin " + hashlib.sha256(pin).hexdigest().encode() + b"\n"


def annotate(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> str:
    run = run_wavegen(["transform", *args], stdin=BUNDLE, cwd=tmp_path, env=_env(env or {}))
    assert run.returncode == 0, run.stderr
    match = HASH.search(run.stdout)
    assert match, run.stdout.decode()
    return match.group(1).decode()


def _env(extra: dict[str, str]) -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("WAVEGEN_HMAC")}
    env.update(extra)
    return env


def key_file(tmp_path: Path, name: str, key: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(key)
    return str(path)


def test_default_is_plain_sha256_of_canonical_form(tmp_path: Path) -> None:
    assert annotate(tmp_path) == hashlib.sha256(canonical(b"4821")).hexdigest()


def test_same_key_same_hash_different_key_different_hash(tmp_path: Path) -> None:
    one = key_file(tmp_path, "one", b"first-key-0123456789abcdef\n")
    two = key_file(tmp_path, "two", b"second-key-0123456789abcdef\n")
    first = annotate(tmp_path, "--hmac-key-file", one)
    assert first == annotate(tmp_path, "--hmac-key-file", one)
    assert first == hmac.new(b"first-key-0123456789abcdef", canonical(b"4821"), hashlib.sha256).hexdigest()
    assert first != annotate(tmp_path, "--hmac-key-file", two)
    assert first != annotate(tmp_path)


def test_environment_gives_the_same_key(tmp_path: Path) -> None:
    path = key_file(tmp_path, "k", b"shared-key-for-watch-and-ci\n")
    by_flag = annotate(tmp_path, "--hmac-key-file", path)
    assert by_flag == annotate(tmp_path, env={"WAVEGEN_HMAC_KEY_FILE": path})
    assert by_flag == annotate(tmp_path, env={"WAVEGEN_HMAC_KEY": "shared-key-for-watch-and-ci"})


def _usage_error(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> str:
    run = run_wavegen(["transform", *args], stdin=BUNDLE, cwd=tmp_path, env=_env(env or {}))
    assert run.returncode == 2, (run.returncode, run.stderr)
    lines = run.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("wavegen: error: "), run.stderr
    assert "Traceback" not in run.stderr and run.stdout == b""
    return lines[0]


def test_key_file_errors_are_one_line_usage_errors(tmp_path: Path) -> None:
    assert "cannot read HMAC key file" in _usage_error(tmp_path, "--hmac-key-file", str(tmp_path / "missing"))
    assert "is empty" in _usage_error(tmp_path, "--hmac-key-file", key_file(tmp_path, "empty", b"\n"))
    assert "cannot read HMAC key file" in _usage_error(tmp_path, "--hmac-key-file", str(tmp_path))
    assert "cannot read HMAC key file" in _usage_error(tmp_path, env={"WAVEGEN_HMAC_KEY_FILE": str(tmp_path / "nope")})
    assert "set but empty" in _usage_error(tmp_path, env={"WAVEGEN_HMAC_KEY": "  "})


def brute_force(annotation: str) -> bytes | None:
    """What anyone who can read the Deployment can do: try every 4-digit PIN."""
    for number in range(10_000):
        pin = f"{number:04d}".encode()
        if hashlib.sha256(canonical(pin)).hexdigest() == annotation:
            return pin
    return None


def test_plain_hash_of_a_pin_is_recoverable(tmp_path: Path) -> None:
    assert brute_force(annotate(tmp_path)) == b"4821"


def test_keyed_hash_of_a_pin_is_not_recoverable_without_the_key(tmp_path: Path) -> None:
    secret_key = key_file(tmp_path, "k", b"a-long-random-key-the-attacker-lacks-9f8e7d6c")
    annotation = annotate(tmp_path, "--hmac-key-file", secret_key)
    assert brute_force(annotation) is None
    guesses = (b"", b"wavegen", b"key", b"secret")
    assert all(
        hmac.new(guess, canonical(f"{n:04d}".encode()), hashlib.sha256).hexdigest() != annotation
        for guess in guesses
        for n in range(10_000)
    )
