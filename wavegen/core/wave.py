"""The `wave` profile: wave-k8s/wave's reference discovery and config hash, reproduced exactly."""

from __future__ import annotations

from _collections_abc import Iterable, Mapping, Sequence

from wavegen.core.hashing import sha256_hex
from wavegen.core.model import ConfigSource, Reference, SourceKey, SourceKind, is_mapping

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Annotation on the workload's own metadata that opts it in; wave acts only on the exact value "true".
WAVE_ENABLE_ANNOTATION = "wave.pusher.com/update-on-config-change"
WAVE_ENABLE_VALUE = "true"
# Annotation wave writes on the pod template's metadata.
WAVE_HASH_ANNOTATION = "wave.pusher.com/config-hash"
# Annotations on the workload's own metadata naming extra dependencies: "name" or "namespace/name", comma separated.
WAVE_EXTRA_CONFIGMAPS = "wave.pusher.com/extra-configmaps"
WAVE_EXTRA_SECRETS = "wave.pusher.com/extra-secrets"

__all__ = [
    "WAVE_ENABLE_ANNOTATION",
    "WAVE_ENABLE_VALUE",
    "WAVE_EXTRA_CONFIGMAPS",
    "WAVE_EXTRA_SECRETS",
    "WAVE_HASH_ANNOTATION",
    "go_json_bytes_map",
    "go_json_string",
    "wave_enabled",
    "wave_hash",
    "wave_missing_required",
    "wave_references",
]


# --------------------------------------------------------------------------- enablement


def wave_enabled(workload_annotations: Mapping[str, str]) -> bool:
    """Return True when wave would process the workload (annotation value exactly ``"true"``)."""
    return workload_annotations.get(WAVE_ENABLE_ANNOTATION) == WAVE_ENABLE_VALUE


# --------------------------------------------------------------------------- discovery


_EMPTY: Mapping[str, Any] = {}


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if is_mapping(value) else _EMPTY


