"""wavegen: roll Kubernetes workloads exactly when the configuration they consume changes."""

from __future__ import annotations

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
