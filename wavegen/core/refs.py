"""The one reference finder: every place a pod template names a ConfigMap or Secret."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Any

from .model import Reference, SourceKey, SourceKind, is_mapping

EXTRA_CONFIGMAPS = "wavegen.io/extra-configmaps"
EXTRA_SECRETS = "wavegen.io/extra-secrets"


_EMPTY: Mapping[str, Any] = {}
_new_tuple = tuple.__new__


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if is_mapping(value) else _EMPTY


def _sequence(value: Any) -> Sequence[Any]:
    return value if isinstance(value, list) else ()


def _is_true(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.lower() == "true")


def _items_keys(source: Mapping[str, Any]) -> frozenset[str] | None:
    """Keys an ``items`` list narrows a volume to; None (all keys) without ``items``."""
    items = source.get("items")
    if not isinstance(items, list) or not items:
        return None
    return frozenset(i["key"] for i in items if is_mapping(i) and isinstance(i.get("key"), str))


def _add(
    refs: list[Reference], kind: SourceKind, namespace: str, name: Any, keys: frozenset[str] | None, optional: Any, field: str
) -> None:
    if isinstance(name, str) and name:
        # tuple.__new__ builds the named tuples without their Python-level __new__ (same values).
        source = _new_tuple(SourceKey, (kind, namespace, name))
        refs.append(_new_tuple(Reference, (source, keys, _is_true(optional), field)))


def _volume_refs(refs: list[Reference], volumes: Sequence[Any], namespace: str, base: str) -> None:
    for vi, volume in enumerate(volumes):
        volume = _mapping(volume)
        if not volume:
            continue
        field = f"{base}.volumes[{vi}]"
        cm = volume.get("configMap")
        if is_mapping(cm):
            _add(refs, "ConfigMap", namespace, cm.get("name"), _items_keys(cm), cm.get("optional"), f"{field}.configMap")
        secret = volume.get("secret")
        if is_mapping(secret):
            _add(
                refs,
                "Secret",
                namespace,
                secret.get("secretName"),
                _items_keys(secret),
                secret.get("optional"),
                f"{field}.secret",
            )
        projected = volume.get("projected")
        if is_mapping(projected):
            for si, projection in enumerate(_sequence(projected.get("sources"))):
                projection = _mapping(projection)
                pfield = f"{field}.projected.sources[{si}]"
                cm = projection.get("configMap")
                if is_mapping(cm):
                    _add(refs, "ConfigMap", namespace, cm.get("name"), _items_keys(cm), cm.get("optional"), f"{pfield}.configMap")
                secret = projection.get("secret")
                if is_mapping(secret):
                    _add(
                        refs,
                        "Secret",
                        namespace,
                        secret.get("name"),
                        _items_keys(secret),
                        secret.get("optional"),
                        f"{pfield}.secret",
                    )


def _container_refs(refs: list[Reference], containers: Sequence[Any], namespace: str, base: str) -> None:
    for ci, container in enumerate(containers):
        container = _mapping(container)
        env_froms = container.get("envFrom")
        envs = container.get("env")
        if env_froms is None and envs is None:
            continue
        cfield = f"{base}[{ci}]"
        for ei, env_from in enumerate(_sequence(env_froms)):
            env_from = _mapping(env_from)
            cm = env_from.get("configMapRef")
            if is_mapping(cm):
                _add(
                    refs, "ConfigMap", namespace, cm.get("name"), None, cm.get("optional"), f"{cfield}.envFrom[{ei}].configMapRef"
                )
            secret = env_from.get("secretRef")
            if is_mapping(secret):
                _add(
                    refs,
                    "Secret",
                    namespace,
                    secret.get("name"),
                    None,
                    secret.get("optional"),
                    f"{cfield}.envFrom[{ei}].secretRef",
                )
        for ei, env in enumerate(_sequence(envs)):
            value_from = _mapping(env).get("valueFrom")
            if value_from is None:
                continue
            value_from = _mapping(value_from)
            cm = value_from.get("configMapKeyRef")
            if is_mapping(cm) and isinstance(cm.get("key"), str):
                _add(
                    refs,
                    "ConfigMap",
                    namespace,
                    cm.get("name"),
                    frozenset((cm["key"],)),
                    cm.get("optional"),
                    f"{cfield}.env[{ei}].valueFrom.configMapKeyRef",
                )
            secret = value_from.get("secretKeyRef")
            if is_mapping(secret) and isinstance(secret.get("key"), str):
                _add(
                    refs,
                    "Secret",
                    namespace,
                    secret.get("name"),
                    frozenset((secret["key"],)),
                    secret.get("optional"),
                    f"{cfield}.env[{ei}].valueFrom.secretKeyRef",
                )


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
