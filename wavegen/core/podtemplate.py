"""The walk over a workload that planning and watch mode share: identity, its pod templates, their references, selection."""

from __future__ import annotations

from _collections_abc import Mapping, Sequence

from .model import Reference, SourceKey, is_mapping
from .refs import extra_references, pod_spec_references
from .sources import IGNORE_ANNOTATION
from .wave import WAVE_ENABLE_ANNOTATION, wave_enabled, wave_references

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    #: Why a workload is left out before its templates are read.
    Deselected = Literal["ignored", "not-opted-in"]
else:
    Deselected = str

ENABLED_ANNOTATION = "wavegen.io/enabled"

#: An object's (apiVersion, kind, namespace, name), the namespace defaulted.
Identity = tuple[str, str, str, str]


def object_identity(body: Mapping[str, Any], default_namespace: str) -> Identity:
    api_version = body.get("apiVersion")
    kind = body.get("kind")
    metadata = body.get("metadata")
    if is_mapping(metadata):
        name = metadata.get("name")
        namespace = metadata.get("namespace")
    else:
        name = namespace = None
    return (
        api_version if isinstance(api_version, str) else "",
        kind if isinstance(kind, str) else "",
        namespace if isinstance(namespace, str) and namespace else default_namespace,
        name if isinstance(name, str) else "",
    )


def at_path(body: Mapping[str, Any], path: Sequence[str]) -> Mapping[str, Any] | None:
    node: Any = body
    for part in path:
        if not is_mapping(node):
            return None
        node = node.get(part)
    return node if is_mapping(node) else None


def short_ref(key: SourceKey, namespace: str) -> str:
    return f"{key.kind}/{key.name}" if key.namespace == namespace else f"{key.kind}/{key.namespace}/{key.name}"


def template_references(
    template: Mapping[str, Any], path: tuple[str, ...], workload_annotations: Mapping[str, str], namespace: str, profile: str
) -> list[Reference]:
    spec = template.get("spec")
    if not is_mapping(spec):
        spec = {}
    spec_field = ".".join((*path, "spec"))
    if profile == "wave":
        return wave_references(spec, workload_annotations, namespace, spec_field)
    refs = pod_spec_references(spec, namespace, spec_field)
    extra = extra_references(workload_annotations, namespace)
    return refs + extra if extra else refs


def selection(annotations: Mapping[str, str], opt_in: bool, profile: str) -> tuple[Deselected | None, str]:
    ignore = annotations.get(IGNORE_ANNOTATION)
    if ignore is not None and ignore.lower() == "true":
        return "ignored", f'{IGNORE_ANNOTATION} is "true"'
    if opt_in:
        if profile == "wave":
            wanted = wave_enabled(annotations)
            key = WAVE_ENABLE_ANNOTATION
        else:
            wanted = annotations.get(ENABLED_ANNOTATION, "").lower() == "true"
            key = ENABLED_ANNOTATION
        if not wanted:
            return "not-opted-in", f'--opt-in is set and {key} is not "true"'
    return None, ""
