"""Stream engine edge cases: splitting, markers, line endings, BOM, splicing styles, fallbacks."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from wavegen.core.plan import Options
from wavegen.errors import WavegenError
from wavegen.stream import engine as engine_module
from wavegen.stream import fastparse, splice
from wavegen.stream import split as split_module
from wavegen.stream.engine import InputDocument, run
from wavegen.stream.split import Piece, check_line_breaks, split_as_bytes, split_marked, split_stream, split_utf8

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: v\n"


def deploy(template_metadata: str = "      labels:\n        app: d\n") -> str:
    return (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n"
        + ("    metadata:\n" + template_metadata if template_metadata else "")
        + "    spec:\n      containers:\n        - name: c\n"
        + "          envFrom:\n            - configMapRef:\n                name: c\n"
    )


def transform(text: str, **options: object) -> str:
    result = run([InputDocument("in.yaml", text.encode())], Options(**options))  # type: ignore[arg-type]
    assert not result.has_errors, result.findings
    return result.outputs[0].decode()


def annotations(text: str) -> dict[str, str]:
    for doc in yaml.safe_load_all(text):
        if doc and doc["kind"] == "Deployment":
            return dict(doc["spec"]["template"].get("metadata", {}).get("annotations") or {})
    raise AssertionError("no deployment")


def test_split_reassembles_byte_for_byte() -> None:
    text = "# lead\n---\na: 1\n--- # trailing text\nb: 2\n...\n---\n---\nc: 3\n---"
    pieces = split_stream(text)
    assert "".join(p.text for p in pieces) == text
    assert [p.line for p in pieces] == [0, 1, 3, 6, 7, 9]


@pytest.mark.parametrize(
    ("text", "pieces"),
    [
        ("%YAML 1.1\n---\na: 1\n", ["%YAML 1.1\n---\na: 1\n"]),
        ("a: 1\n%YAML 1.1\n---\nb: 1\n", ["a: 1\n", "%YAML 1.1\n---\nb: 1\n"]),
        ("x: 1\n---\n%TAG ! x\n---\n", ["x: 1\n", "---\n", "%TAG ! x\n---\n"]),
        ("a: 1\n---\nb: 50%\n---\n", ["a: 1\n", "---\nb: 50%\n", "---\n"]),
    ],
)
def test_directives_belong_to_the_document_they_precede(text: str, pieces: list[str]) -> None:
    assert [p.text for p in split_stream(text)] == pieces


def test_three_dashes_inside_a_block_scalar_is_not_a_marker() -> None:
    text = CM.replace("  k: v\n", "  k: |\n    ---\n    not a marker\n") + "---\n" + deploy()
    out = transform(text)
    assert out.startswith(text[: text.index("---\napiVersion: apps")])
    assert "wavegen.io/config-hash" in annotations(out)


def test_template_without_metadata_gets_one() -> None:
    out = transform(CM + "---\n" + deploy(""))
    assert annotations(out).keys() == {"wavegen.io/config-hash"}
    assert "  template:\n    metadata:\n      annotations:\n        wavegen.io/config-hash: " in out


def test_metadata_without_annotations_keeps_its_indentation_style() -> None:
    four = deploy().replace("\n      labels:\n        app: d\n", "\n      labels:\n          app: d\n")
    out = transform(CM + "---\n" + four)
    assert "      annotations:\n          wavegen.io/config-hash:" in out


def test_bom_and_crlf_survive() -> None:
    text = "\ufeff" + (CM + "---\n" + deploy()).replace("\n", "\r\n")
    out = transform(text)
    assert out.startswith("\ufeff")
    assert out.count("\n") == out.count("\r\n")
    assert "wavegen.io/config-hash" in annotations(out.lstrip("\ufeff"))


def test_null_annotations_fall_back_to_a_round_trip() -> None:
    out = transform(CM + "---\n" + deploy("      annotations:\n      labels:\n        app: d\n"))
    assert "wavegen.io/config-hash" in annotations(out)
    assert out.startswith(CM)


@pytest.mark.parametrize("written", ["null", "Null", "NULL", "~", "null  # none yet"])
@pytest.mark.parametrize("fast", [True, False])
def test_annotations_written_as_a_null_get_the_hash_lines_in_its_place(written: str, fast: bool) -> None:
    """``annotations: null`` (or JSON's ``"annotations": null``, as ``kubectl get -o json``
    writes it) becomes a flow mapping of the hash lines there, in both styles and on both
    paths, and nothing else changes: it was a round trip of the whole document, which wrote a
    pretty-printed JSON List on one line."""
    text = CM + "---\n" + deploy(f"      annotations: {written}\n      labels:\n        app: d\n")
    data = json.dumps(yaml.safe_load(deploy("      annotations: null\n      labels:\n        app: d\n")), indent=2)
    for source, null in ((text, written.split(" ")[0]), (CM + "---\n" + data + "\n", "null")):
        result = run([InputDocument("in.yaml", source.encode())], Options(), fast=fast)
        out = result.outputs[0].decode()
        assert result.fallbacks == [] and "wavegen.io/config-hash" in annotations(out)
        line = next(line for line in source.splitlines() if '"annotations": null' in line or "annotations: " in line)
        hashed = {"wavegen.io/config-hash": annotations(out)["wavegen.io/config-hash"]}
        assert out == source.replace(line, line.replace(null, "{" + json.dumps(hashed)[1:-1] + "}", 1))
        again = run([InputDocument("in.yaml", out.encode())], Options(), fast=fast)
        assert again.outputs[0].decode() == out


def test_an_empty_null_in_a_flow_mapping_still_falls_back_to_a_round_trip() -> None:
    text = CM + "---\n" + deploy("      {annotations: , labels: {app: d}}\n")
    result = run([InputDocument("in.yaml", text.encode())], Options())
    assert result.fallbacks and "wavegen.io/config-hash" in annotations(result.outputs[0].decode())


def test_existing_value_keeps_its_quote_style_and_comment() -> None:
    text = CM + "---\n" + deploy("      annotations:\n        wavegen.io/config-hash: 'old' # mine\n")
    out = transform(text)
    line = next(line for line in out.splitlines() if "config-hash" in line)
    assert line.startswith("        wavegen.io/config-hash: '") and line.endswith("' # mine")


def test_annotation_line_is_removed_when_nothing_is_referenced_any_more() -> None:
    text = deploy("      annotations:\n        keep: me\n        wavegen.io/config-hash: 'old'\n")
    out = transform(text)
    assert annotations(out) == {"keep": "me"}
    assert out == text.replace("        wavegen.io/config-hash: 'old'\n", "")


def test_unrelated_documents_are_not_parsed_and_pass_through() -> None:
    crd = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: x}\nspec: {a: *undefined}\n"
    text = crd + "---\n" + CM + "---\n" + deploy()
    out = transform(text)
    assert out.startswith(crd)


def test_invalid_yaml_in_any_document_is_an_error_with_position() -> None:
    crd = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: x\n bad: [\n"
    with pytest.raises(WavegenError) as caught:
        run([InputDocument("in.yaml", (CM + "---\n" + crd).encode())], Options())
    assert caught.value.document == 2 and caught.value.line >= 10 and caught.value.file == "in.yaml"


def test_duplicate_keys_are_refused_with_their_line() -> None:
    with pytest.raises(WavegenError, match="duplicate key 'k'") as caught:
        run([InputDocument("in.yaml", (CM + "  k: again\n").encode())], Options())
    assert caught.value.line == 7


def test_same_configmap_twice_is_a_warning_naming_both_places() -> None:
    result = run([InputDocument("in.yaml", (CM + "---\n" + CM).encode())], Options())
    assert not result.has_errors
    [finding] = result.findings
    assert finding.severity.value == "warning" and (finding.document, finding.line) == (2, 8)
    assert "defined twice, at in.yaml:1:1 and in.yaml:2:8" in finding.message
    assert result.outputs[0] == (CM + "---\n" + CM).encode()


def test_missing_reference_policies() -> None:
    text = deploy() + "---\n" + CM.replace("name: c", "name: other")
    warn = run([InputDocument("in.yaml", text.encode())], Options())
    assert [f.severity.value for f in warn.findings] == ["warning"]
    assert run([InputDocument("in.yaml", text.encode())], Options(missing="error")).has_errors
    assert run([InputDocument("in.yaml", text.encode())], Options(missing="ignore")).findings == []


def test_optional_absent_reference_is_fine_and_recorded() -> None:
    spec = deploy().replace(
        "                name: c\n",
        "                name: c\n            - secretRef:\n                name: maybe\n                optional: true\n",
    )
    result = run([InputDocument("in.yaml", (CM + "---\n" + spec).encode())], Options())
    assert result.findings == []
    assert annotations(result.outputs[0].decode())["wavegen.io/unhashed-refs"] == "Secret/maybe"


@pytest.mark.parametrize(
    ("text", "pieces"),
    [
        # The second "..." starts right after the line the first one ends: as one search through
        # the text finds them, it is no cut of its own (libyaml reads both as ends alike).
        ("a: 1\n...\n...\nb: 2\n", ["a: 1\n...\n", "...\nb: 2\n"]),
        ("...\n...\na: 1\n", ["...\n", "...\n", "a: 1\n"]),
        ("a: 1\n... # end\r\n---\nb: 2\n", ["a: 1\n... # end\r\n", "---\nb: 2\n"]),
        ("a: 1\n...x\n---x\n--- \n", ["a: 1\n...x\n---x\n", "--- \n"]),
    ],
)
def test_end_markers_cut_after_their_line(text: str, pieces: list[str]) -> None:
    assert [p.text for p in split_stream(text)] == pieces


@pytest.mark.parametrize(
    ("text", "screened"),
    [
        ("a: 1\n---\nb: 2\n...\n---\nc: 3\n", True),
        ("a: 1\n--- # c\r\nb: 2\n...\n...\nc: 3", True),
        ("a: 1\n---x\n", False),
        ("a: |\n  x\n...y\n", False),
        ("a: 1\n%YAML 1.1\n---\nb: 2\n", False),
        ("a: 1\n...\rb\n", False),  # a lone CR: no end marker libyaml takes, left inside
    ],
)
def test_split_says_when_no_line_needs_the_readers_marker_search(text: str, screened: bool) -> None:
    assert split_marked(text)[2] is screened


_STREAM_LINES = st.sampled_from(
    ["---", "--- # c", "---x", "...", "... # c", "...x", "%YAML 1.1", "%TAG ! x", "a: 50%", "- b", "", " ", "# c", "%"]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_STREAM_LINES, st.sampled_from(["\n", "\r\n"])), max_size=10), st.booleans())
@example([("...", "\n"), ("", "\n"), ("- b", "\n"), ("---", "\n"), ("- b", "\n")], True)  # a piece opens with an empty line
def test_split_marks_directives_and_reassembles(lines: list[tuple[str, str]], last_break: bool) -> None:
    text = "".join(line + brk for line, brk in lines)
    if not last_break:
        text = text.removesuffix("\r\n").removesuffix("\n")
    pieces, directives, screened = split_marked(text)
    assert "".join(p.text for p in pieces) == text
    starts = itertools.accumulate((len(p.text) for p in pieces[:-1]), initial=0)
    assert [p.line for p in pieces] == [text.count("\n", 0, start) for start in starts]
    assert directives == (text.startswith("%") or "\n%" in text)
    if screened:  # the reader's own search would find nothing in any piece's document
        for piece in pieces:
            document = fastparse.document_text(piece.text)
            assert document is None or fastparse._UNREAD_LINES.search(document) is None, piece.text
    for before, piece in itertools.pairwise(pieces):
        opens = piece.text.startswith(("---\n", "--- ", "---\r")) or piece.text == "---" or piece.text.startswith("%")
        ended = before.text.rstrip("\r\n").rsplit("\n", 1)[-1].startswith("...")
        assert opens or ended, (before.text, piece.text)


# Lines of a stream past ASCII too: Latin-1 text and characters past it (a typographic quote,
# an emoji, a dash: what makes a CRD's text take 2 or 4 bytes a character), next to markers.
_UTF8_LINES = st.one_of(
    _STREAM_LINES,
    st.sampled_from(["é: \u2019x\u2019", "- 🎉", "...\u2019", "---\u2019", "--- é", "# ü", "a: b\rc", "\ufeffa: 1", "x: \u2013"]),
    # NEL, LS and PS inside a line, and "Å", whose UTF-8 holds the byte of NEL (0x85)
    st.sampled_from(["a: b\x85c", "--- \u2028", "...\u2029", "Å: 1"]),
)


def _split_outcome(split: Callable[[], tuple[list[Piece], bool, bool]]) -> object:
    try:
        pieces, directives, screened = split()
    except WavegenError as err:
        return str(err)
    return [(piece.text, piece.line, piece.number) for piece in pieces], directives, screened


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.tuples(_UTF8_LINES, st.sampled_from(["\n", "\n", "\n", "\r\n", "\r", "\x85", "\u2028"])), min_size=1, max_size=10
    ),
    st.booleans(),
)
@example(
    [("...", "\n"), ("", "\n"), ("é: 1", "\n"), ("---", "\n"), ("x: \u2028", "\n")], True
)  # a piece opening with an empty line
def test_a_stream_cut_as_utf8_bytes_gives_the_pieces_of_its_text(lines: list[tuple[str, str]], last_break: bool) -> None:
    """The same pieces (text, line, number), flags and lone-CR error as the decoded text gives
    (line numbers that count NEL, LS and PS breaks too)."""
    text = "".join(line + brk for line, brk in lines)
    if not last_break:
        text = text.removesuffix("\r\n").removesuffix("\n")
    data = text.encode()
    assert split_as_bytes(data) is not text.isascii()
    if text.isascii():
        return
    expected = _split_outcome(lambda: (check_line_breaks(text, "f.yaml"), split_marked(text))[1])
    assert _split_outcome(lambda: engine_module._split_bytes("f.yaml", data)) == expected


@given(st.text(alphabet="a\r\n", max_size=40))
@example("a\r\r\n")  # as many CRs as CRLFs but for one
@example("\r\na\n\r")  # a lone CR last
def test_lone_cr_line_breaks_are_refused_in_text_and_bytes_alike(text: str) -> None:
    """check_line_breaks refuses exactly the texts with a CR that no LF follows, at the line a
    reading of LF breaks gives it, whether given the text or its bytes."""
    lone = next((at for at in range(len(text)) if text[at] == "\r" and text[at + 1 : at + 2] != "\n"), None)
    outcomes = []
    for given_as in (text, text.encode(), bytearray(text.encode())):
        try:
            check_line_breaks(given_as, "f.yaml")
            outcomes.append(None)
        except WavegenError as err:
            outcomes.append(err.line)
    expected = None if lone is None else text[:lone].replace("\r\n", "\n").count("\n") + 1
    assert outcomes == [expected] * 3


_BAD_UTF8 = (b"\xff", b"\xe2\x80", b"\xc3(", b"\xed\xa0\x80", b"\xf4\x90\x80\x80")


def _refusal(data: bytes, bytes_first: bool, monkeypatch: pytest.MonkeyPatch) -> str | None:
    """What a run says of an input, cut into pieces as bytes first or decoded whole first (None: no error)."""
    monkeypatch.setattr(engine_module, "split_as_bytes", split_as_bytes if bytes_first else lambda _data: False)
    try:
        run([InputDocument("in.yaml", data)], Options(missing="ignore"))
    except WavegenError as err:
        return str(err)
    finally:
        monkeypatch.setattr(engine_module, "split_as_bytes", split_as_bytes)
    return None


def test_bytes_that_are_not_utf8_are_refused_at_the_line_decoding_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    """Decoded a piece at a time, the first bad byte is the one decoding the whole finds, wherever
    the pieces are cut (before, inside and after a document marker, in the first and the last piece)."""
    good = "a: \u2019\n---\nb: é\n".encode()
    for bad in _BAD_UTF8:
        for data in (
            good + bad + b"\n",
            good * 3 + b"c: " + bad,
            bad + good,
            good + b"x\n" + bad + b"\xff\n",
            good + bad + b"\n---\n" + good,
            good + b"---" + bad + b"\n" + good,
        ):
            with pytest.raises(UnicodeDecodeError) as whole:
                data.decode("utf-8")
            with pytest.raises(UnicodeDecodeError) as pieces:
                split_utf8(data)
            assert pieces.value.start == whole.value.start, data
            assert pieces.value.object == data
            refusal = _refusal(data, True, monkeypatch)
            assert refusal == _refusal(data, False, monkeypatch) and refusal and "not UTF-8" in refusal, data


@pytest.mark.parametrize("bad", [None, 0, 2, 3])
@pytest.mark.parametrize("nul", [None, 0, 1, 3])
@pytest.mark.parametrize("lone_cr", [None, 0, 2, 3])
def test_inputs_cut_as_bytes_are_refused_for_what_decoding_them_whole_refuses_first(
    bad: int | None, nul: int | None, lone_cr: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bytes that are not UTF-8, a NUL byte and a lone CR line break, each on some line or
    absent: the input cut into pieces as bytes is refused for the one the text path names (bad
    UTF-8, then NUL, then the lone CR, wherever each is), at the same line."""
    lines = ["a: \u2019".encode(), b"---", "b: \xe9".encode(), b"c: d"]
    for line, added in ((bad, b"\xe2\x80"), (nul, b"\x00"), (lone_cr, b"\rx: 1")):
        if line is not None:
            lines[line] += added
    data = b"\n".join(lines) + b"\n"
    refusal = _refusal(data, True, monkeypatch)
    assert refusal == _refusal(data, False, monkeypatch)
    assert (refusal is None) is (bad is None and nul is None and lone_cr is None)


