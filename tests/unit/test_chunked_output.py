"""Outputs kept as text chunks: written in batches, joined without copies, atomic on failure, input bytes not kept."""

from __future__ import annotations

import errno
import io
import itertools
import os
import stat
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from wavegen.cli import transform as transform_command
from wavegen.core.plan import Options
from wavegen.errors import WavegenError
from wavegen.inputs import files
from wavegen.stream import engine, fastparse, nodes
from wavegen.stream.engine import WRITE_BATCH_CHARS, InputDocument, encode_chunks, handed_over, run
from wavegen.stream.split import Piece

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from gen_bundle import workload_bundle  # noqa: E402

HELM = ROOT / "fixtures" / "helm-basic"
CRLF = ROOT / "fixtures" / "crlf"

# A BOM, CRLF line breaks, non-ASCII text, and a reference to an absent ConfigMap (an error with --missing error).
BROKEN = (
    "\ufeff# héllo ✓ 日本\r\n"
    "apiVersion: apps/v1\r\nkind: Deployment\r\nmetadata:\r\n  name: web  # ünïcode\r\n"
    "spec:\r\n  template:\r\n    spec:\r\n      containers:\r\n      - name: c\r\n"
    "        envFrom:\r\n        - configMapRef:\r\n            name: absent\r\n"
    '---\r\napiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: other\r\ndata:\r\n  k: "välue"\r\n'
).encode()


def test_write_equals_outputs_and_unedited_pieces_are_not_copied() -> None:
    inputs = [
        InputDocument("bundle.yaml", workload_bundle(40).encode()),
        InputDocument("helm.yaml", (HELM / "input.yaml").read_bytes()),
        InputDocument("crlf.yaml", b"\xef\xbb\xbf" + (CRLF / "input.yaml").read_bytes()),
        InputDocument("empty.yaml", b""),
    ]
    result = run(list(inputs), Options())
    assert not result.has_errors
    for index in range(len(inputs)):
        out = io.BytesIO()
        result.write(index, out)
        assert out.getvalue() == result.outputs[index]
    assert result.changed() == [i for i, doc in enumerate(inputs) if doc.data != result.outputs[i]] == [0, 1, 2]
    bundle = result.files[0]
    unedited = [i for i, chunk in enumerate(bundle.chunks) if "kind: Deployment" not in chunk]
    assert len(unedited) > len(bundle.chunks) // 2
    assert all(bundle.chunks[i] is bundle.original[i] for i in unedited)


def test_outputs_are_built_once() -> None:
    result = run([InputDocument("helm.yaml", (HELM / "input.yaml").read_bytes())], Options())
    assert result.outputs is result.outputs


def test_chunks_are_encoded_in_batches_not_one_write_each() -> None:
    chunks = ["ä" * 100 + "\n"] * 5000 + ["x" * (3 * WRITE_BATCH_CHARS), "", "end"]
    blocks = list(encode_chunks(chunks))
    assert b"".join(blocks) == "".join(chunks).encode()
    assert len(blocks) <= len("".join(chunks)) // WRITE_BATCH_CHARS + 2
    assert all(len(block.decode()) < 2 * WRITE_BATCH_CHARS for block in blocks[:-2])


def test_a_long_chunk_is_written_a_part_at_a_time_and_checked_whole() -> None:
    """Written (``cut``), a chunk longer than a batch is encoded in parts, never joined to the
    chunks before it; for libyaml's check every block still ends with a whole chunk."""
    long = "\u2019 " + "x" * (3 * WRITE_BATCH_CHARS) + "\n"
    chunks = ["ä\n"] * 10 + [long, "end\n", long]
    written = list(encode_chunks(chunks, cut=True))
    assert b"".join(written) == "".join(chunks).encode()
    assert max(len(block.decode()) for block in written) <= WRITE_BATCH_CHARS
    checked = [block.decode() for block in encode_chunks(chunks)]
    assert "".join(checked) == "".join(chunks)
    assert all(block.endswith("\n") for block in checked)
    assert max(map(len, checked)) > 3 * WRITE_BATCH_CHARS  # the long chunk whole, with those before it


