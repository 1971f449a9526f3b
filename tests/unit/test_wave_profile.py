"""Tests for the `wave` profile: discovery, Go JSON encoding and digests checked against Go."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import pytest

from wavegen.core.model import ConfigSource, Reference, SourceKey, SourceKind
from wavegen.core.wave import (
    WAVE_ENABLE_ANNOTATION,
    WAVE_EXTRA_CONFIGMAPS,
    WAVE_EXTRA_SECRETS,
    WAVE_HASH_ANNOTATION,
    _canonical_bytes,
    go_json_bytes_map,
    go_json_string,
    wave_enabled,
    wave_hash,
    wave_missing_required,
    wave_references,
)

# Digests printed by tests/vectors/wave_vectors/main.go (Go encoding/json + crypto/sha256,
# independent of this Python code). Regenerate with: cd tests/vectors/wave_vectors && go run main.go
GO = {
    "wave_example_deployment": "cbab4ee2980cf9aadf7831202d716e1dfbf0e6f7c2cd2e84d2cd772323320bbb",
    "no_references": "100444e91862dd77d7ebe29f050c1e9a7f357c771e1a7b7650aae27e6a3a031d",
    "html_and_unicode_values": "9f0c2594206257dffb71dfe0360cccc91115da11fd9400715e28480378d4c06a",
    "escaped_names_and_keys": "0dcb8fe580309271f259d93495208a5c418f464cb9f4521802893bb2593fe4d2",
    "binary_secret": "4891e4e62590745c370eca4d8d2b0f5eabc61338c61ab630b15e9416c36fa4ae",
    "configmap_binary_data": "156b6fde75a39b8dd67fb9fa328bbaed5ae63d505d5b7e8553bf046bf6c9d49c",
    "empty_objects": "9b2cb768429a245b28661c10217674ab5595ba052c5fbe11e3e6f597d821e2b1",
    "items_narrowed": "04fa86c2e833a0ec3dd73ac879ff85963017d5385d09aaae92daa351ec5a0b7d",
    "keyref_missing_key": "f7c2544b5ff6c4b7b99746e84508dd92d60138ea49012852c5bc008aec5221b3",
    "extra_configmaps_namespaced": "16b21610d1568c2f0c758b3ea87200904932fa92d2afc878d95059b8e1071023",
}

NS = "default"
TEMPLATE = "spec.template"


def cm(name: str, data: Mapping[str, str] | None = None, binary: Mapping[str, bytes] | None = None, ns: str = NS) -> ConfigSource:
    return ConfigSource(SourceKey("ConfigMap", ns, name), dict(data or {}), dict(binary or {}))


def secret(name: str, data: Mapping[str, bytes] | None = None, ns: str = NS) -> ConfigSource:
    return ConfigSource(SourceKey("Secret", ns, name), {}, dict(data or {}))


def index(*sources: ConfigSource) -> dict[SourceKey, ConfigSource]:
    return {s.key: s for s in sources}


def ref(kind: SourceKind, name: str, keys: set[str] | None = None, ns: str = NS, optional: bool = False) -> Reference:
    return Reference(SourceKey(kind, ns, name), None if keys is None else frozenset(keys), optional, "x")


def env_ref(var: str, kind: str, name: str, key: str, optional: bool | None = None) -> dict[str, Any]:
    sel: dict[str, Any] = {"name": name, "key": key}
    if optional is not None:
        sel["optional"] = optional
    field = "configMapKeyRef" if kind == "ConfigMap" else "secretKeyRef"
    return {"name": var, "valueFrom": {field: sel}}


# ---------------------------------------------------------------- wave's own fixtures


def wave_example_objects() -> dict[SourceKey, ConfigSource]:
    """wave's test/utils/test_objects.go: example1..4 ConfigMaps and Secrets with key1..key3."""
    out: list[ConfigSource] = []
    for n in ("example1", "example2", "example3", "example4"):
        kv = {f"key{i}": f"{n}:key{i}" for i in (1, 2, 3)}
        out.append(cm(n, kv))
        out.append(secret(n, {k: v.encode() for k, v in kv.items()}))  # stringData folded into data
    return index(*out)


