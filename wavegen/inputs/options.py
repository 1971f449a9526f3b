"""Builds core Options from flags, a config file and the environment (shared by every command and integration)."""

from __future__ import annotations

import os
from _collections_abc import Mapping

from ..core.plan import Options
from ..core.record import Record
from ..core.workloads import WorkloadKind, WorkloadTable, parse_workload_config, parse_workload_spec
from ..errors import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final

HMAC_KEY_ENV = "WAVEGEN_HMAC_KEY"
HMAC_KEY_FILE_ENV = "WAVEGEN_HMAC_KEY_FILE"


class HashingFlags(Record):
    """The hashing flags a command line gave (declared for typer in ``inputs/flags.py``); None means not given."""

    __slots__ = ("config", "hmac_key_file", "missing", "namespace", "opt_in", "profile", "workload")
    profile: Final[str | None]
    namespace: Final[str | None]
    missing: Final[str | None]
    opt_in: Final[bool]
    workload: Final[tuple[str, ...]]
    config: Final[str | None]
    hmac_key_file: Final[str | None]

    def __init__(
        self,
        profile: str | None = None,
        namespace: str | None = None,
        missing: str | None = None,
        opt_in: bool = False,
        workload: tuple[str, ...] = (),
        config: str | None = None,
        hmac_key_file: str | None = None,
    ) -> None:
        self.profile = profile
        self.namespace = namespace
        self.missing = missing
        self.opt_in = opt_in
        self.workload = workload
        self.config = config
        self.hmac_key_file = hmac_key_file

    def with_namespace(self, namespace: str | None) -> HashingFlags:
        """The same flags with another ``--namespace``."""
        return HashingFlags(self.profile, namespace, self.missing, self.opt_in, self.workload, self.config, self.hmac_key_file)

    def flag_settings(self) -> dict[str, Any]:
        """The config-file-schema fields these flags set (they override a config file or functionConfig)."""
        settings: dict[str, Any] = {}
        for key, value in (("profile", self.profile), ("namespace", self.namespace), ("missing", self.missing)):
            if value is not None:
                settings[key] = value
        if self.opt_in:
            settings["optIn"] = True
        if self.hmac_key_file:
            settings["hmacKeyFile"] = self.hmac_key_file
        return settings


def read_hmac_key(key_file: str | None, environ: Mapping[str, str]) -> bytes | None:
    """The HMAC key from a file (flag or env) or an env var; None for plain SHA-256."""
    path = key_file or environ.get(HMAC_KEY_FILE_ENV)
    if path:
        try:
            with open(path, "rb") as handle:
                key = handle.read().strip()
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
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
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


def options_from_flags(
    flags: HashingFlags, environ: Mapping[str, str] | None = None, base: Mapping[str, Any] | None = None, where: str = ""
) -> Options:
    """Flags override the config file (or ``base``, e.g. a KRM functionConfig), which overrides defaults."""
    settings: dict[str, Any] = dict(base) if base is not None else (load_config(flags.config) if flags.config else {})
    settings.update(flags.flag_settings())
    flag_kinds = [parse_workload_spec(spec) for spec in flags.workload]
    options = options_from(settings, environ, where or flags.config or "config")
    if flag_kinds:
        options = options.with_workloads(options.workloads.extended(flag_kinds))
    return options