def _items(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _name(value: Any) -> str:
    # A missing name is Go's zero value "".
    return value if isinstance(value, str) else ""


def _required(selector: Mapping[str, Any]) -> bool:
    # wave: required unless `optional` is set and true.
    return selector.get("optional") is not True


def _ref(
    kind: SourceKind,
    namespace: str,
    name: str,
    keys: frozenset[str] | None,
    required: bool,
    field: str,
) -> Reference:
    return Reference(
        source=SourceKey(kind, namespace, name),
        keys=keys,
        optional=not required,
        field=field,
    )


def _projected_keys(source: Mapping[str, Any]) -> frozenset[str] | None:
    # A projected source narrows keys only when it has items. An empty `items: []`
    # is dropped by the API server before wave reads the object, so it means "all keys".
    items = _items(source.get("items"))
    if not items:
        return None
    return frozenset(_name(_mapping(item).get("key")) for item in items)


def _extra_refs(
    kind: SourceKind,
    annotation: str,
    workload_annotations: Mapping[str, str],
    namespace: str,
) -> Iterable[Reference]:
    value = workload_annotations.get(annotation)
    if value is None:
        return
    field = f"metadata.annotations[{annotation}]"
    # No trimming: wave splits on "," then "/" verbatim; entries with more than one "/" are dropped.
    for entry in value.split(","):
        parts = entry.split("/")
        if len(parts) == 1:
            yield _ref(kind, namespace, parts[0], None, False, field)
        elif len(parts) == 2:
            yield _ref(kind, parts[0], parts[1], None, False, field)


def wave_references(
    pod_spec: Mapping[str, Any],
    workload_annotations: Mapping[str, str],
    namespace: str,
    template_field: str,
) -> list[Reference]:
    """Return the references wave discovers, in wave's order.

    ``pod_spec`` is the pod template's ``spec``; ``workload_annotations`` the
    workload's own ``metadata.annotations``; ``namespace`` the workload's
    namespace; ``template_field`` the dotted path of the pod template (e.g.
    ``spec.template``) or, if it already ends in ``.spec``, of the pod spec;
    it is used only for ``Reference.field``.

    Order matters to :func:`wave_hash` (see its docstring). Wave scans, in
    this order: volumes (``configMap``/``secret`` always as whole objects,
    ignoring ``items``; ``projected.sources`` narrowed by ``items``), the
    extra-configmaps/extra-secrets annotations, ``envFrom`` of
    ``containers``, then ``env[].valueFrom`` key refs of ``containers``.
    ``initContainers`` and ``ephemeralContainers`` are not scanned.
    """
    spec = template_field if template_field.split(".")[-1] == "spec" else f"{template_field}.spec"
    refs: list[Reference] = []

    for vi, volume in enumerate(_items(pod_spec.get("volumes"))):
        volume = _mapping(volume)
        vfield = f"{spec}.volumes[{vi}]"
        if "configMap" in volume and volume["configMap"] is not None:
            cm = _mapping(volume["configMap"])
            refs.append(_ref("ConfigMap", namespace, _name(cm.get("name")), None, _required(cm), f"{vfield}.configMap"))
        if "secret" in volume and volume["secret"] is not None:
            sec = _mapping(volume["secret"])
            refs.append(_ref("Secret", namespace, _name(sec.get("secretName")), None, _required(sec), f"{vfield}.secret"))
        projected = volume.get("projected")
        if projected is not None:
            for si, source in enumerate(_items(_mapping(projected).get("sources"))):
                source = _mapping(source)
                sfield = f"{vfield}.projected.sources[{si}]"
                if source.get("configMap") is not None:
                    cm = _mapping(source["configMap"])
                    refs.append(
                        _ref(
                            "ConfigMap",
                            namespace,
                            _name(cm.get("name")),
                            _projected_keys(cm),
                            _required(cm),
                            f"{sfield}.configMap",
                        )
                    )
                if source.get("secret") is not None:
                    sec = _mapping(source["secret"])
                    refs.append(
                        _ref(
                            "Secret",
                            namespace,
                            _name(sec.get("name")),
                            _projected_keys(sec),
                            _required(sec),
                            f"{sfield}.secret",
                        )
                    )

    refs.extend(_extra_refs("ConfigMap", WAVE_EXTRA_CONFIGMAPS, workload_annotations, namespace))
    refs.extend(_extra_refs("Secret", WAVE_EXTRA_SECRETS, workload_annotations, namespace))

    containers = [_mapping(c) for c in _items(pod_spec.get("containers"))]
    for ci, container in enumerate(containers):
        for ei, env_from in enumerate(_items(container.get("envFrom"))):
            env_from = _mapping(env_from)
            efield = f"{spec}.containers[{ci}].envFrom[{ei}]"
            if env_from.get("configMapRef") is not None:
                cm = _mapping(env_from["configMapRef"])
                refs.append(_ref("ConfigMap", namespace, _name(cm.get("name")), None, _required(cm), f"{efield}.configMapRef"))
            if env_from.get("secretRef") is not None:
                sec = _mapping(env_from["secretRef"])
                refs.append(_ref("Secret", namespace, _name(sec.get("name")), None, _required(sec), f"{efield}.secretRef"))

    for ci, container in enumerate(containers):
        for ei, env in enumerate(_items(container.get("env"))):
            value_from = _mapping(_mapping(env).get("valueFrom"))
            efield = f"{spec}.containers[{ci}].env[{ei}].valueFrom"
            if value_from.get("configMapKeyRef") is not None:
                sel = _mapping(value_from["configMapKeyRef"])
                refs.append(
                    _ref(
                        "ConfigMap",
                        namespace,
                        _name(sel.get("name")),
                        frozenset({_name(sel.get("key"))}),
                        _required(sel),
                        f"{efield}.configMapKeyRef",
                    )
                )
            if value_from.get("secretKeyRef") is not None:
                sel = _mapping(value_from["secretKeyRef"])
                refs.append(
                    _ref(
                        "Secret",
                        namespace,
                        _name(sel.get("name")),
                        frozenset({_name(sel.get("key"))}),
                        _required(sel),
                        f"{efield}.secretKeyRef",
                    )
                )

    return refs


# --------------------------------------------------------------------------- Go encoding/json


_GO_SHORT_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",  # Go >= 1.22 writes \b and \f; older Go wrote \u0008 and \u000c.
    "\f": "\\f",
}
_GO_U_ESCAPES = {"<", ">", "&", "\u2028", "\u2029"}


def go_json_string(s: str) -> str:
    """Return ``s`` as Go's ``encoding/json`` (HTML escaping on, the ``json.Marshal`` default) quotes it.

    Control characters use ``\\n \\r \\t \\b \\f`` or ``\\u00xx`` (lowercase hex);
    ``<``, ``>``, ``&``, U+2028 and U+2029 become ``\\u003c``, ``\\u003e``,
    ``\\u0026``, ``\\u2028``, ``\\u2029``; everything else is emitted as UTF-8.
    Lone surrogates (how Python carries bytes that were not valid UTF-8)
    become ``\\ufffd``, as Go replaces each invalid byte.
    """
    out = ['"']
    for ch in s:
        esc = _GO_SHORT_ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
        elif ch < " " or ch in _GO_U_ESCAPES:
            out.append(f"\\u{ord(ch):04x}")
        elif "\ud800" <= ch <= "\udfff":
            out.append("\\ufffd")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _go_sort_key(s: str) -> bytes:
    # Go sorts map keys by their (raw) UTF-8 bytes.
    try:
        return s.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return s.encode("utf-8", "surrogatepass")


