"""Watch-mode decisions (wavegen.core.live): coverage contract, adopt/roll/hold/clear, restart safety."""

from __future__ import annotations

import copy
from typing import Any

from wavegen.core.hashing import KeyDigests, config_hash, key_digests
from wavegen.core.live import (
    LIVE_HASH_ANNOTATION,
    LIVE_MISSING_ANNOTATION,
    LIVE_REFS_ANNOTATION,
    MissingItem,
    format_missing,
    format_ref_list,
    live_decision,
    parse_missing,
    parse_ref_list,
    uncovered_references,
)
from wavegen.core.model import ConfigSource, SourceKey
from wavegen.core.plan import HASH_ANNOTATION, UNHASHED_ANNOTATION, KubeObject, Options, plan
from wavegen.core.podtemplate import ENABLED_ANNOTATION
from wavegen.core.sources import config_source

OPTS = Options(opt_in=True, missing="ignore")


def deployment(
    *, template_annotations: dict[str, str] | None = None, annotations: dict[str, str] | None = None
) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "namespace": "prod",
            "resourceVersion": "7",
            "annotations": {ENABLED_ANNOTATION: "true", **(annotations or {})},
        },
        "spec": {
            "template": {
                "metadata": {"annotations": dict(template_annotations or {})},
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "envFrom": [{"configMapRef": {"name": "bundled"}}, {"secretRef": {"name": "external"}}],
                            "env": [{"name": "X", "valueFrom": {"configMapKeyRef": {"name": "late", "key": "k"}}}],
                        }
                    ]
                },
            }
        },
    }


def cm(name: str, data: dict[str, str], ns: str = "prod") -> ConfigSource:
    return config_source("ConfigMap", ns, name, {"data": data})


def secret(name: str, data: dict[str, str], ns: str = "prod") -> ConfigSource:
    return config_source("Secret", ns, name, {"stringData": data})


def sources(*items: ConfigSource) -> dict[SourceKey, KeyDigests]:
    """What the controller keeps of live sources: per-key digests only."""
    return {s.key: key_digests(s) for s in items}


def with_record(body: dict[str, Any], value: str, refs: str) -> dict[str, Any]:
    out = copy.deepcopy(body)
    out["metadata"]["annotations"].update({LIVE_HASH_ANNOTATION: value, LIVE_REFS_ANNOTATION: refs})
    return out


def test_ref_list_round_trip() -> None:
    keys = parse_ref_list("Secret/external, ConfigMap/other/shared,bogus,ConfigMap/", "prod")
    assert keys == {SourceKey("Secret", "prod", "external"), SourceKey("ConfigMap", "other", "shared")}
    assert format_ref_list(set(keys), "prod") == "ConfigMap/other/shared,Secret/external"


def test_fully_covered_bundle_needs_nothing() -> None:
    body = deployment(template_annotations={HASH_ANNOTATION: "abc"})
    _, templates = uncovered_references(body, OPTS)
    assert templates == [(("spec", "template"), [])]
    assert live_decision(body, sources(), OPTS).action == "none"


def test_no_bundle_hash_means_nothing_is_covered() -> None:
    _, templates = uncovered_references(deployment(), OPTS)
    assert {r.source.name for r in templates[0][1]} == {"bundled", "external", "late"}


def test_transformer_output_feeds_the_contract() -> None:
    # The transformer's own unhashed-refs (from the same core) is what the controller reads back.
    bundle_cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "bundled", "namespace": "prod"},
        "data": {"a": "1"},
    }
    result = plan([KubeObject(1, deployment()), KubeObject(2, bundle_cm)], OPTS)
    desired = result.workloads[0].templates[0].desired
    assert desired[UNHASHED_ANNOTATION] == "ConfigMap/late,Secret/external"
    body = deployment(template_annotations={k: v for k, v in desired.items() if v is not None})
    _, templates = uncovered_references(body, OPTS)
    assert {r.source.name for r in templates[0][1]} == {"external", "late"}


