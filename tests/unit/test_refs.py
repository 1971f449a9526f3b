"""The reference finder: every place a pod spec names a ConfigMap or Secret, and the keys it sees."""

from __future__ import annotations

from wavegen.core.model import SourceKey
from wavegen.core.refs import extra_references, merge_visible_keys, pod_spec_references

SPEC = {
    "volumes": [
        {"name": "a", "configMap": {"name": "cm-vol", "items": [{"key": "x", "path": "x"}]}},
        {"name": "b", "secret": {"secretName": "sec-vol", "optional": True}},
        {
            "name": "c",
            "projected": {
                "sources": [
                    {"configMap": {"name": "cm-proj"}},
                    {"secret": {"name": "sec-proj", "items": [{"key": "k1", "path": "p"}, {"key": "k2", "path": "q"}]}},
                    {"serviceAccountToken": {"path": "token"}},
                ]
            },
        },
        {"name": "d", "emptyDir": {}},
    ],
    "initContainers": [{"name": "init", "envFrom": [{"secretRef": {"name": "sec-init"}}]}],
    "containers": [
        {
            "name": "main",
            "envFrom": [{"configMapRef": {"name": "cm-envfrom"}, "prefix": "P_"}],
            "env": [
                {"name": "A", "valueFrom": {"configMapKeyRef": {"name": "cm-key", "key": "ka"}}},
                {"name": "B", "valueFrom": {"secretKeyRef": {"name": "sec-key", "key": "kb", "optional": "true"}}},
                {"name": "C", "value": "plain"},
                {"name": "D", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            ],
        }
    ],
}


def test_finds_every_reference_with_its_keys_and_field() -> None:
    refs = pod_spec_references(SPEC, "ns", "spec.template.spec")
    found = {(r.source.kind, r.source.name): (r.keys, r.optional) for r in refs}
    assert found == {
        ("ConfigMap", "cm-vol"): (frozenset({"x"}), False),
        ("Secret", "sec-vol"): (None, True),
        ("ConfigMap", "cm-proj"): (None, False),
        ("Secret", "sec-proj"): (frozenset({"k1", "k2"}), False),
        ("Secret", "sec-init"): (None, False),
        ("ConfigMap", "cm-envfrom"): (None, False),
        ("ConfigMap", "cm-key"): (frozenset({"ka"}), False),
        ("Secret", "sec-key"): (frozenset({"kb"}), True),
    }
    fields = {r.source.name: r.field for r in refs}
    assert fields["sec-init"] == "spec.template.spec.initContainers[0].envFrom[0].secretRef"
    assert fields["sec-proj"] == "spec.template.spec.volumes[2].projected.sources[1].secret"
    assert all(r.source.namespace == "ns" for r in refs)


def test_extra_annotations_take_names_and_namespaced_names() -> None:
    refs = extra_references({"wavegen.io/extra-configmaps": "one, other-ns/two,,", "wavegen.io/extra-secrets": "tls"}, "home")
    assert [(r.source, r.keys) for r in refs] == [
        (SourceKey("ConfigMap", "home", "one"), None),
        (SourceKey("ConfigMap", "other-ns", "two"), None),
        (SourceKey("Secret", "home", "tls"), None),
    ]


def test_visible_keys_merge_to_a_union_and_all_wins() -> None:
    refs = pod_spec_references(
        {
            "containers": [
                {
                    "name": "c",
                    "env": [
                        {"name": "A", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "a"}}},
                        {"name": "B", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "b"}}},
                        {"name": "S", "valueFrom": {"secretKeyRef": {"name": "s", "key": "x"}}},
                    ],
                    "envFrom": [{"secretRef": {"name": "s"}}],
                }
            ]
        },
        "ns",
        "spec",
    )
    merged = merge_visible_keys(refs)
    assert merged == {SourceKey("ConfigMap", "ns", "cm"): frozenset({"a", "b"}), SourceKey("Secret", "ns", "s"): None}


def test_malformed_specs_are_tolerated() -> None:
    odd = {"volumes": "nope", "containers": [None, {"env": [None, {"valueFrom": None}]}, {"envFrom": [{"configMapRef": {}}]}]}
    assert pod_spec_references(odd, "ns", "spec") == []
