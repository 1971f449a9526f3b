"""Predicts the names kustomize gives ConfigMaps/Secrets after its transformers ran (prefixes, hash suffixes)."""

from __future__ import annotations

from _collections_abc import Mapping, Sequence

from ..core.hashing import sha256_hex
from ..core.wave import go_json_string

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# kustomize leaves name references and generator hash suffixes for the very end
# of a build: an exec function running as a transformer still sees references
# by their original names and generated objects without their suffix. These
# annotations, which kustomize removes from its output, say what will happen.
NEEDS_HASH_SUFFIX = "internal.config.kubernetes.io/needsHashSuffix"
PREVIOUS_NAMES = "internal.config.kubernetes.io/previousNames"
_SOURCE_KINDS = ("ConfigMap", "Secret")
# Which key in a pod spec names which kind, and in which field.
_REFERENCE_FIELDS: Mapping[str, tuple[str, tuple[str, ...]]] = {
    "configMap": ("ConfigMap", ("name",)),
    "configMapRef": ("ConfigMap", ("name",)),
    "configMapKeyRef": ("ConfigMap", ("name",)),
    "secret": ("Secret", ("secretName", "name")),
    "secretRef": ("Secret", ("name",)),
    "secretKeyRef": ("Secret", ("name",)),
}
# kustomize's (and kubectl's) alphabet change for the first ten hex digits.
_SUFFIX_LETTERS = str.maketrans({"0": "g", "1": "h", "3": "k", "a": "m", "e": "t"})


def _annotations(body: Mapping[str, Any]) -> Mapping[str, Any]:
    metadata = body.get("metadata")
    annotations = metadata.get("annotations") if isinstance(metadata, Mapping) else None
    return annotations if isinstance(annotations, Mapping) else {}


def _go_json(value: Any) -> str:
    """JSON as Go's encoding/json writes strings and string maps (sorted keys, HTML-safe escapes)."""
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{go_json_string(str(k))}:{_go_json(value[k])}" for k in sorted(value, key=str)) + "}"
    return go_json_string(value if isinstance(value, str) else str(getattr(value, "text", value)))


def hash_suffix(body: Mapping[str, Any]) -> str:
    """The suffix kustomize's generator hashing appends to a ConfigMap's or Secret's current name."""
    # kustomize looks the name up as one field called "metadata/name", finds
    # nothing and hashes "" (observed with kustomize v5); keep doing the same.
    fields: dict[str, Any] = {"kind": body.get("kind"), "name": ""}
    data = body.get("data")
    fields["data"] = data if isinstance(data, Mapping) else ""
    if body.get("kind") == "ConfigMap":
        if isinstance(body.get("binaryData"), Mapping):
            fields["binaryData"] = body["binaryData"]
    else:
        fields["type"] = body.get("type") if body.get("type") is not None else ""
        if isinstance(body.get("stringData"), Mapping):
            fields["stringData"] = body["stringData"]
    encoded = _go_json(fields).encode("utf-8")
    return sha256_hex(encoded)[:10].translate(_SUFFIX_LETTERS)


class FinalNames:
    """Maps a reference as kustomize's transformers see it to the ConfigMap/Secret name it will become."""

    def __init__(self, bodies: Sequence[Mapping[str, Any]]) -> None:
        self.final: dict[int, str] = {}
        self._by_name: dict[tuple[str, str], list[tuple[str, str]]] = {}
        for body in bodies:
            kind = body.get("kind")
            metadata = body.get("metadata")
            if body.get("apiVersion") != "v1" or kind not in _SOURCE_KINDS or not isinstance(metadata, Mapping):
                continue
            name = metadata.get("name")
            if not isinstance(name, str) or not name:
                continue
            annotations = _annotations(body)
            final = name
            if str(annotations.get(NEEDS_HASH_SUFFIX, "")) == "enabled":
                final = f"{name}-{hash_suffix(body)}"
            self.final[id(body)] = final
            namespace = str(metadata.get("namespace") or "")
            names = {name, *(n.strip() for n in str(annotations.get(PREVIOUS_NAMES, "")).split(",") if n.strip())}
            for known in names:
                self._by_name.setdefault((str(kind), known), []).append((namespace, final))

    @property
    def active(self) -> bool:
        """Whether kustomize will rename anything (otherwise bodies pass through unchanged)."""
        return any(
            len({final for _, final in targets}) > 1 or any(final != name for _, final in targets)
            for (_, name), targets in self._by_name.items()
        )

    def resolve(self, kind: str, name: str, namespace: str) -> str:
        targets = self._by_name.get((kind, name), [])
        same_namespace = {final for ns, final in targets if ns == namespace}
        candidates = same_namespace or {final for _, final in targets}
        return candidates.pop() if len(candidates) == 1 else name

    def source_body(self, body: Mapping[str, Any]) -> Mapping[str, Any]:
        """A ConfigMap/Secret under the name it will have once kustomize finishes."""
        final = self.final.get(id(body))
        if final is None or final == body["metadata"]["name"]:
            return body
        renamed = dict(body)
        renamed["metadata"] = {**body["metadata"], "name": final}
        return renamed

    def workload_body(self, body: Mapping[str, Any]) -> Mapping[str, Any]:
        """A copy of an object whose ConfigMap/Secret references name what kustomize will make them name."""
        metadata = body.get("metadata")
        namespace = str(metadata.get("namespace") or "") if isinstance(metadata, Mapping) else ""
        import copy

        copied = copy.deepcopy(dict(body))
        self._rename(copied.get("spec"), namespace)
        return copied

    def _rename(self, node: Any, namespace: str) -> None:
        if isinstance(node, list):
            for item in node:
                self._rename(item, namespace)
            return
        if not isinstance(node, dict):
            return
        for key, value in node.items():
            target = _REFERENCE_FIELDS.get(key)
            if target is not None and isinstance(value, dict):
                kind, fields = target
                for field in fields:
                    if isinstance(value.get(field), str):
                        value[field] = self.resolve(kind, value[field], namespace)
            self._rename(value, namespace)
