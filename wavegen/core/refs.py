"""The one reference finder: every place a pod template names a ConfigMap or Secret."""

from __future__ import annotations

from _collections_abc import Collection, Iterator, Mapping, Sequence

from .model import Reference, SourceKey, SourceKind, is_mapping

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

EXTRA_CONFIGMAPS = "wavegen.io/extra-configmaps"
EXTRA_SECRETS = "wavegen.io/extra-secrets"


_new_tuple = tuple.__new__


def _sequence(value: Any) -> Sequence[Any]:
    return value if isinstance(value, list) else ()


# Pod specs of one bundle repeat the same fields, key sets and sources; a reader keeping every
# workload's references shares one object for each (bounded, as they come from the input).
_MAX_SHARED = 4096
_shared: dict[Any, Any] = {}


def _one(value: Any) -> Any:
    """The shared object equal to ``value`` (a field or a key set: never config data)."""
    found = _shared.get(value)
    if found is not None:
        return found
    if len(_shared) < _MAX_SHARED:
        _shared[value] = value
    return value


def _items_keys(source: Mapping[str, Any]) -> frozenset[str] | None:
    """Keys an ``items`` list narrows a volume to; None (all keys) without ``items``."""
    items = source.get("items")
    if not isinstance(items, list) or not items:
        return None
    keys: frozenset[str] = _one(frozenset([i["key"] for i in items if is_mapping(i) and isinstance(i.get("key"), str)]))
    return keys


# How a selector limits the keys a reference sees: not at all, by an ``items`` list, or to its one ``key``.
_ALL, _ITEMS, _KEY = 0, 1, 2
# (field holding the selector, the kind it names, the selector's name field), in the order they are read.
_Choices = tuple[tuple[str, SourceKind, str], ...]
_VOLUME: _Choices = (("configMap", "ConfigMap", "name"), ("secret", "Secret", "secretName"))
_PROJECTION: _Choices = (("configMap", "ConfigMap", "name"), ("secret", "Secret", "name"))
_ENV_FROM: _Choices = (("configMapRef", "ConfigMap", "name"), ("secretRef", "Secret", "name"))
_KEY_REF: _Choices = (("configMapKeyRef", "ConfigMap", "name"), ("secretKeyRef", "Secret", "name"))


def _selectors(
    refs: list[Reference],
    holder: Mapping[str, Any],
    choices: _Choices,
    how: int,
    namespace: str,
    where: str,
    index: int,
    tail: str,
) -> None:
    """Append a reference for each selector of ``choices`` in ``holder`` that names an object.

    The field of each is ``<where>[<index>]<tail>.<selector field>``, built only for a reference.
    """
    for attr, kind, name_attr in choices:
        if attr not in holder:
            continue
        selector = holder[attr]
        if not is_mapping(selector):
            continue
        keys: frozenset[str] | None = None
        if how == _KEY:
            key = selector.get("key")
            if not isinstance(key, str):
                continue
            keys = _one(frozenset((key,)))
        elif how == _ITEMS and "items" in selector:
            keys = _items_keys(selector)
        name = selector.get(name_attr)
        if isinstance(name, str) and name:
            optional = selector.get("optional")
            optional = optional is True or (isinstance(optional, str) and optional.lower() == "true")
            # tuple.__new__ builds the named tuples without their Python-level __new__ (same values).
            source = _new_tuple(SourceKey, (kind, namespace, name))
            refs.append(_new_tuple(Reference, (source, keys, optional, _one(f"{where}[{index}]{tail}.{attr}"))))


def _volume_refs(refs: list[Reference], volumes: Sequence[Any], namespace: str, base: str) -> None:
    where = f"{base}.volumes"
    for vi, volume in enumerate(volumes):
        if not is_mapping(volume):
            continue
        _selectors(refs, volume, _VOLUME, _ITEMS, namespace, where, vi, "")
        if "projected" in volume:
            projected = volume["projected"]
            if is_mapping(projected):
                sources = projected.get("sources")
                pwhere = f"{where}[{vi}].projected.sources"
                for si, projection in enumerate(sources if isinstance(sources, list) else ()):
                    if is_mapping(projection):
                        _selectors(refs, projection, _PROJECTION, _ITEMS, namespace, pwhere, si, "")


