"""Reading inputs from files, directories and stdin; atomic writes of outputs."""

from __future__ import annotations

import os
import stat
import sys
from _collections_abc import Iterable, Iterator, Sequence

from ..errors import WavegenError
from ..stream.engine import InputDocument, encode_chunks

TYPE_CHECKING = False

if TYPE_CHECKING:
    from pathlib import Path
    from typing import BinaryIO

    from ..stream.splice import Spliced

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
STDIN_NAME = "<stdin>"


# An input at least this large is read into a bytearray for a caller that lets the engine consume
# it (read_inputs' ``consumed``): its bytes are let go of as its pieces are decoded.
CONSUMED_BYTES = 256 * 1024


def _read(path: str | Path, consumed: bool = False) -> bytes | bytearray:
    try:
        with open(path, "rb") as handle:
            if consumed:
                size = os.fstat(handle.fileno()).st_size
                if size >= CONSUMED_BYTES:
                    data = bytearray(size)
                    got = handle.readinto(data)
                    if got < size:
                        del data[got:]  # (shorter than its size said: cut short while read)
                    data += handle.read()  # (longer: the rest)
                    return data
            return handle.read()
    except OSError as err:
        raise WavegenError(f"cannot read: {err.strerror or type(err).__name__}", file=str(path)) from None


def _read_stdin(consumed: bool) -> bytes | bytearray:
    if not consumed:
        return sys.stdin.buffer.read()
    # In parts, into one bytearray: read whole as bytes first, it would be copied to be consumed.
    data = bytearray()
    while part := sys.stdin.buffer.read(1024 * 1024):
        data += part
    return data if len(data) >= CONSUMED_BYTES else bytes(data)


def expand_paths(paths: Sequence[str]) -> list[Path | None]:
    """Files named, and manifest files under directories named (sorted); None stands for stdin."""
    from pathlib import Path

    expanded: list[Path | None] = []
    for raw in paths:
        if raw == "-":
            expanded.append(None)
            continue
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.suffix in MANIFEST_SUFFIXES and p.is_file())
            expanded.extend(found)
        elif path.exists():
            expanded.append(path)
        else:
            raise WavegenError("no such file or directory", file=raw)
    return expanded


def _plain_file(raw: str) -> bool:
    """True if ``raw`` names a regular file and is spelt as ``str(Path(raw))`` would spell it (POSIX only)."""
    if os.name != "posix" or os.path.normpath(raw) != raw:
        return False
    try:
        return stat.S_ISREG(os.stat(raw).st_mode)
    except (OSError, ValueError):
        return False


def _suffix(name: str) -> str:
    """A file name's suffix as pathlib gives it ("" for ".yaml" or "x.")."""
    dot = name.rfind(".")
    return name[dot:] if 0 < dot < len(name) - 1 else ""


def _plain_directory(raw: str) -> bool:
    """True if ``raw`` names a directory and is spelt as ``str(Path(raw))`` would spell it (POSIX only)."""
    return os.name == "posix" and os.path.normpath(raw) == raw and os.path.isdir(raw)


def _manifest_files(directory: str) -> list[str]:
    """What ``expand_paths`` finds under a plainly spelt directory, found with os.scandir (pathlib
    costs a directory's run ~3.7 ms and 0.7 MB to import): manifest files at any depth, hidden
    ones too, sorted by their paths' parts as pathlib sorts them; directories that are symlinks
    are not entered, nor those that may not be listed, as Path.rglob does on Python 3.11."""
    found: list[tuple[str, ...]] = []
    pending: list[tuple[str, tuple[str, ...]]] = [(directory, ())]
    while pending:
        path, parts = pending.pop()
        try:
            with os.scandir(path) as listing:
                entries = list(listing)
        except PermissionError:
            continue
        for entry in entries:
            if _suffix(entry.name) in MANIFEST_SUFFIXES and entry.is_file():
                found.append((*parts, entry.name))
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            if is_dir and not entry.is_symlink():
                pending.append((entry.path, (*parts, entry.name)))
    prefix = "" if directory == "." else directory if directory.endswith("/") else directory + "/"
    return [prefix + "/".join(parts) for parts in sorted(found)]


def expand_names(paths: Sequence[str]) -> list[str | None]:
    """``expand_paths`` as strings; a plainly spelt file or directory name is expanded without importing pathlib."""
    names: list[str | None] = []
    for raw in paths:
        if raw == "-":
            names.append(None)
        elif _plain_file(raw):
            names.append(raw)
        elif _plain_directory(raw):
            names.extend(_manifest_files(raw))
        else:
            names.extend(None if path is None else str(path) for path in expand_paths([raw]))
    return names


def read_bundle(raw_paths: Sequence[str], *, consumed: bool = False) -> tuple[list[str | None], list[InputDocument]]:
    """The files named (directories expanded, - for stdin) and their bytes; naming no manifest at
    all is an error. ``consumed``: see read_inputs."""
    names = expand_names(raw_paths)
    if not names:
        raise WavegenError("no manifest files (*.yaml, *.yml, *.json) found", file=" ".join(raw_paths))
    return names, read_inputs(names, consumed=consumed)


