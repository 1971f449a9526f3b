"""The table of workload kinds and where their pod templates live, extensible by configuration."""

from __future__ import annotations

from _collections_abc import Iterable, Mapping

from ..errors import UsageError
from .record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final


class WorkloadKind(Record):
    """A kind whose pod template(s) wavegen annotates.

    ``group`` is the API group ("" for core, "*" for any group).
    ``template_paths`` are dotted paths from the object root to each pod template.
    """

    __slots__ = ("group", "kind", "template_paths")
    group: Final[str]
    kind: Final[str]
    template_paths: Final[tuple[tuple[str, ...], ...]]

    def __init__(self, group: str, kind: str, template_paths: tuple[tuple[str, ...], ...]) -> None:
        self.group = group
        self.kind = kind
        self.template_paths = template_paths

    def matches(self, group: str, kind: str) -> bool:
        return self.kind == kind and (self.group == "*" or self.group == group)


def _path(dotted: str) -> tuple[str, ...]:
    parts = tuple(p for p in dotted.split(".") if p)
    if not parts:
        raise UsageError(f"empty template path {dotted!r}")
    return parts


DEFAULT_WORKLOADS: tuple[WorkloadKind, ...] = (
    WorkloadKind("apps", "Deployment", (_path("spec.template"),)),
    WorkloadKind("apps", "StatefulSet", (_path("spec.template"),)),
    WorkloadKind("apps", "DaemonSet", (_path("spec.template"),)),
    WorkloadKind("apps", "ReplicaSet", (_path("spec.template"),)),
    WorkloadKind("batch", "CronJob", (_path("spec.jobTemplate.spec.template"),)),
    WorkloadKind("argoproj.io", "Rollout", (_path("spec.template"),)),
)

# Kinds that carry a pod spec but do not roll when their template changes:
# a Job's template is immutable, a bare Pod cannot be re-templated, and a
# ReplicationController does not replace its pods.
NON_ROLLING_KINDS: Mapping[tuple[str, str], str] = {
    ("batch", "Job"): "a Job's pod template is immutable; Jobs do not roll",
    ("", "Pod"): "a bare Pod does not roll; it must be recreated",
    ("", "ReplicationController"): "a ReplicationController does not replace its pods on template change",
}


def split_api_version(api_version: str) -> tuple[str, str]:
    """Split ``group/version`` into (group, version); the core group is ""."""
    if "/" in api_version:
        group, _, version = api_version.partition("/")
        return group, version
    return "", api_version


def parse_workload_spec(spec: str) -> WorkloadKind:
    """Parse ``Kind[.group]=path[,path...]`` as given to ``--workload``."""
    kind_part, sep, paths_part = spec.partition("=")
    if not sep or not kind_part.strip() or not paths_part.strip():
        raise UsageError(f"--workload expects Kind[.group]=path[,path], got {spec!r}")
    kind, _, group = kind_part.strip().partition(".")
    paths = tuple(_path(p.strip()) for p in paths_part.split(",") if p.strip())
    return WorkloadKind(group or "", kind, paths)


def parse_workload_config(entries: Iterable[Mapping[str, Any]]) -> list[WorkloadKind]:
    """Parse the ``workloads`` list of a config file."""
    kinds: list[WorkloadKind] = []
    for entry in entries:
        if not isinstance(entry, Mapping):
            raise UsageError("config: each workloads entry must be a mapping")
        kind = entry.get("kind")
        paths = entry.get("templatePaths", entry.get("templatePath"))
        group = entry.get("group", "")
        if isinstance(paths, str):
            paths = [paths]
        if not isinstance(kind, str) or not kind or not isinstance(group, str):
            raise UsageError("config: workloads entry needs a string 'kind' (and optional 'group')")
        if not isinstance(paths, list) or not paths or not all(isinstance(p, str) for p in paths):
            raise UsageError(f"config: workloads entry for {kind} needs 'templatePaths' (list of dotted paths)")
        kinds.append(WorkloadKind(group, kind, tuple(_path(p) for p in paths)))
    return kinds


class WorkloadTable:
    """Looks up whether a (group, kind) is a workload wavegen rolls, and where its templates are."""

    def __init__(self, kinds: Iterable[WorkloadKind] = DEFAULT_WORKLOADS) -> None:
        self._kinds = tuple(kinds)
        self._names = frozenset(k.kind for k in self._kinds)

    @property
    def kinds(self) -> tuple[WorkloadKind, ...]:
        return self._kinds

    def kind_names(self) -> frozenset[str]:
        """Names of all kinds, for a cheap pre-filter before parsing."""
        return self._names

    def lookup(self, group: str, kind: str) -> WorkloadKind | None:
        # Later entries (from configuration) override earlier ones for the same kind.
        for candidate in reversed(self._kinds):
            if candidate.matches(group, kind):
                return candidate
        return None

    def extended(self, extra: Iterable[WorkloadKind]) -> WorkloadTable:
        return WorkloadTable((*self._kinds, *extra))
