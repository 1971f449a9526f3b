"""Edited documents kept as their text and edits (splice.Spliced), made a part at a time where they are written."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wavegen.cli import transform as transform_command
from wavegen.core.plan import Options
from wavegen.inputs import files
from wavegen.stream import engine, splice
from wavegen.stream.engine import WRITE_BATCH_CHARS, InputDocument, encode_chunks, run
from wavegen.stream.splice import Edit, Spliced, Unsafe, apply_edits

# Characters of one, two and four bytes a character to Python and of one to four in UTF-8.
TEXT = st.text(alphabet="ab\n é\u2019🎉-", max_size=60)


def reference_splice(text: str, edits: list[Edit]) -> str:
    """The edits applied one by one from the last, each a slice replaced (insertions before replacements at a place)."""
    for edit in sorted(edits, reverse=True):
        text = text[: edit.start] + edit.text + text[edit.end :]
    return text


@st.composite
def edited_texts(draw: st.DrawFn) -> tuple[str, list[Edit]]:
    """A text and non-overlapping edits of it (insertions, replacements, deletions), in any order."""
    text = draw(TEXT)
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=8)))
    edits = []
    for start, end in zip(cuts[::2], cuts[1::2], strict=False):
        edits.append(Edit(start, end, draw(TEXT)))
        if draw(st.booleans()):
            edits.append(Edit(start, start, draw(TEXT)))  # an insertion where a replacement starts
    return text, draw(st.permutations(edits))


@settings(max_examples=400, deadline=None)
@given(edited_texts(), st.integers(1, 9), st.integers(-70, 70), st.integers(-70, 70), TEXT)
def test_a_spliced_text_is_the_edited_text_in_parts(
    edited: tuple[str, list[Edit]], most: int, start: int, stop: int, suffix: str
) -> None:
    text, edits = edited
    expected = reference_splice(text, list(edits))
    spliced = Spliced(text, edits)
    assert str(spliced) == apply_edits(text, edits) == expected
    assert len(spliced) == len(expected)
    parts = list(spliced.parts(most))
    assert "".join(parts) == expected
    assert all(0 < len(part) <= most for part in parts)
    assert spliced[start:stop] == expected[start:stop]
    assert spliced[start:] == expected[start:] and spliced[:stop] == expected[:stop]
    assert spliced.endswith(suffix) is expected.endswith(suffix)


def test_overlapping_edits_are_unsafe() -> None:
    with pytest.raises(Unsafe):
        Spliced("abcdef", [Edit(1, 4, "x"), Edit(3, 5, "y")])
    Spliced("abcdef", [Edit(1, 3, "x"), Edit(3, 5, "y"), Edit(3, 3, "z")])  # touching and inserted between: safe


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(TEXT, edited_texts()), max_size=5), st.booleans())
def test_spliced_chunks_encode_as_their_text(chunks: list[str | tuple[str, list[Edit]]], cut: bool) -> None:
    made = [chunk if isinstance(chunk, str) else Spliced(*chunk) for chunk in chunks]
    expected = "".join(chunk if isinstance(chunk, str) else str(chunk) for chunk in made)
    assert b"".join(encode_chunks(made, cut=cut)).decode() == expected
    joined = "".join(str(chunk) for chunk in files.join_streams([made, ["x: 1\n"]]))
    assert joined == "".join(str(chunk) for chunk in files.join_streams([[expected], ["x: 1\n"]]))


LIST = """apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: settings
  data:
    note: "caf\u00e9 \u2019quoted\u2019"
    long: |
{long}
- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: web
  spec:
    template:
      metadata:
        labels:
          app: web
      spec:
        containers:
        - name: c
          image: nginx
          envFrom:
          - configMapRef:
              name: settings
"""


def _list_bundle() -> str:
    line = "      " + "x" * 70 + "\n"
    return LIST.format(long=line * (4 * WRITE_BATCH_CHARS // len(line)) + "      end")


def _refusing_to_join(monkeypatch: pytest.MonkeyPatch) -> None:
    def joined(self: Spliced) -> str:
        raise AssertionError("an edited document was joined whole")

    monkeypatch.setattr(splice.Spliced, "__str__", joined)


def test_an_edited_list_is_written_without_being_joined(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """To standard output, to a file and in place: the List's text is made a part at a time from its
    edits, never joined (its copy whole would take its size again at the peak), and comes out as
    the joined text does."""
    text = _list_bundle()
    result = run([InputDocument("list.yaml", text.encode())], Options())
    assert not result.has_errors
    [output] = result.files
    assert any(isinstance(document, Spliced) for document in output.documents)
    expected = result.outputs[0]
    assert expected != text.encode() and b"wavegen" in expected
    source = tmp_path / "list.yaml"
    source.write_text(text)
    # The config changed in place, as long as it was: the hash is replaced by one as long, so
    # whether the output changed is read through the whole text.
    changed = expected.decode().replace("      end", "      END")
    again = run([InputDocument("list.yaml", changed.encode())], Options()).outputs[0]
    assert len(again) == len(changed.encode()) and again != changed.encode()
    _refusing_to_join(monkeypatch)
    written = io.BytesIO()
    result.write(0, written)
    assert written.getvalue() == expected
    assert transform_command.run_plain([str(source)]) == 0
    assert capsysbinary.readouterr().out == expected
    assert transform_command.run_plain([str(source), "-o", str(tmp_path / "out.yaml")]) == 0
    assert (tmp_path / "out.yaml").read_bytes() == expected
    assert transform_command.run_plain([str(source), "--in-place"]) == 0  # (asks whether it changed, too)
    assert source.read_bytes() == expected
    assert transform_command.run_plain([str(source), "--in-place"]) == 0  # (unchanged now: not written)
    assert source.read_bytes() == expected
    source.write_text(changed)
    assert transform_command.run_plain([str(source), "--in-place"]) == 0
    assert source.read_bytes() == again


def test_an_output_joins_its_edited_documents_for_what_reads_them_as_strings() -> None:
    """``chunks`` (diffs, the KRM function, ``outputs``): one string per document, as before."""
    text = _list_bundle()
    result = run([InputDocument("list.yaml", text.encode())], Options())
    [output] = result.files
    assert [type(chunk) for chunk in output.chunks] == [str] * len(output.original)
    assert "".join(output.chunks).encode() == result.outputs[0]
    assert output.changed() and result.changed() == [0]


def test_writing_an_edited_document_encodes_bounded_parts() -> None:
    result = run([InputDocument("list.yaml", _list_bundle().encode())], Options())
    sizes = [len(block) for block in engine.encode_chunks(result.files[0].documents, cut=True)]
    assert max(sizes) <= 4 * WRITE_BATCH_CHARS  # (a part of characters of up to four bytes)
    assert len(sizes) > 4


@settings(max_examples=300, deadline=None)
@given(TEXT, st.lists(st.one_of(TEXT, edited_texts()), max_size=4), st.data())
def test_same_text_reads_edited_documents_in_parts(
    left: str, right: list[str | tuple[str, list[Edit]]], data: st.DataObject
) -> None:
    """Whether an output spells its input, an edited document made a part at a time: as the joined texts compare."""
    documents = [chunk if isinstance(chunk, str) else Spliced(*chunk) for chunk in right]
    joined = "".join(chunk if isinstance(chunk, str) else str(chunk) for chunk in documents)
    for text in (left, joined):
        cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=4)))
        chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
        assert engine.same_text(chunks, documents) is (text == joined)
