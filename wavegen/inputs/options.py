"""Builds core Options from flags, a config file and the environment (shared by every adapter)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..core.plan import MISSING_POLICIES, PROFILES, Options
from ..core.workloads import WorkloadKind, WorkloadTable, parse_workload_config, parse_workload_spec
from ..errors import UsageError

HMAC_KEY_ENV = "WAVEGEN_HMAC_KEY"
HMAC_KEY_FILE_ENV = "WAVEGEN_HMAC_KEY_FILE"


def add_core_flags(parser: argparse.ArgumentParser) -> None:
    """Flags every hashing command shares."""
    group = parser.add_argument_group("hashing")
    group.add_argument("--profile", choices=PROFILES, default=None, help="hash profile (default: wavegen)")
    group.add_argument("-n", "--namespace", default=None, help="namespace of objects without one (default: default)")
    group.add_argument("--missing", choices=MISSING_POLICIES, default=None, help="missing reference policy (default: warn)")
    group.add_argument("--opt-in", action="store_true", default=None, help="annotate only workloads that ask")
    group.add_argument(
        "--workload",
        action="append",
        default=[],
        metavar="KIND[.GROUP]=PATH[,PATH]",
        help="add a workload kind and its pod template path(s), e.g. Rollout.argoproj.io=spec.template",
    )
    group.add_argument("--config", metavar="FILE", default=None, help="YAML config file (see README)")
    group.add_argument(
        "--hmac-key-file",
        metavar="FILE",
        default=None,
        help=f"key for HMAC-SHA-256 hashes (or env {HMAC_KEY_FILE_ENV} / {HMAC_KEY_ENV})",
    )


def read_hmac_key(key_file: str | None, environ: Mapping[str, str]) -> bytes | None:
    """The HMAC key from a file (flag or env) or an env var; None for plain SHA-256."""
    path = key_file or environ.get(HMAC_KEY_FILE_ENV)
    if path:
        try:
            key = Path(path).read_bytes().strip()
        except OSError as err:
            raise UsageError(f"cannot read HMAC key file {path}: {err.strerror}") from None
        if not key:
            raise UsageError(f"HMAC key file {path} is empty")
        return key
    value = environ.get(HMAC_KEY_ENV)
    if value is not None:
        if not value.strip():
            raise UsageError(f"{HMAC_KEY_ENV} is set but empty")
        return value.strip().encode("utf-8")
    return None


def load_config(path: str) -> dict[str, Any]:
    import yaml

    try:
        text = Path(path).read_text(encoding="utf-8")
        data = yaml.safe_load(text)
    except OSError as err:
        raise UsageError(f"cannot read config {path}: {err.strerror}") from None
    except (yaml.YAMLError, UnicodeDecodeError):
        raise UsageError(f"config {path} is not valid YAML") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UsageError(f"config {path} must be a mapping")
    return data


CONFIG_KEYS = frozenset(("profile", "namespace", "missing", "optIn", "workloads", "hmacKeyFile"))


def options_from(settings: Mapping[str, Any], environ: Mapping[str, str] | None = None, where: str = "config") -> Options:
    """Options from a mapping with the config-file schema (also used by KRM functionConfig)."""
    env = os.environ if environ is None else environ
    unknown = sorted(set(settings) - CONFIG_KEYS)
    if unknown:
        raise UsageError(f"{where}: unknown field(s) {', '.join(unknown)} (known: {', '.join(sorted(CONFIG_KEYS))})")
    extra: list[WorkloadKind] = []
    workloads = settings.get("workloads")
    if workloads is not None:
        if not isinstance(workloads, list):
            raise UsageError(f"{where}: workloads must be a list")
        extra = parse_workload_config(workloads)
    opt_in = settings.get("optIn", False)
    if isinstance(opt_in, str):
        opt_in = opt_in.lower() == "true"
    key_file = settings.get("hmacKeyFile")
    return Options(
        profile=str(settings.get("profile") or "wavegen"),  # type: ignore[arg-type]
        namespace=str(settings.get("namespace") or "default"),
        missing=str(settings.get("missing") or "warn"),  # type: ignore[arg-type]
        opt_in=bool(opt_in),
        workloads=WorkloadTable().extended(extra),
        hmac_key=read_hmac_key(str(key_file) if key_file else None, env),
    )


def options_from_args(args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> Options:
    """Flags override the config file, which overrides defaults."""
    settings: dict[str, Any] = load_config(args.config) if args.config else {}
    where = args.config or "config"
    if args.profile is not None:
        settings["profile"] = args.profile
    if args.namespace is not None:
        settings["namespace"] = args.namespace
    if args.missing is not None:
        settings["missing"] = args.missing
    if args.opt_in:
        settings["optIn"] = True
    if args.hmac_key_file:
        settings["hmacKeyFile"] = args.hmac_key_file
    flag_kinds = [parse_workload_spec(spec) for spec in args.workload]
    options = options_from(settings, environ, where)
    if flag_kinds:
        options = Options(
            profile=options.profile,
            namespace=options.namespace,
            missing=options.missing,
            opt_in=options.opt_in,
            workloads=options.workloads.extended(flag_kinds),
            hmac_key=options.hmac_key,
        )
    return options