def go_json_bytes_map(data: Mapping[str, bytes]) -> str:
    """Return a Go ``map[string][]byte`` as ``json.Marshal`` writes it (sorted keys, standard base64 values)."""
    import binascii  # only the wave profile hashes base64: a C module a plain run need not load

    parts = [
        f'{go_json_string(key)}:"{binascii.b2a_base64(data[key], newline=False).decode("ascii")}"'
        for key in sorted(data, key=_go_sort_key)
    ]
    return "{" + ",".join(parts) + "}"


def _go_json_nested(outer: Mapping[str, Mapping[str, bytes]]) -> str:
    parts = [f"{go_json_string(name)}:{go_json_bytes_map(outer[name])}" for name in sorted(outer, key=_go_sort_key)]
    return "{" + ",".join(parts) + "}"


# --------------------------------------------------------------------------- hash


def _add_data(target: dict[str, bytes], ref: Reference, source: ConfigSource) -> None:
    # ConfigMap: data (as UTF-8 bytes) then binaryData; Secret: data only (already holds stringData).
    text: Mapping[str, str] = source.text_data if source.key.kind == "ConfigMap" else {}
    if ref.keys is None:
        for key, value in text.items():
            target[key] = value.encode("utf-8", "surrogateescape")
        for key, raw in source.binary_data.items():
            target[key] = bytes(raw)
        return
    for key in ref.keys:
        if key in text:
            target[key] = text[key].encode("utf-8", "surrogateescape")
        if key in source.binary_data:
            target[key] = bytes(source.binary_data[key])


def _canonical_bytes(references: Sequence[Reference], sources: Mapping[SourceKey, ConfigSource]) -> bytes:
    """Return the exact bytes wave feeds to SHA-256. Contains Secret values (base64): never print it."""
    buckets: dict[SourceKind, dict[str, dict[str, bytes]]] = {"ConfigMap": {}, "Secret": {}}
    for ref in references:
        source = sources.get(ref.source)
        if source is None:
            continue  # wave skips children it cannot find
        # Keyed by name only: same-named objects from different namespaces share one entry.
        entry = buckets[ref.source.kind].setdefault(ref.source.name, {})
        _add_data(entry, ref, source)
    text = '{"configMaps":' + _go_json_nested(buckets["ConfigMap"]) + ',"secrets":' + _go_json_nested(buckets["Secret"]) + "}"
    return text.encode("utf-8")


def wave_hash(references: Sequence[Reference], sources: Mapping[SourceKey, ConfigSource]) -> str:
    """Return the lowercase hex SHA-256 wave writes to ``wave.pusher.com/config-hash``.

    ``references`` should come from :func:`wave_references` (wave's order);
    ``sources`` maps each ConfigMap/Secret present to its stored data.
    References whose source is absent are skipped. All references to
    objects with the same kind and *name* merge into one map of key to bytes
    (union of what each sees; on a key clash between same-named objects in
    different namespaces the later reference wins). ``ConfigSource.ignored``
    is not consulted: wave knows nothing of it.
    """
    return sha256_hex(_canonical_bytes(references, sources))


def wave_missing_required(references: Sequence[Reference], sources: Mapping[SourceKey, ConfigSource]) -> list[str]:
    """Return wave's reasons for not (re)writing the hash: required objects or keys that are absent.

    When this is non-empty wave leaves the workload's hash untouched (and its
    webhook, on create, disables scheduling). Messages name objects and keys only.
    """
    problems: list[str] = []
    for ref in references:
        if ref.optional:
            continue
        key = ref.source
        label = "configmap" if key.kind == "ConfigMap" else "secret"
        source = sources.get(key)
        if source is None:
            problems.append(f"missing required {label} {key.namespace}/{key.name}")
            continue
        if ref.keys is None:
            continue
        for k in sorted(ref.keys):
            present = k in source.binary_data or (key.kind == "ConfigMap" and k in source.text_data)
            if not present:
                problems.append(f"missing required key {k} in {label} {key.namespace}/{key.name}")
    return problems
