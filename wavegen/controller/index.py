"""The watch-mode index: digests of referenced ConfigMaps/Secrets, trimmed workloads, and which workloads each feeds."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..core.hashing import KeyDigests, key_digests
from ..core.live import uncovered_references
from ..core.model import SourceKey
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


def digest_source(kind: Kind, obj: Mapping[str, Any]) -> KeyDigests | None:
    """Decode, digest, drop: per-key digests of a ConfigMap/Secret body (None if the API server sent invalid data)."""
    namespace, name = _identity(obj)
    try:
        return key_digests(config_source(kind.kind, namespace, name, obj))  # type: ignore[arg-type]
    except SourceError:
        return None


class Index:
    """Thread-safe state recomputed from lists and watches; every method returns the workloads to reconcile.

    Memory follows references: a ConfigMap/Secret that no indexed workload
    references costs nothing (its list and watch items are dropped unread); a
    referenced one is kept as per-key digests only (``KeyDigests``), never its
    values. A referenced source is in one of three states: ``sources`` (present),
    ``absent`` (known not to exist) or unknown (it became referenced after its
    list item went by: the controller fetches it before deciding).
    """

    def __init__(self, options: Options) -> None:
        self.options = options
        self.lock = threading.RLock()
        self.sources: dict[SourceKey, KeyDigests] = {}
        self.absent: set[SourceKey] = set()
        self.workloads: dict[WorkloadKey, dict[str, Any]] = {}
        self._deps: dict[WorkloadKey, frozenset[SourceKey]] = {}
        self._rdeps: dict[SourceKey, set[WorkloadKey]] = {}

    # ---- sources ---------------------------------------------------------------

    def dependents(self, key: SourceKey) -> set[WorkloadKey]:
        with self.lock:
            return set(self._rdeps.get(key, ()))

    def referenced(self, key: SourceKey) -> bool:
        with self.lock:
            return key in self._rdeps

    def put_source(self, kind: Kind, obj: Mapping[str, Any]) -> tuple[bool, set[WorkloadKey]]:
        """Store a referenced ConfigMap/Secret as digests; (its data changed, dependents to reconcile)."""
        namespace, name = _identity(obj)
        key = SourceKey(kind.kind, namespace, name)  # type: ignore[arg-type]
        if not self.referenced(key):
            return False, set()  # nobody reads it: not even decoded
        source = digest_source(kind, obj)
        with self.lock:
            users = self._rdeps.get(key)
            if source is None or users is None:
                return False, set()
            old = self.sources.get(key)
            self.sources[key] = source
            self.absent.discard(key)
            if old == source:
                return False, set()
            return True, set(users)

    def delete_source(self, kind: Kind, namespace: str, name: str) -> set[WorkloadKey]:
        key = SourceKey(kind.kind, namespace, name)  # type: ignore[arg-type]
        with self.lock:
            users = self._rdeps.get(key)
            if users is None:
                return set()
            self.absent.add(key)
            if self.sources.pop(key, None) is None:
                return set()
            return set(users)

    def resolve(self, kind: Kind, key: SourceKey, obj: Mapping[str, Any] | None) -> None:
        """Store a fetched source (``obj`` None: it does not exist), unless a watch event got there first."""
        source = digest_source(kind, obj) if obj is not None else None
        with self.lock:
            if key not in self._rdeps or key in self.sources or key in self.absent:
                return
            if source is None:
                self.absent.add(key)
            else:
                self.sources[key] = source

    def unknown(self, workload: WorkloadKey) -> list[SourceKey]:
        """The workload's references whose state is not known yet."""
        with self.lock:
            deps = self._deps.get(workload, frozenset())
            return sorted(k for k in deps if k not in self.sources and k not in self.absent)

    def replace_sources(
        self, kind: Kind, namespace: str | None, items: Iterable[Mapping[str, Any]]
    ) -> tuple[int, set[WorkloadKey]]:
        """After a (re)list: store the referenced items, forget the ones gone; (sources whose data changed, dependents).

        ``items`` is consumed one by one (pass a generator over the list's pages): only the names
        seen are kept until the end, so memory does not grow with the size of what is listed.
        """
        seen: set[tuple[str, str]] = set()
        changed = 0
        affected: set[WorkloadKey] = set()
        for obj in items:
            namespace_name = _identity(obj)
            seen.add(namespace_name)
            source_changed, users = self.put_source(kind, obj)
            del obj  # nothing of an item outlives its digest
            if source_changed:
                changed += 1
                affected |= users
        with self.lock:
            for key, users in self._rdeps.items():
                if key.kind != kind.kind or (namespace is not None and key.namespace != namespace):
                    continue
                if (key.namespace, key.name) in seen:
                    continue  # present; stored unless it became referenced after its item went by (unknown)
                if self.sources.pop(key, None) is not None:
                    changed += 1
                    affected |= users
                self.absent.add(key)
        return changed, affected

    # ---- workloads -------------------------------------------------------------

    def _link(self, key: WorkloadKey, deps: frozenset[SourceKey]) -> None:
        for source in self._deps.get(key, frozenset()) - deps:
            users = self._rdeps.get(source)
            if users is not None:
                users.discard(key)
                if not users:
                    # Unreferenced now: keep nothing of it.
                    del self._rdeps[source]
                    self.sources.pop(source, None)
                    self.absent.discard(source)
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
        if kind.kind == "ReplicaSet" and _controlled(obj):
            # A Deployment's (or Rollout's) ReplicaSet copies its owner's annotations; the owner is what rolls.
            reason = "a ReplicaSet with a controlling owner"
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


def _controlled(obj: Mapping[str, Any]) -> bool:
    meta = obj.get("metadata")
    owners = meta.get("ownerReferences") if isinstance(meta, Mapping) else None
    return isinstance(owners, list) and any(isinstance(o, Mapping) and o.get("controller") is True for o in owners)


def _without_rv(trimmed: Mapping[str, Any]) -> dict[str, Any]:
    meta = dict(trimmed.get("metadata") or {})
    meta.pop("resourceVersion", None)
    return {**trimmed, "metadata": meta}