class _Recording(io.BytesIO):
    """A binary stream that keeps the size of each write."""

    def __init__(self) -> None:
        super().__init__()
        self.sizes: list[int] = []

    def write(self, block: Any) -> int:
        self.sizes.append(len(block))
        return super().write(block)


def test_outputs_are_written_without_encoding_a_long_chunk_whole() -> None:
    """To standard output and to files alike (their peak memory: see encode_chunks)."""
    chunks = ["a: 1\n"] * 3 + ["x" * (5 * WRITE_BATCH_CHARS) + "\n", "b: 2\n"]
    to_stdout, to_file = _Recording(), _Recording()
    engine.write_chunks(chunks, to_stdout)
    files._write_content(to_file, chunks)
    for out in (to_stdout, to_file):
        assert out.getvalue() == "".join(chunks).encode()
        assert max(out.sizes) <= WRITE_BATCH_CHARS


def old_join(outputs: Sequence[bytes]) -> bytes:
    """How transform joined several files' bytes before outputs were chunks (the reference)."""
    if len(outputs) == 1:
        return outputs[0]
    parts: list[bytes] = []
    for index, data in enumerate(outputs):
        if index and parts and parts[-1] and not parts[-1].endswith(b"\n"):
            parts.append(b"\n")
        if index and data and not data.lstrip(b"\xef\xbb\xbf").startswith(b"---"):
            parts.append(b"---\n")
        parts.append(data)
    return b"".join(parts)


STREAMS = ["", "a: 1", "a: 1\n", "---\nb: 2\n", "\ufeff---\nc: 3", "\ufeff\ufeff---\n", "\ufeffd: 4\n", "\ufefb--x", "-", "--"]


@pytest.mark.parametrize("count", [1, 2, 3])
def test_join_streams_matches_the_byte_join(count: int) -> None:
    for combo in itertools.product(STREAMS, repeat=count):
        # Cut each stream into chunks at every character, and whole.
        for chunked in ([[text] for text in combo], [[c for c in text] for text in combo], [["", text, ""] for text in combo]):
            joined = "".join(files.join_streams(chunked)).encode()
            assert joined == old_join([text.encode() for text in combo]), combo


def failing_chunks(parts: int) -> Iterator[str]:
    for _ in range(parts):
        yield "x" * WRITE_BATCH_CHARS
    raise OSError(errno.ENOSPC, "No space left on device")


def test_write_atomically_with_failing_chunks_keeps_the_original(tmp_path: Path) -> None:
    kept, new = tmp_path / "kept.yaml", tmp_path / "new.yaml"
    kept.write_bytes(b"original\n")
    with pytest.raises(WavegenError, match="cannot write"):
        files.write_atomically([(new, ["fine\n"]), (kept, failing_chunks(3))])
    assert kept.read_bytes() == b"original\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.yaml"]


def test_write_atomically_takes_bytes_and_chunks(tmp_path: Path) -> None:
    files.write_atomically([(tmp_path / "a", b"bytes\n"), (tmp_path / "b", iter(["chünks", "\n"]))])
    assert (tmp_path / "a").read_bytes() == b"bytes\n"
    assert (tmp_path / "b").read_bytes() == "chünks\n".encode()


def _drained(fifo: Path) -> tuple[threading.Thread, list[bytes]]:
    """A reader of ``fifo`` in a thread (opening a FIFO for writing waits for one), and what it read."""
    read: list[bytes] = []
    reader = threading.Thread(target=lambda: read.append(fifo.read_bytes()), daemon=True)
    reader.start()
    return reader, read


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_an_output_that_is_no_regular_file_is_written_in_place(tmp_path: Path) -> None:
    """A FIFO (or /dev/null, /dev/stdout) stays what it is: a rename over it would leave a regular file."""
    fifo, regular = tmp_path / "pipe", tmp_path / "file.yaml"
    os.mkfifo(fifo)
    regular.write_bytes(b"old\n")
    reader, read = _drained(fifo)
    files.write_atomically([(regular, b"new\n"), (fifo, iter(["piped", "\n"]))])
    reader.join(timeout=10)
    assert read == [b"piped\n"]
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert regular.read_bytes() == b"new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.yaml", "pipe"]