def _container_refs(refs: list[Reference], containers: Sequence[Any], namespace: str, base: str) -> None:
    for ci, container in enumerate(containers):
        if not is_mapping(container):
            continue
        env_froms = container.get("envFrom")
        envs = container.get("env")
        if isinstance(env_froms, list) and env_froms:
            where = f"{base}[{ci}].envFrom"
            for ei, env_from in enumerate(env_froms):
                if is_mapping(env_from):
                    _selectors(refs, env_from, _ENV_FROM, _ALL, namespace, where, ei, "")
        if isinstance(envs, list) and envs:
            where = f"{base}[{ci}].env"
            for ei, env in enumerate(envs):
                if is_mapping(env) and "valueFrom" in env:
                    value_from = env["valueFrom"]
                    if is_mapping(value_from):
                        _selectors(refs, value_from, _KEY_REF, _KEY, namespace, where, ei, ".valueFrom")


def _extra_refs(annotations: Mapping[str, str], annotation: str, kind: SourceKind, namespace: str) -> Iterator[Reference]:
    value = annotations.get(annotation)
    if not isinstance(value, str):
        return
    for entry in value.split(","):
        entry = entry.strip()
        if not entry:
            continue
        ns, sep, name = entry.partition("/")
        if not sep:
            ns, name = namespace, entry
        yield Reference(SourceKey(kind, ns.strip(), name.strip()), None, False, f"metadata.annotations[{annotation}]")


def pod_spec_references(pod_spec: Mapping[str, Any], namespace: str, spec_field: str) -> list[Reference]:
    """Every ConfigMap/Secret reference of one pod spec, in document order."""
    refs: list[Reference] = []
    volumes = pod_spec.get("volumes")
    if volumes is not None:
        _volume_refs(refs, _sequence(volumes), namespace, spec_field)
    init_containers = pod_spec.get("initContainers")
    if init_containers is not None:
        _container_refs(refs, _sequence(init_containers), namespace, f"{spec_field}.initContainers")
    _container_refs(refs, _sequence(pod_spec.get("containers")), namespace, f"{spec_field}.containers")
    if len(refs) > 1:
        # One source key object per source: a plan may keep these for every workload of a bundle.
        sources: dict[SourceKey, SourceKey] = {}
        for index, ref in enumerate(refs):
            source = sources.setdefault(ref.source, ref.source)
            if source is not ref.source:
                refs[index] = _new_tuple(Reference, (source, ref.keys, ref.optional, ref.field))
    return refs


def extra_references(
    annotations: Mapping[str, str], namespace: str, configmaps_key: str = EXTRA_CONFIGMAPS, secrets_key: str = EXTRA_SECRETS
) -> list[Reference]:
    """Explicit extra dependencies declared in workload annotations (``name`` or ``namespace/name``)."""
    if configmaps_key not in annotations and secrets_key not in annotations:
        return []
    refs = list(_extra_refs(annotations, configmaps_key, "ConfigMap", namespace))
    refs.extend(_extra_refs(annotations, secrets_key, "Secret", namespace))
    return refs


def merge_visible_keys(refs: Sequence[Reference]) -> dict[SourceKey, frozenset[str] | None]:
    """Union of the keys each source is seen through; None once any reference sees all keys."""
    merged: dict[SourceKey, frozenset[str] | None] = {}
    for ref in refs:
        if ref.source in merged:
            current = merged[ref.source]
            merged[ref.source] = None if current is None or ref.keys is None else current | ref.keys
        else:
            merged[ref.source] = ref.keys
    return merged


def absent_required_keys(ref: Reference, present: Collection[str]) -> frozenset[str]:
    """Keys a non-optional reference names that its source lacks: the pod could not start without them.

    A key reference or a volume/projection ``items`` entry naming an absent key
    fails the container (CreateContainerConfigError) or the mount; a reference
    that sees all keys, or one marked ``optional: true``, never lacks a key.
    """
    if ref.optional or ref.keys is None:
        return frozenset()
    return frozenset(k for k in ref.keys if k not in present)
