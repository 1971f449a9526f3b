"""wavegen: roll Kubernetes workloads exactly when the configuration they consume changes."""

# No `from __future__ import annotations`: see cli/main.py.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .core.model import ConfigSource, Finding, Reference, Severity, SourceKey
    from .core.plan import HASH_ANNOTATION, KubeObject, Options, Plan, plan
    from .errors import WavegenError

__version__ = "0.1.0"

__all__ = [
    "HASH_ANNOTATION",
    "ConfigSource",
    "Finding",
    "KubeObject",
    "Options",
    "Plan",
    "Reference",
    "Severity",
    "SourceKey",
    "WavegenError",
    "__version__",
    "plan",
]

#: Public name -> the module that defines it, imported on first use (so `wavegen --version` or a
#: command that needs none of them does not pay for them).
_LAZY = {
    "ConfigSource": "wavegen.core.model",
    "Finding": "wavegen.core.model",
    "Reference": "wavegen.core.model",
    "Severity": "wavegen.core.model",
    "SourceKey": "wavegen.core.model",
    "HASH_ANNOTATION": "wavegen.core.plan",
    "KubeObject": "wavegen.core.plan",
    "Options": "wavegen.core.plan",
    "Plan": "wavegen.core.plan",
    "plan": "wavegen.core.plan",
    "WavegenError": "wavegen.errors",
}


def __getattr__(name: str) -> "Any":
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