def test_write_atomically_follows_symbolic_links(tmp_path: Path) -> None:
    """A manifest that is a link (to a file shared between overlays, say) keeps being one."""
    (tmp_path / "base").mkdir()
    real, link = tmp_path / "base" / "app.yaml", tmp_path / "app.yaml"
    real.write_bytes(b"old\n")
    real.chmod(0o640)
    link.symlink_to(Path("base") / "app.yaml")
    files.write_atomically([(link, b"new\n")])
    assert link.is_symlink() and os.readlink(link) == os.path.join("base", "app.yaml")
    assert real.read_bytes() == b"new\n" and stat.S_IMODE(real.stat().st_mode) == 0o640
    assert sorted(p.name for p in (tmp_path / "base").iterdir()) == ["app.yaml"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_transform_to_a_fifo(tmp_path: Path) -> None:
    """`wavegen transform -o` a pipe (a shell's >(...)) writes the result into it, as to stdout."""
    source, fifo = tmp_path / "in.yaml", tmp_path / "pipe"
    source.write_text(workload_bundle(3))
    os.mkfifo(fifo)
    reader, read = _drained(fifo)
    assert transform_command.run_plain([str(source), "-o", str(fifo)]) == 0
    reader.join(timeout=10)
    expected = b"".join(run([InputDocument(str(source), source.read_bytes())], Options()).outputs)
    assert read == [expected]
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_output_file_failing_midway_leaves_the_original(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "in.yaml"
    source.write_text(workload_bundle(200))
    out = tmp_path / "out.yaml"
    out.write_bytes(b"before\n")
    real = files.encode_chunks

    def one_block_then_full_disk(chunks: Any, **options: bool) -> Iterator[bytes]:
        blocks = real(chunks, **options)
        yield next(blocks)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files, "encode_chunks", one_block_then_full_disk)
    assert transform_command.run_plain([str(source), "-o", str(out)]) != 0
    assert "cannot write" in capsys.readouterr().err
    assert out.read_bytes() == b"before\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.yaml", "out.yaml"]


def test_outputs_of_a_run_with_errors_are_the_inputs_byte_for_byte() -> None:
    inputs = [InputDocument("broken.yaml", BROKEN), InputDocument("helm.yaml", (HELM / "input.yaml").read_bytes())]
    result = run(handed_over(list(inputs)), Options(missing="error"))
    assert result.has_errors
    assert result.outputs == [doc.data for doc in inputs]
    assert result.changed() == []
    out = io.BytesIO()
    result.write(0, out)
    assert out.getvalue() == BROKEN


def test_handed_over_inputs_are_not_kept_once_decoded(monkeypatch: pytest.MonkeyPatch) -> None:
    data = workload_bundle(5).encode()
    alone = sys.getrefcount(data)
    inputs = [InputDocument("bundle.yaml", data)]
    assert sys.getrefcount(data) == alone + 1
    seen: list[int] = []
    real = engine.Engine.add_held

    def add_held(self: engine.Engine, name: str, held: list[str | bytes], bom: str) -> None:
        seen.append(sys.getrefcount(data))
        real(self, name, held, bom)

    monkeypatch.setattr(engine.Engine, "add_held", add_held)
    result = run(handed_over(inputs), Options())
    assert seen == [alone]
    assert inputs == [] and sys.getrefcount(data) == alone
    assert result.outputs[0] != data


def test_transform_holds_no_input_bytes_while_parsing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    path = tmp_path / "in.yaml"
    path.write_bytes((HELM / "input.yaml").read_bytes())
    data = path.read_bytes()
    alone = sys.getrefcount(data)
    seen: list[int] = []
    real = engine.Engine.add_held

    def add_held(self: engine.Engine, name: str, held: list[str | bytes], bom: str) -> None:
        seen.append(sys.getrefcount(data))
        real(self, name, held, bom)

    monkeypatch.setattr(files, "_read", lambda _path, _consumed=False: data)
    monkeypatch.setattr(engine.Engine, "add_held", add_held)
    assert transform_command.run_plain([str(path)]) == 0
    assert seen == [alone]
    assert capsysbinary.readouterr().out == (HELM / "expected.yaml").read_bytes()