def read_inputs(paths: Sequence[str | Path | None], *, consumed: bool = False) -> list[InputDocument]:
    """The inputs' bytes; with ``consumed``, a large one's in a bytearray, which the engine empties
    as it decodes it (for a caller that hands the inputs over and never reads them again: see
    engine.handed_over)."""
    docs = []
    for path in paths:
        if path is None:
            docs.append(InputDocument(STDIN_NAME, _read_stdin(consumed)))
        else:
            docs.append(InputDocument(str(path), _read(path, consumed)))
    return docs


# Characters whose UTF-8 bytes are all among EF BB BF: the bytes a stream's start is stripped of
# (byte-order marks) before looking for a "---" marker. Stripping them from the text is the same.
_MARK_BYTES_CHARS = "\ufeff\ufefb\uffff\ufffb"


def _starts_with_marker(chunks: Sequence[str | Spliced]) -> bool:
    head = ""
    for chunk in chunks:
        if head:
            head += chunk[:3]
        else:
            start = 0
            while start < len(chunk) and chunk[start : start + 1] in _MARK_BYTES_CHARS:
                start += 1
            head = chunk[start : start + 3]
        if len(head) >= 3:
            break
    return head.startswith("---")


def join_streams(outputs: Sequence[Sequence[str | Spliced]]) -> Iterator[str | Spliced]:
    """Several YAML streams (text chunks, or Output.documents) as one, adding separators only where needed; nothing is copied."""
    open_line = False  # the previous stream is not empty and its last line has no line break
    for index, chunks in enumerate(outputs):
        empty = not any(chunks)
        if open_line:
            yield "\n"
        if index and not empty and not _starts_with_marker(chunks):
            yield "---\n"
        yield from chunks
        open_line = not empty and not next(chunk for chunk in reversed(chunks) if chunk).endswith("\n")


def _temp_file(path: str) -> tuple[int, str]:
    """A new file (mode 0600) beside ``path`` for its content, opened for writing, and its name."""
    directory, name = os.path.split(path)
    for _ in range(100):
        # Random names, created exclusively, as tempfile.mkstemp makes them: tempfile itself (with
        # shutil, random and pathlib) would cost a run writing one file more time than the writing.
        temp = os.path.join(directory, f".{name}.{os.urandom(4).hex()}.wavegen-tmp")
        try:
            return os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600), temp
        except FileExistsError:
            continue
    import errno  # (a built-in module: importing it costs every run about 40 us, for this error alone)

    raise FileExistsError(errno.EEXIST, "no free temporary name", path)


def _write_content(handle: BinaryIO, data: bytes | Iterable[str | Spliced]) -> None:
    """Bytes as they are, or text chunks encoded and written in batches."""
    for block in (data,) if isinstance(data, bytes) else encode_chunks(data, cut=True):
        handle.write(block)


def write_atomically(replacements: Sequence[tuple[str | Path, bytes | Iterable[str | Spliced]]]) -> None:
    """Write every file or none: all temp files first, then renames.

    Each file's content is bytes, or text chunks encoded and written in batches (no copy of the whole).
    A target that exists and is no regular file (``/dev/null``, ``/dev/stdout``, a FIFO such as a
    shell's ``>(...)``) is written in place once the renames are done: a rename would put a
    regular file where the device or pipe was (``-o /dev/null`` run as root replaced it). A
    symbolic link is followed: the file it names is replaced, and the link stays (as formatters
    that pre-commit runs write through links).
    """
    staged: list[tuple[str, str]] = []
    in_place: list[tuple[str, bytes | Iterable[str | Spliced]]] = []
    try:
        for target, data in replacements:
            path = os.fspath(target)
            if os.path.islink(path):
                path = os.path.realpath(path)
            try:
                status: os.stat_result | None = os.stat(path)
            except FileNotFoundError:
                status = None  # a new file keeps the temporary one's 0600
            if status is not None and not stat.S_ISREG(status.st_mode):
                in_place.append((path, data))
                continue
            fd, temp = _temp_file(path)
            staged.append((temp, path))
            with os.fdopen(fd, "wb") as handle:
                _write_content(handle, data)
                handle.flush()
                os.fsync(handle.fileno())
            if status is not None:
                os.chmod(temp, stat.S_IMODE(status.st_mode))
        for temp, path in staged:
            os.replace(temp, path)
        staged.clear()
        for path, data in in_place:
            with open(path, "wb") as handle:
                _write_content(handle, data)
    except OSError as err:
        raise WavegenError(f"cannot write: {err.strerror or type(err).__name__}", file=str(err.filename or "")) from None
    finally:
        for temp, _ in staged:
            try:  # noqa: SIM105 - contextlib.suppress would import contextlib, as tempfile did
                os.unlink(temp)
            except OSError:
                pass
