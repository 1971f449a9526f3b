"""Helm post-renderer: the rendered manifest stream on stdin, the same stream with config hashes on stdout."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from ..errors import EXIT_FINDINGS, EXIT_OK
from ..inputs.options import HashingFlags, options_from_flags

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..stream.splice import Spliced

# Helm reads its release namespace from this variable too, so when it is set it
# is the namespace helm installs into. Neither Helm 3 nor Helm 4 passes the
# -n/--namespace flag itself to a post-renderer.
HELM_NAMESPACE_ENV = "HELM_NAMESPACE"
INPUT_NAME = "<helm>"
# Helm 4 refuses a post-renderer's output that is only whitespace; a comment is
# a valid, empty YAML stream that both helms accept.
EMPTY_STREAM = "# wavegen: no manifests\n"
# What bytes.strip() strips: an output of these alone is empty to helm (str.strip() would take more).
_ASCII_WHITESPACE = " \t\n\r\x0b\x0c"


def release_namespace(flag: str | None, environ: Mapping[str, str]) -> str | None:
    """The namespace objects without one land in: the flag, else helm's own environment variable."""
    if flag:
        return flag
    value = environ.get(HELM_NAMESPACE_ENV, "").strip()
    return value or None


def post_render(
    held: list[bytes | bytearray], flags: HashingFlags, environ: Mapping[str, str] | None = None
) -> tuple[Sequence[str | Spliced], int]:
    """What to hand back to helm, as documents (``Output.documents``: write them with
    ``write_chunks``), and the exit code; findings go to stderr. ``held``: the rendered bytes in
    a one-item list, taken out of it (as ``Engine.add_held`` takes them: nothing keeps them once
    decoded; ``files.read_inputs(consumed=True)`` reads them so)."""
    from ..stream.engine import InputDocument, handed_over, run

    env = os.environ if environ is None else environ
    options = options_from_flags(flags.with_namespace(release_namespace(flags.namespace, env)), env)
    result = run(handed_over([InputDocument(INPUT_NAME, held.pop())]), options)
    if result.findings:
        from ..render.report import report_findings  # a run without findings need not load it

        report_findings(result.findings)
    if result.has_errors:
        return [], EXIT_FINDINGS
    result.release_sources()  # only the output is written from here on
    documents = result.files[0].documents
    if all(document.__class__ is str and not document.strip(_ASCII_WHITESPACE) for document in documents):
        return [*documents, EMPTY_STREAM], EXIT_OK
    return documents, EXIT_OK