@pytest.mark.parametrize(
    ("text", "free"),
    [
        ("---\na: 1\n---\nb: \u2019\n", True),
        ("a: 1\n...\n---\nb: 2\n", True),
        ("...\n---\na: \u2019\n", False),  # an end marker first
        ("---\na: 1\n\ufeff---\nb: 2\n", False),  # a BOM in the stream
        ("a: 1\n...\nb: \u2019\n", False),  # a bare document after an end marker
        ("%YAML 1.1\n---\na: é\n", False),
    ],
)
def test_pieces_mean_alone_what_they_mean_together_unless_a_marker_bom_or_directive_ties_them(text: str, free: bool) -> None:
    """The engine's _context_free, over the pieces of the text and of its bytes alike."""
    pieces, directives, _ = split_marked(text)
    assert engine_module._context_free(pieces, directives) is free
    pieces, directives, _ = split_utf8(text.encode())
    assert engine_module._context_free(pieces, directives) is free


def test_a_stream_cut_as_utf8_bytes_runs_as_its_decoded_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run's outputs, findings and errors are the same whether its input is cut as bytes or
    decoded whole, and so are the engine's choices: whether its pieces mean alone what they mean
    together, and the size it weighs (characters, not bytes)."""
    streams = [
        CM.replace("k: v", "k: \u2019quoted\u2019") + "---\n" + deploy(),
        "\ufeff" + CM.replace("k: v", "k: 🎉") + "---\n" + deploy() + "---\n# é\n",
        "\ufeff" + CM.replace("k: v", "k: \u2019") + "\ufeff---\n" + deploy(),  # a BOM in the stream too
        CM.replace("k: v", "k: é") + "---\n\ufeff" + deploy(),
        CM.replace("k: v", "k: é\x00") + "---\n" + deploy(),  # a NUL byte
        CM.replace("k: v", "k: \u2019\r") + "---\n" + deploy(),  # a lone CR
        "%YAML 1.1\n---\n" + CM.replace("k: v", "k: \u2019") + "...\n---\n" + deploy(),
        "...\n" + CM.replace("k: v", "k: \u2019"),
        "...\n---\n" + CM.replace("k: v", "k: \u2019"),
        "a: \u2019\n...\n" + CM,
    ]
    choices: list[object] = []
    real_context_free, real_at_once = engine_module._context_free, engine_module.Engine._add_checked_at_once

    def context_free(*args: Any) -> bool:
        free = real_context_free(*args)
        choices.append(("context free", free))
        return free

    def at_once(self: engine_module.Engine, parsed: Any, file_index: int, size: int) -> bool:
        choices.append(("size", size))
        return real_at_once(self, parsed, file_index, size)

    monkeypatch.setattr(engine_module, "_context_free", context_free)
    monkeypatch.setattr(engine_module.Engine, "_add_checked_at_once", at_once)

    def outcome(data: bytes) -> object:
        choices.clear()
        try:
            result = run([InputDocument("in.yaml", data)], Options(missing="warn"))
        except WavegenError as err:
            return str(err), list(choices)
        return result.outputs, [repr(finding) for finding in result.findings], list(choices)

    decided = set()
    for text in streams:
        data = text.encode()
        assert split_as_bytes(data)
        as_bytes = outcome(data)
        monkeypatch.setattr(engine_module, "split_as_bytes", lambda _data: False)
        assert outcome(data) == as_bytes, text
        monkeypatch.setattr(engine_module, "split_as_bytes", split_as_bytes)
        decided.update(str(choice) for choice in as_bytes[-1])  # type: ignore[index]
    assert "('context free', True)" in decided and "('context free', False)" in decided


def test_namespace_flag_is_the_default_namespace() -> None:
    namespaced_cm = CM.replace("  name: c\n", "  name: c\n  namespace: prod\n")
    assert "wavegen.io/config-hash" not in annotations(transform(namespaced_cm + "---\n" + deploy(), missing="ignore"))
    assert "wavegen.io/config-hash" in annotations(transform(namespaced_cm + "---\n" + deploy(), namespace="prod"))


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_annotation_values_are_quoted_as_json_does(value: str) -> None:
    """The splicer quotes plain ASCII values itself (no json import on the transform path), as json.dumps would."""
    assert splice._quote(value) == json.dumps(value)


GENERATED_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  generateName: schema-migrate-
  annotations:
    argocd.argoproj.io/hook: PreSync
spec:
  template:
    metadata:
      labels: {app: migrate}
    spec:
      containers:
      - name: migrate
        image: app:1
        args: [--to, latest]
        envFrom:
        - configMapRef:
            name: app
      restartPolicy: Never
"""
CONFIG_AND_DEPLOYMENT = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: app
data:
  a: b
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
spec:
  template:
    spec:
      containers:
      - name: app
        envFrom:
        - configMapRef:
            name: app