def test_the_decoded_text_is_not_kept_once_cut_into_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    """While documents are read, only their pieces are alive, not the whole text too (one input's size less at the peak)."""
    texts: list[str] = []
    counts: list[int] = []
    real_split, real_relevant = engine.split_marked, engine.Engine._relevant

    def split_marked(text: str) -> tuple[list[Piece], bool, bool]:
        texts.append(text)
        return real_split(text)

    def relevant(self: engine.Engine, piece: Piece) -> str | None:
        counts.append(sys.getrefcount(texts[0]))
        return real_relevant(self, piece)

    monkeypatch.setattr(engine, "split_marked", split_marked)
    monkeypatch.setattr(engine.Engine, "_relevant", relevant)
    result = run(handed_over([InputDocument("bundle.yaml", workload_bundle(5).encode())]), Options())
    assert result.outputs
    # held by the list above and getrefcount's argument only: not by run, add_held or the decoder
    assert counts and set(counts) == {2}


def test_bytes_cut_before_they_are_decoded_are_not_kept_once_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    """An input past ASCII is cut into pieces as bytes and each piece decoded: while documents are
    read, neither its bytes nor a decoded whole text is alive, only the pieces (of which those
    without a character past U+00FF take a byte a character)."""
    data = workload_bundle(5).replace("name: ", "name: x\u2019", 1).encode()
    texts: list[str] = []
    counts: list[int] = []
    real_split, real_relevant = engine.split_utf8, engine.Engine._relevant

    def split_utf8(held: bytes, exotic_breaks: bool = True) -> tuple[list[Piece], bool, bool]:
        texts.extend(piece.text for piece in real_split(held, exotic_breaks)[0])
        return real_split(held, exotic_breaks)

    def relevant(self: engine.Engine, piece: Piece) -> str | None:
        counts.append(sys.getrefcount(data))
        return real_relevant(self, piece)

    monkeypatch.setattr(engine, "split_utf8", split_utf8)
    monkeypatch.setattr(engine.Engine, "_relevant", relevant)
    alone = sys.getrefcount(data)
    result = run(handed_over([InputDocument("bundle.yaml", data)]), Options())
    assert result.outputs and "".join(texts) == data.decode()
    assert counts and set(counts) == {alone}  # this test's name and getrefcount's argument only
    assert [sys.getsizeof(text) < len(text) + 100 for text in texts].count(False) == 1  # one piece holds the quote


def cuts(text: str) -> list[list[str]]:
    """Ways to cut a text into chunks: whole, per character, in halves with empty chunks around."""
    half = len(text) // 2
    return [[text], list(text), ["", text[:half], "", text[half:], ""], [text[:1], text[1:]]]


@pytest.mark.parametrize(
    ("left", "right"), [("abc", "abc"), ("abc", "abd"), ("abc", "ab"), ("", ""), ("a\nb", "a\nc"), ("xa", "ax")]
)
def test_same_text_compares_the_joined_texts(left: str, right: str) -> None:
    for a, b in itertools.product(cuts(left), cuts(right)):
        assert engine.same_text(a, b) is (left == right), (a, b)