def test_not_opted_in_is_skipped_and_all_workloads_handles_it() -> None:
    body = deployment()
    del body["metadata"]["annotations"][ENABLED_ANNOTATION]
    assert live_decision(body, sources(), OPTS).action == "skip"
    assert live_decision(body, sources(), Options(opt_in=False)).action == "adopt"


def test_first_sight_adopts_on_metadata_only() -> None:
    body = deployment(template_annotations={HASH_ANNOTATION: "abc", UNHASHED_ANNOTATION: "Secret/external"})
    src = sources(secret("external", {"p": "s3cret"}))
    decision = live_decision(body, src, OPTS)
    assert decision.action == "adopt"
    assert decision.patch == {
        "metadata": {
            "annotations": {
                LIVE_HASH_ANNOTATION: decision.value,
                LIVE_REFS_ANNOTATION: "Secret/external",
                LIVE_MISSING_ANNOTATION: None,
            }
        }
    }
    # Same core hash over exactly the uncovered source, computed offline from its values.
    assert decision.value == config_hash([(secret("external", {"p": "s3cret"}), None)])
    assert "s3cret" not in repr(decision)


def test_restart_with_unchanged_state_writes_nothing_then_change_rolls_once() -> None:
    body = deployment(template_annotations={HASH_ANNOTATION: "abc", UNHASHED_ANNOTATION: "Secret/external"})
    before = sources(secret("external", {"p": "one"}))
    adopted = live_decision(body, before, OPTS)
    recorded = with_record(body, adopted.value or "", adopted.refs)
    assert live_decision(recorded, before, OPTS).action == "none"
    after = sources(secret("external", {"p": "two"}))
    roll = live_decision(recorded, after, OPTS)
    assert roll.action == "roll"
    assert roll.patch is not None
    assert roll.patch["spec"]["template"]["metadata"]["annotations"] == {LIVE_HASH_ANNOTATION: roll.value}
    assert roll.patch["metadata"]["annotations"][LIVE_HASH_ANNOTATION] == roll.value
    # The bundle's annotations are never part of the controller's patch.
    assert HASH_ANNOTATION not in str(roll.patch)
    rolled = with_record(body, roll.value or "", roll.refs)
    rolled["spec"]["template"]["metadata"]["annotations"][LIVE_HASH_ANNOTATION] = roll.value
    assert live_decision(rolled, after, OPTS).action == "none"


def test_change_to_covered_source_is_left_to_the_bundle() -> None:
    body = with_record(
        deployment(template_annotations={HASH_ANNOTATION: "abc", UNHASHED_ANNOTATION: "Secret/external"}), "x", "Secret/external"
    )
    ext = secret("external", {"p": "one"})
    value = live_decision(body, sources(ext), OPTS).value or ""
    body = with_record(body, value, "Secret/external")
    assert live_decision(body, sources(ext, cm("bundled", {"a": "1"})), OPTS).action == "none"
    assert live_decision(body, sources(ext, cm("bundled", {"a": "2"})), OPTS).action == "none"


def test_only_visible_keys_count() -> None:
    body = deployment(template_annotations={HASH_ANNOTATION: "abc", UNHASHED_ANNOTATION: "ConfigMap/late"})
    first = live_decision(body, sources(cm("late", {"k": "1", "other": "x"})), OPTS)
    recorded = with_record(body, first.value or "", first.refs)
    assert live_decision(recorded, sources(cm("late", {"k": "1", "other": "changed"})), OPTS).action == "none"
    assert live_decision(recorded, sources(cm("late", {"k": "2", "other": "x"})), OPTS).action == "roll"


def with_decision(body: dict[str, Any], decision: Any) -> dict[str, Any]:
    """The workload as it reads after the decision's metadata patch (a merge patch: None deletes)."""
    out = copy.deepcopy(body)
    assert decision.patch is not None
    for k, v in decision.patch["metadata"]["annotations"].items():
        if v is None:
            out["metadata"]["annotations"].pop(k, None)
        else:
            out["metadata"]["annotations"][k] = v
    return out


