"""Unit tests for wavegen.core.diff: comparing two plans into a restart plan."""

from __future__ import annotations

import base64
import textwrap
from typing import Any

import pytest
import yaml

from wavegen.core.diff import (
    KeyDelta,
    RestartPlan,
    configmap_value_diff,
    key_delta,
    restart_plan,
    template_fingerprints,
)
from wavegen.core.plan import KubeObject, Options, plan


def _objects(text: str) -> list[KubeObject]:
    docs = [d for d in yaml.safe_load_all(textwrap.dedent(text)) if d]
    return [KubeObject(i, d) for i, d in enumerate(docs)]


def compare(base: str, head: str, options: Options | None = None) -> RestartPlan:
    options = options or Options()
    base_objects, head_objects = _objects(base), _objects(head)
    base_plan, head_plan = plan(base_objects, options), plan(head_objects, options)
    return restart_plan(
        base_plan,
        head_plan,
        profile=options.profile,
        base_templates=template_fingerprints(base_objects, base_plan, options.owned_annotations),
        head_templates=template_fingerprints(head_objects, head_plan, options.owned_annotations),
    )


def configmap(name: str, data: dict[str, str], namespace: str = "default", annotations: dict[str, str] | None = None) -> str:
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if annotations:
        meta["annotations"] = annotations
    return "---\n" + yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data})


def secret(name: str, data: dict[str, bytes]) -> str:
    encoded = {k: base64.b64encode(v).decode() for k, v in data.items()}
    return "---\n" + yaml.safe_dump({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}, "data": encoded})


def deployment(
    name: str,
    pod_spec: dict[str, Any],
    namespace: str = "default",
    annotations: dict[str, str] | None = None,
    kind: str = "Deployment",
) -> str:
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if annotations:
        meta["annotations"] = annotations
    api = "batch/v1" if kind == "Job" else "apps/v1"
    pod = {"containers": [{"name": "c", "image": "i:1"}], **pod_spec}
    spec = {"template": {"metadata": {"labels": {"app": name}}, "spec": pod}}
    return "---\n" + yaml.safe_dump({"apiVersion": api, "kind": kind, "metadata": meta, "spec": spec})


def env_from(name: str, optional: bool = False, kind: str = "configMapRef") -> dict[str, Any]:
    ref: dict[str, Any] = {"name": name}
    if optional:
        ref["optional"] = True
    return {"containers": [{"name": "c", "image": "i:1", "envFrom": [{kind: ref}]}]}


def env_froms(*names: str, optional: tuple[str, ...] = ()) -> dict[str, Any]:
    refs = [{"configMapRef": {"name": n, **({"optional": True} if n in optional else {})}} for n in names]
    return {"containers": [{"name": "c", "image": "i", "envFrom": refs}]}


def volume(name: str, items: list[str] | None = None) -> dict[str, Any]:
    cm: dict[str, Any] = {"name": name}
    if items:
        cm["items"] = [{"key": k, "path": k} for k in items]
    return {"volumes": [{"name": "v", "configMap": cm}]}


def test_key_delta_compares_stored_bytes() -> None:
    assert key_delta({"a": b"1", "b": b"2"}, {"a": b"1", "b": b"3", "c": b"4"}) == KeyDelta(("c",), (), ("b",))
    assert not key_delta({"a": b"1"}, {"a": b"1"})


def test_changed_key_rolls_with_key_names() -> None:
    result = compare(
        configmap("cfg", {"A": "1", "B": "2"}) + deployment("api", env_from("cfg")),
        configmap("cfg", {"A": "9", "C": "3"}) + deployment("api", env_from("cfg")),
    )
    assert [c.display for c in result.rolling] == ["Deployment/default/api"]
    (cause,) = result.rolling[0].causes
    assert cause.change == "changed"
    assert cause.keys == KeyDelta(added=("C",), removed=("B",), changed=("A",))
    assert result.would_roll


def test_data_moved_to_binary_data_with_same_bytes_is_no_change() -> None:
    same = base64.b64encode(b"hello").decode()
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"}, "binaryData": {"k": same}}
    head = "---\n" + yaml.safe_dump(body) + deployment("api", env_from("cfg"))
    result = compare(configmap("cfg", {"k": "hello"}) + deployment("api", env_from("cfg")), head)
    assert result.empty


def test_items_hide_a_changed_key() -> None:
    base = configmap("cfg", {"a": "1", "b": "2"}) + deployment("narrow", volume("cfg", ["a"])) + deployment("wide", volume("cfg"))
    head = configmap("cfg", {"a": "1", "b": "3"}) + deployment("narrow", volume("cfg", ["a"])) + deployment("wide", volume("cfg"))
    result = compare(base, head)
    assert [c.name for c in result.rolling] == ["wide"]
    (held,) = result.not_rolling
    assert held.name == "narrow"
    assert held.causes[0].change == "unseen"
    assert held.causes[0].unseen == ("b",)
    assert "not visible" in held.reason


