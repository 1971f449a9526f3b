"""The watch-mode index: stored ConfigMaps/Secrets, trimmed workloads, and which workloads each source feeds."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..core.live import uncovered_references
from ..core.model import ConfigSource, SourceKey
from ..core.plan import Options
from ..core.sources import SourceError, config_source


@dataclass(frozen=True, slots=True)
class Kind:
    """A watched resource: kind, apiVersion, plural."""

    kind: str
    api_version: str
    plural: str


CONFIGMAP = Kind("ConfigMap", "v1", "configmaps")
SECRET = Kind("Secret", "v1", "secrets")
WORKLOAD_KINDS: dict[str, Kind] = {
    k.kind: k
    for k in (
        Kind("Deployment", "apps/v1", "deployments"),
        Kind("StatefulSet", "apps/v1", "statefulsets"),
        Kind("DaemonSet", "apps/v1", "daemonsets"),
        Kind("CronJob", "batch/v1", "cronjobs"),
        Kind("ReplicaSet", "apps/v1", "replicasets"),
        Kind("Rollout", "argoproj.io/v1alpha1", "rollouts"),
    )
}
DEFAULT_WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "CronJob")

# Annotation prefixes the core reads (opt-in, ignore, extra references, hashes, the controller's record).
_KEPT_PREFIXES = ("wavegen.io/", "wave.pusher.com/")

WorkloadKey = tuple[str, str, str]  # kind, namespace, name


def _keep_annotations(meta: Any) -> dict[str, Any]:
    annotations = meta.get("annotations") if isinstance(meta, Mapping) else None
    if not isinstance(annotations, Mapping):
        return {}
    return {k: v for k, v in annotations.items() if isinstance(k, str) and k.startswith(_KEPT_PREFIXES)}


def _trim_container(container: Any) -> dict[str, Any]:
    if not isinstance(container, Mapping):
        return {}
    out: dict[str, Any] = {}
    if isinstance(container.get("envFrom"), list):
        out["envFrom"] = container["envFrom"]
    env = container.get("env")
    if isinstance(env, list):
        # Placeholders keep indices (used in messages) while dropping literal values.
        out["env"] = [{"valueFrom": e["valueFrom"]} if isinstance(e, Mapping) and "valueFrom" in e else {} for e in env]
    return out


def _trim_volume(volume: Any) -> dict[str, Any]:
    if not isinstance(volume, Mapping):
        return {}
    return {k: volume[k] for k in ("configMap", "secret", "projected") if k in volume}


def _trim_template(template: Any) -> dict[str, Any]:
    if not isinstance(template, Mapping):
        return {}
    spec = template.get("spec")
    spec = spec if isinstance(spec, Mapping) else {}
    trimmed: dict[str, Any] = {}
    for field in ("containers", "initContainers"):
        if isinstance(spec.get(field), list):
            trimmed[field] = [_trim_container(c) for c in spec[field]]
    if isinstance(spec.get("volumes"), list):
        trimmed["volumes"] = [_trim_volume(v) for v in spec["volumes"]]
    return {"metadata": {"annotations": _keep_annotations(template.get("metadata"))}, "spec": trimmed}


def trim_workload(body: Mapping[str, Any], options: Options) -> dict[str, Any]:
    """Only what the core reads from a workload, so 2,000 Deployments cost little memory."""
    meta = body.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    out: dict[str, Any] = {
        "apiVersion": body.get("apiVersion"),
        "kind": body.get("kind"),
        "metadata": {
            "name": meta.get("name"),
            "namespace": meta.get("namespace"),
            "uid": meta.get("uid"),
            "resourceVersion": meta.get("resourceVersion"),
            "annotations": _keep_annotations(meta),
        },
    }
    api_version, kind = str(body.get("apiVersion") or ""), str(body.get("kind") or "")
    group = api_version.partition("/")[0] if "/" in api_version else ""
    workload_kind = options.workloads.lookup(group, kind)
    for path in workload_kind.template_paths if workload_kind else ():
        node: Any = body
        for part in path:
            node = node.get(part) if isinstance(node, Mapping) else None
        if node is None:
            continue
        target = out
        for part in path[:-1]:
            target = target.setdefault(part, {})
        target[path[-1]] = _trim_template(node)
    return out


def _identity(obj: Mapping[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def _same_data(a: ConfigSource | None, b: ConfigSource | None) -> bool:
    if a is None or b is None:
        return a is b
    return a.ignored == b.ignored and a.text_data == b.text_data and a.binary_data == b.binary_data


class Index:
    """Thread-safe state recomputed from lists and watches; every method returns the workloads to reconcile."""

    def __init__(self, options: Options) -> None:
        self.options = options
        self.lock = threading.RLock()
        self.sources: dict[SourceKey, ConfigSource] = {}
        self.workloads: dict[WorkloadKey, dict[str, Any]] = {}
        self._deps: dict[WorkloadKey, frozenset[SourceKey]] = {}
        self._rdeps: dict[SourceKey, set[WorkloadKey]] = {}

    # ---- sources ---------------------------------------------------------------

    def _source(self, kind: Kind, obj: Mapping[str, Any]) -> ConfigSource | None:
        namespace, name = _identity(obj)
        try:
            return config_source(kind.kind, namespace, name, obj)  # type: ignore[arg-type]
        except SourceError:
            return None

    def dependents(self, key: SourceKey) -> set[WorkloadKey]:
        with self.lock:
            return set(self._rdeps.get(key, ()))

    def put_source(self, kind: Kind, obj: Mapping[str, Any]) -> tuple[bool, set[WorkloadKey]]:
        """Store a ConfigMap/Secret; (its data changed, dependents to reconcile)."""
        source = self._source(kind, obj)
        if source is None:
            return False, set()
        with self.lock:
            old = self.sources.get(source.key)
            self.sources[source.key] = source
            if _same_data(old, source):
                return False, set()
            return True, set(self._rdeps.get(source.key, ()))

    def delete_source(self, kind: Kind, namespace: str, name: str) -> set[WorkloadKey]:
        key = SourceKey(kind.kind, namespace, name)  # type: ignore[arg-type]
        with self.lock:
            if self.sources.pop(key, None) is None:
                return set()
            return set(self._rdeps.get(key, ()))

    def replace_sources(
        self, kind: Kind, namespace: str | None, items: Iterable[Mapping[str, Any]]
    ) -> tuple[int, set[WorkloadKey]]:
        """After a (re)list: store every item, forget the ones gone; (sources whose data changed, dependents)."""
        fresh = {s.key: s for s in (self._source(kind, obj) for obj in items) if s is not None}
        changed = 0
        affected: set[WorkloadKey] = set()
        with self.lock:
            stale = [
                k
                for k in self.sources
                if k.kind == kind.kind and (namespace is None or k.namespace == namespace) and k not in fresh
            ]
            for key in stale:
                del self.sources[key]
                changed += 1
                affected |= self._rdeps.get(key, set())
            for key, source in fresh.items():
                if not _same_data(self.sources.get(key), source):
                    changed += 1
                    affected |= self._rdeps.get(key, set())
                self.sources[key] = source
        return changed, affected

    # ---- workloads -------------------------------------------------------------

    def _link(self, key: WorkloadKey, deps: frozenset[SourceKey]) -> None:
        for source in self._deps.get(key, frozenset()) - deps:
            users = self._rdeps.get(source)
            if users is not None:
                users.discard(key)
                if not users:
                    del self._rdeps[source]
        for source in deps:
            self._rdeps.setdefault(source, set()).add(key)
        if deps:
            self._deps[key] = deps
        else:
            self._deps.pop(key, None)

    def put_workload(self, kind: Kind, obj: Mapping[str, Any]) -> bool:
        """Store a workload (trimmed); True when what the core reads changed."""
        namespace, name = _identity(obj)
        key = (kind.kind, namespace, name)
        # List items carry no apiVersion/kind: the watched resource says what they are.
        trimmed = trim_workload({**obj, "apiVersion": kind.api_version, "kind": kind.kind}, self.options)
        reason, templates = uncovered_references(trimmed, self.options)
        with self.lock:
            if reason is not None:
                # Not selected (not opted in, or ignored): keep nothing; any record it carries stays untouched.
                had = self.workloads.pop(key, None) is not None
                self._link(key, frozenset())
                return had
            deps = frozenset(r.source for _, refs in templates for r in refs)
            old = self.workloads.get(key)
            self.workloads[key] = trimmed
            self._link(key, deps)
            return old is None or _without_rv(old) != _without_rv(trimmed)

    def delete_workload(self, kind: Kind, namespace: str, name: str) -> None:
        key = (kind.kind, namespace, name)
        with self.lock:
            self.workloads.pop(key, None)
            self._link(key, frozenset())

    def replace_workloads(self, kind: Kind, namespace: str | None, items: Iterable[Mapping[str, Any]]) -> set[WorkloadKey]:
        seen: set[WorkloadKey] = set()
        changed: set[WorkloadKey] = set()
        for obj in items:
            ns, name = _identity(obj)
            key = (kind.kind, ns, name)
            seen.add(key)
            if self.put_workload(kind, obj):
                changed.add(key)
        with self.lock:
            stale = [
                k for k in self.workloads if k[0] == kind.kind and (namespace is None or k[1] == namespace) and k not in seen
            ]
            for key in stale:
                self.workloads.pop(key, None)
                self._link(key, frozenset())
        return changed

    def counts(self) -> tuple[int, int]:
        with self.lock:
            return len(self.workloads), len(self.sources)


def _without_rv(trimmed: Mapping[str, Any]) -> dict[str, Any]:
    meta = dict(trimmed.get("metadata") or {})
    meta.pop("resourceVersion", None)
    return {**trimmed, "metadata": meta}
