"""Findings and errors name helm's `# Source:` template of the document they are about."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from wavegen.errors import WavegenError, location_text
from wavegen.stream.split import Piece, split_stream

REPO_ROOT = Path(__file__).resolve().parents[2]
HELM_RENDER = (REPO_ROOT / "fixtures" / "helm-source-findings" / "input.yaml").read_text()


@pytest.mark.parametrize(
    ("text", "template"),
    [
        ("---\n# Source: shop/templates/cm.yaml\nkind: ConfigMap\n", "shop/templates/cm.yaml"),
        ("# Source: shop/templates/cm.yaml\nkind: ConfigMap\n", "shop/templates/cm.yaml"),
        ("---\n\n# a comment first\n#   Source:   a/templates/x y.yaml  \nkind: X\n", "a/templates/x y.yaml"),
        ("--- # a marker comment\r\n# Source: a/templates/crlf.yaml\r\nkind: X\r\n", "a/templates/crlf.yaml"),
        # only comments above the content count: a later one belongs to nothing helm wrote
        ("---\nkind: ConfigMap\n# Source: a/templates/late.yaml\n", ""),
        ("---\nkind: ConfigMap\ndata:\n  note: '# Source: a/templates/value.yaml'\n", ""),
        ("---\n# Source:\nkind: X\n", ""),
        ("---\n# no source here\nkind: X\n", ""),
    ],
)
def test_helm_template_of_a_piece(text: str, template: str) -> None:
    assert Piece(text, 0, 1).helm_template() == template


def test_every_document_of_a_helm_render_names_its_template() -> None:
    names = [piece.helm_template() for piece in split_stream(HELM_RENDER) if piece.has_content()]
    assert names == [
        "shop/templates/configmap.yaml",
        "shop/templates/service.yaml",
        "shop/templates/deployment.yaml",
        "shop/charts/cache/templates/statefulset.yaml",
    ]


def test_location_text() -> None:
    assert location_text("a.yaml", 2, 9) == "a.yaml, document 2, line 9"
    assert location_text("<stdin>", 3, 99, "c/templates/d.yaml") == "c/templates/d.yaml (rendered document 3, line 99)"
    assert location_text("<helm>", 3, 0, "c/templates/d.yaml") == "c/templates/d.yaml (rendered document 3)"
    assert location_text("out.yaml", 3, 99, "c/templates/d.yaml") == "c/templates/d.yaml (out.yaml, rendered document 3, line 99)"
    error = WavegenError("bad", file="<stdin>", document=1, line=4, template="t.yaml")
    assert str(error) == "t.yaml (rendered document 1, line 4): bad"


def _wavegen(*args: str, stdin: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "wavegen", *args], input=stdin, capture_output=True, text=True, cwd=REPO_ROOT)


def test_transform_on_stdin_names_the_template() -> None:
    done = _wavegen("transform", "-", stdin=HELM_RENDER)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        "wavegen: warning: shop/templates/deployment.yaml (rendered document 3, line 44): Deployment/default/shop"
        " references Secret default/shop-db, which is not in the bundle",
        "wavegen: warning: shop/charts/cache/templates/statefulset.yaml (rendered document 4, line 73):"
        " StatefulSet/default/shop-cache needs key 'CACHE_MODE' of ConfigMap default/shop-config, which lacks it in"
        " the bundle; its pods cannot start",
    ]


def test_post_render_names_the_template() -> None:
    done = _wavegen("post-render", "--missing", "error", stdin=HELM_RENDER)
    assert done.returncode == 1
    assert done.stdout == ""  # an error finding writes nothing
    assert "wavegen: error: shop/templates/deployment.yaml (rendered document 3, line 44): " in done.stderr


def test_invalid_yaml_in_a_template_names_it() -> None:
    broken = HELM_RENDER.replace("  LOG_LEVEL: info\n", "  LOG_LEVEL: [info\n")
    done = _wavegen("transform", "-", stdin=broken)
    assert done.returncode == 1
    assert done.stderr.startswith("wavegen: error: shop/templates/configmap.yaml (rendered document 1, line "), done.stderr
    assert "Traceback" not in done.stderr


def test_explain_json_carries_the_template() -> None:
    done = _wavegen("explain", "--format", "json", "-", stdin=HELM_RENDER)
    findings = json.loads(done.stdout)["findings"]
    assert [f["template"] for f in findings] == ["shop/templates/deployment.yaml", "shop/charts/cache/templates/statefulset.yaml"]
    plain = _wavegen("explain", "--format", "json", "-", stdin=HELM_RENDER.replace("# Source:", "# From:"))
    assert [f["template"] for f in json.loads(plain.stdout)["findings"]] == ["", ""]