def test_items_hide_a_key_but_wave_profile_sees_whole_volume() -> None:
    # wave ignores `items` on configMap volumes: the same change rolls the narrow workload too.
    base = configmap("cfg", {"a": "1", "b": "2"}) + deployment("narrow", volume("cfg", ["a"]))
    head = configmap("cfg", {"a": "1", "b": "3"}) + deployment("narrow", volume("cfg", ["a"]))
    result = compare(base, head, Options(profile="wave"))
    assert [c.name for c in result.rolling] == ["narrow"]


def test_env_key_ref_hides_other_keys() -> None:
    env = [{"name": "X", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "x"}}}]
    spec = {"containers": [{"name": "c", "image": "i", "env": env}]}
    result = compare(
        configmap("cfg", {"x": "1", "y": "1"}) + deployment("app", spec),
        configmap("cfg", {"x": "1", "y": "2"}) + deployment("app", spec),
    )
    assert not result.rolling
    assert result.not_rolling[0].causes[0].unseen == ("y",)


def test_rename_through_the_same_field_is_one_renamed_cause() -> None:
    result = compare(
        configmap("cfg-abc", {"a": "1"}) + deployment("app", volume("cfg-abc")),
        configmap("cfg-def", {"a": "1"}) + deployment("app", volume("cfg-def")),
    )
    (change,) = result.rolling
    (cause,) = change.causes
    assert cause.change == "renamed"
    assert (cause.previous and cause.previous.name, cause.source.name) == ("cfg-abc", "cfg-def")
    assert not cause.keys  # same data: the hash changes because the name is part of it
    assert not change.template_changed  # the new name is config, not a template change


def test_ambiguous_references_are_not_guessed_as_renames() -> None:
    base_spec = env_froms("a", "b")
    head_spec = env_froms("d", "c")
    result = compare(
        configmap("a", {"k": "1"}) + configmap("b", {"k": "1"}) + deployment("app", base_spec),
        configmap("c", {"k": "1"}) + configmap("d", {"k": "1"}) + deployment("app", head_spec),
    )
    changes = sorted((c.change, c.previous.name if c.previous else None, c.source.name) for c in result.rolling[0].causes)
    # Field envFrom[0] named a, now d; envFrom[1] named b, now c: paired by place in the pod spec.
    assert changes == [("renamed", "a", "d"), ("renamed", "b", "c")]


def test_unrelated_new_and_dropped_references() -> None:
    base = configmap("a", {"k": "1"}) + secret("s", {"k": b"x"}) + deployment("app", env_from("a"))
    head = configmap("a", {"k": "1"}) + secret("s", {"k": b"x"}) + deployment("app", env_from("s", kind="secretRef"))
    causes = sorted((c.change, c.source.kind) for c in compare(base, head).rolling[0].causes)
    assert causes == [("referenced", "Secret"), ("unreferenced", "ConfigMap")]


def test_namespace_move_of_workload_and_configmap() -> None:
    base = configmap("cfg", {"a": "1"}, "old") + deployment("app", env_from("cfg"), "old")
    head = configmap("cfg", {"a": "2"}, "new") + deployment("app", env_from("cfg"), "new")
    result = compare(base, head)
    assert not result.added and not result.removed and not result.rolling
    (moved,) = result.moved
    assert (moved.previous_namespace, moved.namespace) == ("old", "new")
    (cause,) = moved.causes
    assert cause.change == "moved" and cause.keys.changed == ("a",)


def test_optional_reference_appears_and_vanishes() -> None:
    without = configmap("base", {"a": "1"}) + deployment("app", env_froms("base", "flags", optional=("flags",)))
    with_flags = without + configmap("flags", {"on": "yes"})
    appeared = compare(without, with_flags)
    (cause,) = appeared.rolling[0].causes
    assert (cause.change, cause.state_before, cause.state_after) == ("appeared", "optional-absent", "present")
    assert cause.keys.added == ("on",)
    vanished = compare(with_flags, without)
    (cause,) = vanished.rolling[0].causes
    assert (cause.change, cause.state_after) == ("vanished", "optional-absent")


def test_ignored_configmap_change_does_not_roll() -> None:
    ignore = {"wavegen.io/ignore": "true"}
    base = (
        configmap("cfg", {"a": "1"})
        + configmap("noisy", {"t": "1"}, annotations=ignore)
        + deployment("app", env_froms("cfg", "noisy"))
    )
    head = base.replace("t: '1'", "t: '2'")
    assert head != base
    result = compare(base, head)
    assert not result.rolling
    (held,) = result.not_rolling
    assert held.causes[0].change == "ignored" and held.causes[0].unseen == ("t",)
    assert "wavegen.io/ignore" in held.reason