"""


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("kind", ["Job", "Deployment", "ConfigMap"])
def test_objects_named_by_generate_name_alone_pass_through(fast: bool, kind: str) -> None:
    """Argo CD's hook Jobs are created anew on each sync: nothing rolls them and nothing names them,
    so they pass through untouched (they once ended the run: "Job has no 'metadata.name'")."""
    generated = GENERATED_JOB.replace("kind: Job", f"kind: {kind}")
    bundle = f"{CONFIG_AND_DEPLOYMENT}---\n{generated}"
    result = run([InputDocument("b.yaml", bundle.encode())], Options(), fast=fast)
    assert not result.has_errors
    out = "".join(result.files[0].chunks)
    assert out.endswith(generated)  # untouched
    alone = run([InputDocument("b.yaml", CONFIG_AND_DEPLOYMENT.encode())], Options(), fast=fast)
    assert out.replace(f"---\n{generated}", "") == "".join(alone.files[0].chunks)  # the rest as without it
    assert [p.kind for p in result.plan.workloads] == ["Deployment"]


def test_an_object_with_neither_name_nor_generate_name_is_still_refused() -> None:
    for metadata in ("metadata: {}\n", "metadata:\n  generateName: ''\n", "metadata:\n  name: ''\n  generateName: x-\n"):
        bundle = f"apiVersion: batch/v1\nkind: Job\n{metadata}spec: {{}}\n"
        with pytest.raises(WavegenError, match=r"has no 'metadata\.name'"):
            run([InputDocument("b.yaml", bundle.encode())], Options())


# Lines a stream's cuts depend on (markers with what may follow them, directives, end markers)
# and lines of text past ASCII, in UTF-8 of two to four bytes a character.
_CUT_LINES = [
    "---",
    "--- ",
    "---\t#c",
    "---x",
    "--- a: é",
    "...",
    "... #",
    "...x",
    "%YAML 1.1",
    "%TAG ! x",
    "a: é",
    "b: \u2019",
    "c: 🎉",
    "",
    "# ---",
    " ---",
    "- -",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_CUT_LINES), max_size=12), st.sampled_from(["\n", "\r\n"]), st.booleans())
def test_bytes_are_cut_where_their_text_is(lines: list[str], eol: str, last_break: bool) -> None:
    """split_utf8 (its "---" lines found in the bytes where no directive or end marker is, else in
    the bytes read as Latin-1) gives the pieces and flags of split_marked on the decoded text."""
    text = eol.join(lines) + (eol if last_break and lines else "")
    by_bytes = split_utf8(text.encode())
    by_text = split_marked(text)
    assert [(p.text, p.line, p.number) for p in by_bytes[0]] == [(p.text, p.line, p.number) for p in by_text[0]]
    assert by_bytes[1:] == by_text[1:]
    plain = not any(line.startswith(("%", "...")) for line in lines)
    assert (split_module._marker_cuts(text.encode()) is not None) is plain  # (no Latin-1 text made for it)


def _split_or_error(data: bytes | bytearray) -> Any:
    """split_utf8's pieces and flags, or its error's place and reason."""
    try:
        pieces, directives, screened = split_utf8(data)
    except UnicodeDecodeError as err:
        return ("refused", err.start, err.end, err.reason)
    return [(p.text, p.line, p.number) for p in pieces], directives, screened


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from([*_CUT_LINES, "d: \xff", "e: \xc3(", "x: \x00"]), max_size=12),
    st.sampled_from(["\n", "\r\n"]),
    st.booleans(),
)
def test_a_bytearray_is_consumed_into_the_pieces_its_bytes_give(lines: list[str], eol: str, last_break: bool) -> None:
    """Cut from its end as its pieces are decoded, a bytearray gives what bytes give (pieces,
    flags, and the first byte that is not UTF-8), and is empty after, unless it was refused."""
    data = (eol.join(lines) + (eol if last_break and lines else "")).encode("utf-8", "surrogateescape")
    data = data.replace("\xff".encode(), b"\xff").replace("\xc3(".encode(), b"\xc3(")  # (bytes no UTF-8 has)
    consumed = bytearray(data)
    found = _split_or_error(consumed)
    assert found == _split_or_error(data)
    if found[0] != "refused":
        assert not consumed


@pytest.mark.parametrize("bad", [None, 0, 2, 3])
@pytest.mark.parametrize("nul", [None, 0, 1, 3])
@pytest.mark.parametrize("lone_cr", [None, 0, 2, 3])
def test_a_consumed_input_is_refused_as_its_bytes_are(bad: int | None, nul: int | None, lone_cr: int | None) -> None:
    """Bad UTF-8 first, then a NUL byte, then a lone CR, at the same line: a bytearray (gone once
    split) is refused as bytes are, its NUL and CR looked for before it is."""
    lines = ["a: \u2019".encode(), b"---", "b: \xe9".encode(), b"c: d"]
    for line, added in ((bad, b"\xe2\x80"), (nul, b"\x00"), (lone_cr, b"\rx: 1")):
        if line is not None:
            lines[line] += added
    data = b"\n".join(lines) + b"\n"
    said = []
    for given_data in (data, bytearray(data)):
        try:
            result = run([InputDocument("in.yaml", given_data)], Options(missing="ignore"))
            said.append(result.outputs)
        except WavegenError as err:
            said.append(str(err))
    assert said[0] == said[1]


@pytest.mark.parametrize("odd", ["\x07", "\x85", "\u2028", "\ufeff", "\ufffe"])
def test_a_consumed_input_is_screened_for_what_the_reader_turns_away(odd: str) -> None:
    """Its bytes are screened before they are gone (a control character, a line break or a mark
    YAML reads otherwise): a bytearray runs as its bytes do."""
    text = CM.replace("k: v", f"k: a{odd}b") + "---\n" + deploy() + "---\n# \u2019\n"
    said = []
    for given_data in (text.encode(), bytearray(text.encode())):
        try:
            result = run([InputDocument("in.yaml", given_data)], Options(missing="ignore"))
            said.append((result.outputs, [str(f) for f in result.findings]))
        except WavegenError as err:
            said.append(str(err))
    assert said[0] == said[1]


@pytest.mark.parametrize("brk", ["\x85", "\u2028", "\u2029"])
def test_a_line_break_yaml_counts_moves_the_lines_after_it_as_in_the_text(brk: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """NEL, LS and PS count as lines in the pieces of bytes as in the decoded text (the bytes'
    screen says where they may be): an error after one names the same line either way."""
    data = f'a: "b{brk}c"\n---\nx: \u2019\n---\ny: [1,\n'.encode()
    refusal = _refusal(data, True, monkeypatch)
    assert refusal is not None and refusal == _refusal(data, False, monkeypatch)
    assert refusal == _refusal(bytes(bytearray(data)), True, monkeypatch)