def test_documents_passed_through_are_checked_in_bounded_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """libyaml checks what the reader does not read in UTF-8 batches, never the whole input at once."""
    crd = (
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: c{i}\nspec:\n"
        + ("  description: " + "x" * 1000 + "\n") * 20
    )
    bundle = "---\n".join(crd.format(i=i) for i in range(40))
    assert len(bundle) > 12 * WRITE_BATCH_CHARS
    checked: list[str | bytes] = []
    accepts = nodes.libyaml_accepts

    def recording(text: str | bytes) -> bool:
        checked.append(text)
        return accepts(text)

    monkeypatch.setattr(nodes, "libyaml_accepts", recording)
    monkeypatch.setattr(engine, "READ_PASSED_THROUGH_CHARS", 0)  # libyaml checks every document
    monkeypatch.setattr(fastparse, "check_passed_through", lambda text, cache=None, screened=False: False)
    run([InputDocument("crds.yaml", bundle.encode())], Options())
    assert len(checked) > 1 and all(isinstance(batch, bytes) for batch in checked)
    assert max(len(batch) for batch in checked) < WRITE_BATCH_CHARS + len(crd) + 100
    assert b"".join(checked).decode() == bundle  # every document, each once
    # A bad document in a later batch still fails the check: its error is worded piece by piece.
    broken = bundle + "---\nkind: CustomResourceDefinition\nmetadata: {name: [\n"
    with pytest.raises(WavegenError, match="document 41"):
        run([InputDocument("crds.yaml", broken.encode())], Options())


def test_written_files_keep_their_mode_and_new_ones_are_private(tmp_path: Path) -> None:
    kept, new = tmp_path / "kept.yaml", tmp_path / "new.yaml"
    kept.write_text("old\n")
    kept.chmod(0o640)
    files.write_atomically([(kept, b"a\n"), (str(new), ["b\n"])])
    assert kept.read_bytes() == b"a\n" and new.read_bytes() == b"b\n"
    assert (kept.stat().st_mode & 0o777, new.stat().st_mode & 0o777) == (0o640, 0o600)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.yaml", "new.yaml"]  # no temporary file left


def test_released_sources_leave_outputs_and_findings_as_they_were() -> None:
    data = workload_bundle(5).encode() + b"---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"
    kept, released = (run([InputDocument("bundle.yaml", data)], Options()) for _ in range(2))
    assert released.plan.sources
    released.release_sources()  # before anything is built or written
    assert released.plan.sources == {}
    out = io.BytesIO()
    released.write(0, out)
    assert out.getvalue() == kept.outputs[0] != data
    assert released.outputs == kept.outputs
    assert released.findings == kept.findings and released.changed() == kept.changed() == [0]


def test_a_large_input_is_read_to_be_consumed_only_when_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """read_inputs(consumed=True): a file or standard input of at least CONSUMED_BYTES in a bytearray,
    which a run empties as it decodes its pieces; a smaller one, or without ``consumed``, bytes."""
    large = workload_bundle(400).replace("app", "app\u2019", 1).encode()
    assert len(large) >= files.CONSUMED_BYTES
    (tmp_path / "large.yaml").write_bytes(large)
    (tmp_path / "small.yaml").write_bytes(b"a: 1\n")
    as_read = files.read_inputs([tmp_path / "large.yaml", tmp_path / "small.yaml"], consumed=True)
    assert [type(doc.data) for doc in as_read] == [bytearray, bytes]
    assert as_read[0].data == large
    assert [type(doc.data) for doc in files.read_inputs([tmp_path / "large.yaml"])] == [bytes]
    for data, kind in ((large, bytearray), (b"a: 1\n", bytes)):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
        [doc] = files.read_inputs([None], consumed=True)
        assert type(doc.data) is kind and doc.data == data
    consumed = as_read[0].data
    expected = run([InputDocument("large.yaml", large)], Options()).outputs
    assert run(handed_over(as_read[:1]), Options()).outputs == expected
    assert consumed == bytearray()  # emptied as it was decoded


def test_transform_reads_its_inputs_to_be_consumed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    asked = []
    real = files.read_inputs

    def reading(paths: Sequence[str | Path | None], *, consumed: bool = False) -> list[InputDocument]:
        asked.append(consumed)
        return real(paths, consumed=consumed)

    monkeypatch.setattr(files, "read_inputs", reading)
    source = tmp_path / "in.yaml"
    source.write_text(workload_bundle(2))
    assert transform_command.run_plain([str(source), "-o", str(tmp_path / "out.yaml")]) == 0
    assert asked == [True]