def test_job_referencing_changed_config_does_not_roll() -> None:
    result = compare(
        configmap("cfg", {"a": "1"}) + deployment("once", env_from("cfg"), kind="Job"),
        configmap("cfg", {"a": "2"}) + deployment("once", env_from("cfg"), kind="Job"),
    )
    assert not result.rolling
    assert "Job" in result.not_rolling[0].reason


def test_opting_in_rolls_without_a_config_cause() -> None:
    options = Options(opt_in=True)
    base = configmap("cfg", {"a": "1"}) + deployment("app", env_from("cfg"))
    head = configmap("cfg", {"a": "1"}) + deployment("app", env_from("cfg"), annotations={"wavegen.io/enabled": "true"})
    (change,) = compare(base, head, options).rolling
    assert (change.status_before, change.status_after, change.causes) == ("not-opted-in", "annotated", ())


def test_not_opted_in_workload_with_changed_config_is_reported_not_rolling() -> None:
    options = Options(opt_in=True)
    result = compare(
        configmap("cfg", {"a": "1"}) + deployment("app", env_from("cfg")),
        configmap("cfg", {"a": "2"}) + deployment("app", env_from("cfg")),
        options,
    )
    assert not result.rolling
    assert "--opt-in" in result.not_rolling[0].reason


def test_added_and_removed_workloads() -> None:
    result = compare(
        configmap("cfg", {"a": "1"}) + deployment("old", env_from("cfg")),
        configmap("cfg", {"a": "1"}) + deployment("new", env_from("cfg")),
    )
    assert [w.name for w in result.added] == ["new"] and [w.name for w in result.removed] == ["old"]
    assert result.added[0].sources[0].name == "cfg"
    assert not result.would_roll


def test_template_change_rolls_but_existing_hash_annotation_does_not() -> None:
    base = configmap("cfg", {"a": "1"}) + deployment("app", env_from("cfg"))
    image = compare(base, base.replace("image: i:1", "image: i:2"))
    assert image.rolling[0].template_changed and not image.rolling[0].causes
    # The head bundle already went through `wavegen transform`: its hash annotation is no change.
    options = Options()
    objects = _objects(base)
    desired = plan(objects, options).workloads[0].templates[0].desired
    annotated = base.replace(
        "labels:\n        app: app\n",
        f"labels:\n        app: app\n      annotations:\n        wavegen.io/config-hash: {desired['wavegen.io/config-hash']}\n",
    )
    assert annotated != base
    assert compare(base, annotated).empty


def test_no_change_is_empty() -> None:
    bundle = configmap("cfg", {"a": "1"}) + secret("s", {"p": b"x"}) + deployment("app", env_from("cfg"))
    result = compare(bundle, bundle)
    assert result.empty and not result.would_roll


def test_source_deltas_list_every_changed_object_with_its_users() -> None:
    result = compare(
        configmap("cfg", {"a": "1"}) + configmap("orphan", {"x": "1"}) + deployment("app", env_from("cfg")),
        configmap("cfg", {"a": "2"}) + deployment("app", env_from("cfg")),
    )
    by_name = {s.key.name: s for s in result.sources}
    assert by_name["cfg"].change == "changed" and by_name["cfg"].referenced_by == (("Deployment", "default", "app"),)
    assert by_name["orphan"].change == "removed" and by_name["orphan"].referenced_by == ()


def test_value_diff_is_for_configmaps_only() -> None:
    options = Options()
    old = plan(_objects(configmap("cfg", {"conf": "a\nb\n"}) + secret("s", {"p": b"hunter2"})), options).sources
    new = plan(_objects(configmap("cfg", {"conf": "a\nc\n"})), options).sources
    (cm_old,) = [s for k, s in old.items() if k.kind == "ConfigMap"]
    (cm_new,) = new.values()
    text = configmap_value_diff(cm_old, cm_new)
    assert "-b\n" in text and "+c\n" in text
    (sec,) = [s for k, s in old.items() if k.kind == "Secret"]
    with pytest.raises(ValueError):
        configmap_value_diff(sec, None)


def test_value_diff_summarises_binary_values() -> None:
    options = Options()
    blob = base64.b64encode(b"\x00\x01").decode()
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b"}, "binaryData": {"blob": blob}}
    old = plan([KubeObject(0, body)], options).sources
    body2 = {**body, "binaryData": {"blob": base64.b64encode(b"\x00\x02\x03").decode()}}
    new = plan([KubeObject(0, body2)], options).sources
    text = configmap_value_diff(next(iter(old.values())), next(iter(new.values())))
    assert text == "binary value of key 'blob' changed (2 bytes → 3 bytes)\n"