WAVE_EXAMPLE_POD_SPEC: dict[str, Any] = {
    "volumes": [
        {"name": "secret1", "secret": {"secretName": "example1"}},
        {"name": "configmap1", "configMap": {"name": "example1"}},
    ],
    "containers": [
        {
            "name": "container1",
            "env": [
                env_ref("example1_key1", "ConfigMap", "example1", "key1"),
                env_ref("example1_key1_new_name", "ConfigMap", "example1", "key1"),
                env_ref("example3_key1", "ConfigMap", "example3", "key1"),
                env_ref("example3_key4", "ConfigMap", "example3", "key4", optional=True),
                env_ref("example4_key1", "ConfigMap", "example4", "key1", optional=True),
                env_ref("example1_secret_key1", "Secret", "example1", "key1"),
                env_ref("example3_secret_key1", "Secret", "example3", "key1"),
                env_ref("example3_secret_key4", "Secret", "example3", "key4", optional=True),
                env_ref("example4_secret_key1", "Secret", "example4", "key1", optional=True),
            ],
            "envFrom": [{"configMapRef": {"name": "example1"}}, {"secretRef": {"name": "example1"}}],
        },
        {
            "name": "container2",
            "env": [
                env_ref("example3_key2", "ConfigMap", "example3", "key2"),
                env_ref("example3_secret_key2", "Secret", "example3", "key2"),
            ],
            "envFrom": [{"configMapRef": {"name": "example2"}}, {"secretRef": {"name": "example2"}}],
        },
    ],
}


def test_annotation_constants() -> None:
    assert WAVE_ENABLE_ANNOTATION == "wave.pusher.com/update-on-config-change"
    assert WAVE_HASH_ANNOTATION == "wave.pusher.com/config-hash"
    assert WAVE_EXTRA_CONFIGMAPS == "wave.pusher.com/extra-configmaps"
    assert WAVE_EXTRA_SECRETS == "wave.pusher.com/extra-secrets"


@pytest.mark.parametrize(
    ("value", "enabled"),
    [("true", True), ("True", False), ("TRUE", False), ("yes", False), ("", False), (None, False)],
)
def test_enable_annotation_needs_exact_true(value: str | None, enabled: bool) -> None:
    annotations = {} if value is None else {WAVE_ENABLE_ANNOTATION: value}
    assert wave_enabled(annotations) is enabled


def test_wave_example_deployment_matches_go() -> None:
    refs = wave_references(WAVE_EXAMPLE_POD_SPEC, {}, NS, TEMPLATE)
    assert wave_hash(refs, wave_example_objects()) == GO["wave_example_deployment"]


def test_wave_example_deployment_discovery() -> None:
    refs = wave_references(WAVE_EXAMPLE_POD_SPEC, {}, NS, TEMPLATE)
    summary = [(r.source.kind, r.source.name, r.keys, r.optional) for r in refs]
    whole: frozenset[str] | None = None
    assert summary[:6] == [
        ("Secret", "example1", whole, False),
        ("ConfigMap", "example1", whole, False),
        ("ConfigMap", "example1", whole, False),
        ("Secret", "example1", whole, False),
        ("ConfigMap", "example2", whole, False),
        ("Secret", "example2", whole, False),
    ]
    assert ("ConfigMap", "example3", frozenset({"key4"}), True) in summary
    assert ("Secret", "example4", frozenset({"key1"}), True) in summary
    assert len(refs) == 17
    assert refs[0].field == "spec.template.spec.volumes[0].secret"
    assert refs[2].field == "spec.template.spec.containers[0].envFrom[0].configMapRef"
    assert refs[6].field == "spec.template.spec.containers[0].env[0].valueFrom.configMapKeyRef"
    # The optional key4 is missing from example3 but only required refs block wave.
    assert wave_missing_required(refs, wave_example_objects()) == []


def test_wave_example_canonical_json() -> None:
    refs = wave_references(WAVE_EXAMPLE_POD_SPEC, {}, NS, TEMPLATE)
    text = _canonical_bytes(refs, wave_example_objects()).decode()
    # example3 is seen through key1 and key2 only (key4 is absent), example4 through key1.
    assert '"example3":{"key1":"ZXhhbXBsZTM6a2V5MQ==","key2":"ZXhhbXBsZTM6a2V5Mg=="}' in text
    assert '"example4":{"key1":"ZXhhbXBsZTQ6a2V5MQ=="}' in text
    assert text.startswith('{"configMaps":{"example1":{"key1":')
    assert '},"secrets":{"example1":' in text


# ---------------------------------------------------------------- behaviours from wave's hash_test.go