def test_config_missing_at_adoption_is_recorded_and_its_arrival_does_not_roll() -> None:
    body = deployment(template_annotations={HASH_ANNOTATION: "abc", UNHASHED_ANNOTATION: "ConfigMap/late"})
    adopted = live_decision(body, sources(), OPTS)
    assert adopted.action == "adopt"
    assert adopted.missing == (MissingItem(SourceKey("ConfigMap", "prod", "late")),)
    assert adopted.patch is not None and "spec" not in adopted.patch
    recorded = with_decision(body, adopted)
    assert recorded["metadata"]["annotations"][LIVE_MISSING_ANNOTATION] == "ConfigMap/late"
    assert live_decision(recorded, sources(), OPTS).action == "hold"
    # It appears: the pods could not start without it and will read it now: re-adopt, no rollout.
    arrived = live_decision(recorded, sources(cm("late", {"k": "v"})), OPTS)
    assert arrived.action == "adopt" and arrived.patch is not None and "spec" not in arrived.patch
    assert arrived.patch["metadata"]["annotations"][LIVE_MISSING_ANNOTATION] is None
    settled = with_decision(recorded, arrived)
    assert live_decision(settled, sources(cm("late", {"k": "v"})), OPTS).action == "none"
    # A later real change rolls.
    assert live_decision(settled, sources(cm("late", {"k": "v2"})), OPTS).action == "roll"
    # Deleted after it existed: hold; recreated, it is compared with the record.
    assert live_decision(settled, sources(), OPTS).action == "hold"
    assert live_decision(settled, sources(cm("late", {"k": "v"})), OPTS).action == "none"
    assert live_decision(settled, sources(cm("late", {"k": "other"})), OPTS).action == "roll"


def test_missing_key_holds_and_its_arrival_does_not_roll() -> None:
    body = deployment(template_annotations={HASH_ANNOTATION: "abc", UNHASHED_ANNOTATION: "ConfigMap/late"})
    adopted = live_decision(body, sources(cm("late", {"other": "x"})), OPTS)
    assert adopted.action == "adopt"
    assert adopted.missing == (MissingItem(SourceKey("ConfigMap", "prod", "late"), "k"),)
    recorded = with_decision(body, adopted)
    assert recorded["metadata"]["annotations"][LIVE_MISSING_ANNOTATION] == "ConfigMap/late:k"
    held = live_decision(recorded, sources(cm("late", {"other": "y"})), OPTS)
    assert held.action == "hold" and held.patch is None
    arrived = live_decision(recorded, sources(cm("late", {"other": "y", "k": "v"})), OPTS)
    assert arrived.action == "adopt" and arrived.patch is not None and "spec" not in arrived.patch
    settled = with_decision(recorded, arrived)
    # The key disappears after it existed: hold, never roll to pods that cannot start.
    assert live_decision(settled, sources(cm("late", {"other": "y"})), OPTS).action == "hold"
    assert live_decision(settled, sources(cm("late", {"other": "y", "k": "v2"})), OPTS).action == "roll"


def test_optional_key_ref_missing_key_is_not_missing() -> None:
    body = deployment(template_annotations={HASH_ANNOTATION: "abc", UNHASHED_ANNOTATION: "ConfigMap/late"})
    body["spec"]["template"]["spec"]["containers"][0]["env"][0]["valueFrom"]["configMapKeyRef"]["optional"] = True
    assert live_decision(body, sources(cm("late", {"other": "x"})), OPTS).missing == ()


