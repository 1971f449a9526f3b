"""Documents with anchors, aliases or merge keys: hash lines spliced where the edits touch nothing shared."""

from __future__ import annotations

import difflib
import json
from typing import Any

import pytest
import yaml

from wavegen.core.plan import Options
from wavegen.stream.engine import InputDocument, run

_CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: b\n---\n"


def _deployment(template_metadata: str, before_template: str = "", after_spec: str = "") -> str:
    return (
        _CONFIGMAP
        + "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  labels: &labels\n    app: d\n"
        + "  annotations: &notes\n    team: a\nspec:\n  selector:\n    matchLabels: &match\n      app: d\n"
        + before_template
        + "  template:\n"
        + template_metadata
        + "    spec:\n      containers:\n        - name: c\n          image: x\n"
        + "          envFrom:\n            - configMapRef:\n                name: cfg\n"
        + after_spec
    )


# name: (document, whether its hash lines are spliced rather than the document round-tripped)
CASES: dict[str, tuple[str, bool]] = {
    "labels an alias": (_deployment("    metadata:\n      labels: *match\n"), True),
    "labels merging an anchor": (_deployment("    metadata:\n      labels:\n        <<: *labels\n        tier: web\n"), True),
    "annotations there, labels an alias": (
        _deployment("    metadata:\n      labels: *match\n      annotations:\n        note: x\n"),
        True,
    ),
    "no metadata, an alias in the spec": (
        _deployment("", after_spec="          args: &args [a]\n          command: *args\n"),
        True,
    ),
    "labels an alias of a deeper mapping": (
        _deployment(
            "    metadata:\n      name: t\n      labels: *deep\n", before_template="  x:\n    deep: &deep\n            app: d\n"
        ),
        True,
    ),
    "metadata an alias": (
        _deployment("    metadata: *labels\n").replace(
            "  labels: &labels\n    app: d\n", "  labels: &labels\n    labels:\n      app: d\n"
        ),
        False,
    ),
    "metadata an alias, with annotations": (
        _deployment(
            "    metadata: *meta\n", before_template="  meta: &meta\n    labels:\n      app: d\n    annotations:\n      note: x\n"
        ),
        False,
    ),
    "annotations an alias": (_deployment("    metadata:\n      labels: *match\n      annotations: *notes\n"), False),
    "annotations merging an anchor": (_deployment("    metadata:\n      annotations:\n        <<: *notes\n"), False),
    "metadata merging an anchor": (_deployment("    metadata:\n      <<: *labels\n      labels: *match\n"), False),
    "template an anchor aliased elsewhere": (
        _deployment("    metadata:\n      labels: *match\n").replace("  template:\n", "  template: &template\n")
        + "  extra: *template\n",
        False,
    ),
    "the first key of metadata an alias": (
        _deployment("    metadata:\n      *key : *match\n").replace("  labels: &labels\n", "  &key labels: &labels\n"),
        False,
    ),
    "the spec an anchor aliased elsewhere": (
        _deployment("    metadata:\n      labels: *match\n").replace("spec:\n  selector:", "spec: &spec\n  selector:")
        + "extra: *spec\n",
        False,
    ),
    "a recursive alias beside the template": (
        _deployment("    metadata:\n      labels: *match\n", "  loop: &loop [*loop]\n"),
        True,
    ),
    "an annotation to remove named by an alias": (
        _deployment(
            "    metadata:\n      annotations:\n        *stale : ConfigMap/gone\n",
            before_template="  old:\n    &stale wavegen.io/unhashed-refs: x\n",
        ),
        False,
    ),
    "a hash line an alias": (
        _deployment(
            "    metadata:\n      annotations:\n        wavegen.io/config-hash: *hash\n",
            before_template="  old: &hash x\n",
        ),
        False,
    ),
}


def _without_template_annotations(objects: list[Any]) -> tuple[list[Any], list[Any]]:
    """The objects with their pod template's annotations taken out, and those annotations."""
    objects = json.loads(json.dumps(objects))  # (what aliases share, apart: popping one pops no other)
    taken = []
    for obj in objects:
        template = obj.get("spec", {}).get("template") if obj.get("kind") == "Deployment" else None
        metadata = (template.get("metadata") or {}) if template else {}
        taken.append(dict(metadata.pop("annotations", None) or {}))
        if template and template.get("metadata") == {}:
            del template["metadata"]  # (one the hash lines made)
    return objects, taken


@pytest.mark.parametrize("name", sorted(CASES))
def test_aliased_documents_spliced_where_nothing_shared_is_touched(name: str) -> None:
    text, spliced = CASES[name]
    results = [run([InputDocument("bundle.yaml", text.encode())], Options(), fast=fast, jobs=1) for fast in (True, False)]
    assert results[0].outputs == results[1].outputs and results[0].fallbacks == results[1].fallbacks
    output = results[0].outputs[0].decode()
    assert bool(results[0].fallbacks) is not spliced, results[0].fallbacks
    if spliced:
        # The text is the input's but the hash lines (and the keys that hold them).
        changed = [
            line[1:].strip()
            for line in difflib.unified_diff(text.splitlines(), output.splitlines(), lineterm="", n=0)
            if line[:1] in "+-" and not line.startswith(("+++", "---"))
        ]
        assert changed and all(line.startswith(("wavegen.io/", "annotations:", "metadata:")) for line in changed), changed
        # Indented as the template's own mappings are (2 here), not as an alias's anchor is.
        hash_line = next(line for line in output.splitlines() if "wavegen.io/config-hash" in line)
        above = output.splitlines()[output.splitlines().index(hash_line) - 1]
        assert len(hash_line) - len(hash_line.lstrip()) - (len(above) - len(above.lstrip())) in (0, 2), (above, hash_line)
    again = run([InputDocument("bundle.yaml", output.encode())], Options(), jobs=1)
    assert again.outputs[0] == output.encode()  # idempotent
    if "*loop" in text:
        return  # (its objects hold themselves: what they mean is the text's, checked above)
    # What the output means: the input's objects, the template's annotations but the hash lines.
    before, before_notes = _without_template_annotations(list(yaml.safe_load_all(text)))
    after, after_notes = _without_template_annotations(list(yaml.safe_load_all(output)))
    assert after == before
    hash_lines = {k: v for k, v in after_notes[1].items() if k.startswith("wavegen.io/")}
    assert "wavegen.io/config-hash" in hash_lines
    assert {k: v for k, v in after_notes[1].items() if k not in hash_lines} == {
        k: v for k, v in before_notes[1].items() if not k.startswith("wavegen.io/")
    }