def test_changing_referenced_key_changes_hash() -> None:
    refs = [ref("ConfigMap", "example1", {"key1"}), ref("Secret", "example1", {"key1"})]
    objs = wave_example_objects()
    before = wave_hash(refs, objs)
    objs[SourceKey("ConfigMap", NS, "example1")] = cm("example1", {"key1": "modified", "key2": "x", "key3": "y"})
    assert wave_hash(refs, objs) != before


def test_changing_unreferenced_key_keeps_hash() -> None:
    refs = [ref("ConfigMap", "example1", {"key1"}), ref("Secret", "example1", {"key1"})]
    objs = wave_example_objects()
    before = wave_hash(refs, objs)
    objs[SourceKey("ConfigMap", NS, "example1")] = cm(
        "example1", {"key1": "example1:key1", "key2": "example1:key2", "key3": "modified"}
    )
    objs[SourceKey("Secret", NS, "example1")] = secret(
        "example1", {"key1": b"example1:key1", "key2": b"example1:key2", "key3": b"modified"}
    )
    assert wave_hash(refs, objs) == before


def test_metadata_does_not_count() -> None:
    refs = [ref("Secret", "example1")]
    objs = wave_example_objects()
    before = wave_hash(refs, objs)
    s = objs[SourceKey("Secret", NS, "example1")]
    objs[s.key] = ConfigSource(s.key, s.text_data, s.binary_data, annotations={"new": "annotations"})
    assert wave_hash(refs, objs) == before


def test_reference_order_does_not_matter_without_name_clash() -> None:
    refs = [
        ref("ConfigMap", "example1"),
        ref("ConfigMap", "example3", {"key1", "key2"}),
        ref("Secret", "example2"),
        ref("Secret", "example3", {"key2", "key1"}),
    ]
    objs = wave_example_objects()
    assert wave_hash(refs, objs) == wave_hash(list(reversed(refs)), objs)


def test_whole_and_keyed_references_merge_to_union() -> None:
    objs = wave_example_objects()
    keyed_then_whole = [ref("ConfigMap", "example1", {"key1"}), ref("ConfigMap", "example1")]
    whole_only = [ref("ConfigMap", "example1")]
    assert wave_hash(keyed_then_whole, objs) == wave_hash(whole_only, objs)
    two_keyed = [ref("ConfigMap", "example1", {"key1"}), ref("ConfigMap", "example1", {"key2"})]
    one_keyed = [ref("ConfigMap", "example1", {"key1", "key2"})]
    assert wave_hash(two_keyed, objs) == wave_hash(one_keyed, objs)


# ---------------------------------------------------------------- Go-checked vectors


def test_no_references() -> None:
    assert wave_hash([], {}) == GO["no_references"]
    assert _canonical_bytes([], {}) == b'{"configMaps":{},"secrets":{}}'
    assert wave_hash([], {}) == hashlib.sha256(b'{"configMaps":{},"secrets":{}}').hexdigest()


def test_html_and_unicode_values() -> None:
    objs = index(cm("web", {"index.html": '<a href="/x?a=1&b=2">caf\u00e9 \u2028 \u2713</a>\n'}))
    assert wave_hash([ref("ConfigMap", "web")], objs) == GO["html_and_unicode_values"]


def test_escaped_names_and_keys() -> None:
    data = {"k\u2028\u2029": "v", "tab\tnl\nbs\bff\f\x01\x7f": "w", "\u00e9\u00e8": "x", "<": "y", "Z": "z"}
    objs = index(cm("we<ird>&", data))
    assert wave_hash([ref("ConfigMap", "we<ird>&")], objs) == GO["escaped_names_and_keys"]


def test_binary_secret() -> None:
    objs = index(secret("tls", {"blob": bytes(range(256)), "empty": b""}))
    assert wave_hash([ref("Secret", "tls")], objs) == GO["binary_secret"]


def test_configmap_binary_data_counts() -> None:
    objs = index(cm("mixed", {"conf": "a=1"}, {"logo.png": b"\x89PNG\x00\xff"}))
    assert wave_hash([ref("ConfigMap", "mixed")], objs) == GO["configmap_binary_data"]
    # and narrowing by key reaches binaryData keys too
    narrowed = wave_hash([ref("ConfigMap", "mixed", {"logo.png"})], objs)
    changed = index(cm("mixed", {"conf": "a=1"}, {"logo.png": b"\x89PNG\x00\xfe"}))
    assert wave_hash([ref("ConfigMap", "mixed", {"logo.png"})], changed) != narrowed