def test_missing_record_round_trip_and_legacy_record_without_it() -> None:
    items = {MissingItem(SourceKey("ConfigMap", "prod", "a"), "k.1"), MissingItem(SourceKey("Secret", "other", "b"))}
    text = format_missing(items, "prod")
    assert text == "ConfigMap/a:k.1,Secret/other/b"
    assert parse_missing(text, "prod") == items
    # A record written before live-missing existed: a missing reference appearing rolls, as it did then.
    body = deployment(template_annotations={HASH_ANNOTATION: "abc", UNHASHED_ANNOTATION: "ConfigMap/late"})
    adopted = live_decision(body, sources(), OPTS)
    legacy = with_record(body, adopted.value or "", adopted.refs)
    assert live_decision(legacy, sources(cm("late", {"k": "v"})), OPTS).action == "roll"


def test_optional_absent_is_not_a_hold() -> None:
    body = deployment(template_annotations={HASH_ANNOTATION: "abc", UNHASHED_ANNOTATION: "ConfigMap/late"})
    ref = body["spec"]["template"]["spec"]["containers"][0]["env"][0]["valueFrom"]["configMapKeyRef"]
    ref["optional"] = True
    first = live_decision(body, sources(cm("late", {"k": "v"})), OPTS)
    recorded = with_record(body, first.value or "", first.refs)
    assert live_decision(recorded, sources(), OPTS).action == "roll"


def test_changed_references_readopt_instead_of_rolling_twice() -> None:
    # The bundle now covers 'late' too: the workload's own template changed (and rolls by itself).
    old = deployment(template_annotations={HASH_ANNOTATION: "abc", UNHASHED_ANNOTATION: "ConfigMap/late,Secret/external"})
    src = sources(secret("external", {"p": "1"}), cm("late", {"k": "1"}))
    first = live_decision(old, src, OPTS)
    new = with_record(
        deployment(template_annotations={HASH_ANNOTATION: "def", UNHASHED_ANNOTATION: "Secret/external"}),
        first.value or "",
        first.refs,
    )
    changed = sources(secret("external", {"p": "2"}), cm("late", {"k": "1"}))
    decision = live_decision(new, changed, OPTS)
    assert decision.action == "adopt"
    assert decision.patch is not None and "spec" not in decision.patch


def test_record_is_cleared_when_everything_becomes_covered() -> None:
    body = with_record(deployment(template_annotations={HASH_ANNOTATION: "abc"}), "x", "Secret/external")
    decision = live_decision(body, sources(), OPTS)
    assert decision.action == "clear"
    assert decision.patch == {
        "metadata": {"annotations": {LIVE_HASH_ANNOTATION: None, LIVE_REFS_ANNOTATION: None, LIVE_MISSING_ANNOTATION: None}}
    }


def test_ignored_source_is_not_hashed() -> None:
    body = deployment(template_annotations={HASH_ANNOTATION: "abc", UNHASHED_ANNOTATION: "Secret/external"})
    ignored = config_source(
        "Secret", "prod", "external", {"metadata": {"annotations": {"wavegen.io/ignore": "true"}}, "stringData": {"p": "1"}}
    )
    assert live_decision(body, {ignored.key: key_digests(ignored)}, OPTS).value == config_hash([])


def test_hmac_key_is_used() -> None:
    body = deployment(template_annotations={HASH_ANNOTATION: "abc", UNHASHED_ANNOTATION: "Secret/external"})
    src = sources(secret("external", {"p": "1"}))
    keyed = Options(opt_in=True, hmac_key=b"k")
    assert live_decision(body, src, keyed).value != live_decision(body, src, OPTS).value


def test_cronjob_template_path() -> None:
    body = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "job", "namespace": "prod", "annotations": {ENABLED_ANNOTATION: "true"}},
        "spec": {
            "jobTemplate": {"spec": {"template": {"spec": {"containers": [{"envFrom": [{"configMapRef": {"name": "c"}}]}]}}}}
        },
    }
    first = live_decision(body, sources(cm("c", {"a": "1"})), OPTS)
    roll = live_decision(with_record(body, first.value or "", first.refs), sources(cm("c", {"a": "2"})), OPTS)
    assert roll.patch is not None
    assert roll.patch["spec"]["jobTemplate"]["spec"]["template"]["metadata"]["annotations"] == {LIVE_HASH_ANNOTATION: roll.value}