def test_empty_objects_are_empty_maps_not_null() -> None:
    objs = index(cm("nothing"), secret("nothing"))
    refs = [ref("ConfigMap", "nothing"), ref("Secret", "nothing")]
    assert _canonical_bytes(refs, objs) == b'{"configMaps":{"nothing":{}},"secrets":{"nothing":{}}}'
    assert wave_hash(refs, objs) == GO["empty_objects"]


def _projected_pod(items: list[dict[str, str]] | None) -> dict[str, Any]:
    source: dict[str, Any] = {"name": "app"}
    if items is not None:
        source["items"] = items
    return {"volumes": [{"name": "p", "projected": {"sources": [{"configMap": source}]}}], "containers": [{"name": "c"}]}


def test_projected_items_narrow_keys() -> None:
    pod = _projected_pod([{"key": "key1", "path": "one.txt"}])
    refs = wave_references(pod, {}, NS, TEMPLATE)
    assert [(r.source, r.keys) for r in refs] == [(SourceKey("ConfigMap", NS, "app"), frozenset({"key1"}))]
    assert refs[0].field == "spec.template.spec.volumes[0].projected.sources[0].configMap"
    h1 = wave_hash(refs, index(cm("app", {"key1": "one", "key2": "two"})))
    h2 = wave_hash(refs, index(cm("app", {"key1": "one", "key2": "TWO"})))
    assert h1 == h2 == GO["items_narrowed"]


def test_projected_empty_items_means_all_keys() -> None:
    refs = wave_references(_projected_pod([]), {}, NS, TEMPLATE)
    assert refs[0].keys is None


def test_plain_volume_items_are_ignored_by_wave() -> None:
    pod = {
        "volumes": [
            {"name": "a", "configMap": {"name": "app", "items": [{"key": "key1", "path": "k"}]}},
            {"name": "b", "secret": {"secretName": "s", "items": [{"key": "key1", "path": "k"}], "optional": True}},
        ]
    }
    refs = wave_references(pod, {}, NS, TEMPLATE)
    assert [(r.source.kind, r.keys, r.optional) for r in refs] == [("ConfigMap", None, False), ("Secret", None, True)]


def test_projected_secret_uses_name_and_optional() -> None:
    pod = {
        "volumes": [
            {
                "name": "p",
                "projected": {
                    "sources": [
                        {"secret": {"name": "tls", "optional": True, "items": [{"key": "tls.crt", "path": "c"}]}},
                        {"serviceAccountToken": {"path": "token"}},
                    ]
                },
            }
        ]
    }
    refs = wave_references(pod, {}, NS, TEMPLATE)
    assert refs == [
        Reference(
            SourceKey("Secret", NS, "tls"),
            frozenset({"tls.crt"}),
            True,
            "spec.template.spec.volumes[0].projected.sources[0].secret",
        )
    ]


def test_keyref_to_missing_key() -> None:
    pod = {"containers": [{"name": "c", "env": [env_ref("PW", "Secret", "creds", "password")]}]}
    refs = wave_references(pod, {}, NS, TEMPLATE)
    objs = index(secret("creds", {"user": b"admin"}))
    assert _canonical_bytes(refs, objs) == b'{"configMaps":{},"secrets":{"creds":{}}}'
    assert wave_hash(refs, objs) == GO["keyref_missing_key"]
    # A required key that is absent stops wave from writing any hash.
    assert wave_missing_required(refs, objs) == ["missing required key password in secret default/creds"]


def test_missing_objects_are_skipped_and_reported_when_required() -> None:
    refs = [ref("ConfigMap", "gone"), ref("Secret", "maybe", optional=True)]
    assert wave_hash(refs, {}) == GO["no_references"]
    assert wave_missing_required(refs, {}) == ["missing required configmap default/gone"]


def test_extra_configmaps_with_namespace() -> None:
    pod = {"volumes": [{"name": "v", "configMap": {"name": "shared"}}], "containers": [{"name": "c"}]}
    annotations = {WAVE_EXTRA_CONFIGMAPS: "other/shared,local"}
    refs = wave_references(pod, annotations, NS, TEMPLATE)
    assert [(r.source, r.keys, r.optional) for r in refs] == [
        (SourceKey("ConfigMap", NS, "shared"), None, False),
        (SourceKey("ConfigMap", "other", "shared"), None, True),
        (SourceKey("ConfigMap", NS, "local"), None, True),
    ]
    assert refs[1].field == "metadata.annotations[wave.pusher.com/extra-configmaps]"
    objs = index(
        cm("shared", {"a": "from-other", "b": "only-other"}, ns="other"),
        cm("shared", {"a": "from-default", "c": "only-default"}),
        cm("local", {"x": "1"}),
    )
    assert wave_hash(refs, objs) == GO["extra_configmaps_namespaced"]
    # Same-named objects from two namespaces merge into one entry; the later reference wins.
    text = _canonical_bytes(refs, objs).decode()
    assert '"shared":{"a":"ZnJvbS1vdGhlcg==","b":"b25seS1vdGhlcg==","c":"b25seS1kZWZhdWx0"}' in text


def test_extra_secrets_parsing_is_verbatim() -> None:
    annotations = {WAVE_EXTRA_SECRETS: "a, b,ns/c,x/y/z,,"}
    refs = wave_references({}, annotations, "team", TEMPLATE)
    # No whitespace trimming; "x/y/z" (three parts) is dropped; empty entries stay (and never match).
    assert [(r.source.kind, r.source.namespace, r.source.name) for r in refs] == [
        ("Secret", "team", "a"),
        ("Secret", "team", " b"),
        ("Secret", "ns", "c"),
        ("Secret", "team", ""),
        ("Secret", "team", ""),
    ]
    assert all(r.optional and r.keys is None for r in refs)


def test_init_containers_are_not_scanned() -> None:
    pod = {
        "initContainers": [
            {"name": "i", "envFrom": [{"configMapRef": {"name": "init-cm"}}], "env": [env_ref("K", "Secret", "init-s", "k")]}
        ],
        "containers": [{"name": "c"}],
    }
    assert wave_references(pod, {}, NS, TEMPLATE) == []


def test_env_from_and_env_optional_flags() -> None:
    pod = {
        "containers": [
            {
                "name": "c",
                "envFrom": [
                    {"configMapRef": {"name": "a", "optional": True}},
                    {"secretRef": {"name": "b", "optional": False}, "prefix": "P_"},
                ],
                "env": [{"name": "PLAIN", "value": "x"}, env_ref("K", "ConfigMap", "c", "k", optional=False)],
            }
        ]
    }
    refs = wave_references(pod, {}, NS, TEMPLATE)
    assert [(r.source.name, r.keys, r.optional) for r in refs] == [
        ("a", None, True),
        ("b", None, False),
        ("c", frozenset({"k"}), False),
    ]


# ---------------------------------------------------------------- Go encoding/json details


@pytest.mark.parametrize(
    ("raw", "encoded"),
    [
        # Expected strings printed by Go's json.Marshal (go1.26.8).
        ("plain", '"plain"'),
        ('<a href="x">&</a>', '"\\u003ca href=\\"x\\"\\u003e\\u0026\\u003c/a\\u003e"'),
        ("caf\u00e9 \u2028\u2029 \u2713 \U0001f600", '"caf\u00e9 \\u2028\\u2029 \u2713 \U0001f600"'),
        ("\x00\x01\x1f\x7f\b\f\n\r\t\\/", '"\\u0000\\u0001\\u001f\x7f\\b\\f\\n\\r\\t\\\\/"'),
        (b"bad\xff\xfeutf8".decode("utf-8", "surrogateescape"), '"bad\\ufffd\\ufffdutf8"'),
    ],
)
def test_go_json_string(raw: str, encoded: str) -> None:
    assert go_json_string(raw) == encoded


def test_go_json_bytes_map_sorts_by_utf8_bytes() -> None:
    data = {"b": b"", "a": b"\x00", "\u00e9": b"x", "Z": b"\xff\xff"}
    assert go_json_bytes_map(data) == '{"Z":"//8=","a":"AA==","b":"","\u00e9":"eA=="}'


def test_field_prefix_accepts_template_or_spec_path() -> None:
    pod = {"volumes": [{"name": "v", "configMap": {"name": "a"}}]}
    by_template = wave_references(pod, {}, NS, "spec.jobTemplate.spec.template")
    by_spec = wave_references(pod, {}, NS, "spec.jobTemplate.spec.template.spec")
    assert by_template[0].field == by_spec[0].field == "spec.jobTemplate.spec.template.spec.volumes[0].configMap"
