"""Helm post-renderer: the rendered manifest stream on stdin, the same stream with config hashes on stdout."""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..errors import EXIT_FINDINGS, EXIT_OK
from ..inputs.options import HashingFlags, options_from_flags
from ..render.report import report_findings

# Helm reads its release namespace from this variable too, so when it is set it
# is the namespace helm installs into. Neither Helm 3 nor Helm 4 passes the
# -n/--namespace flag itself to a post-renderer.
HELM_NAMESPACE_ENV = "HELM_NAMESPACE"
INPUT_NAME = "<helm>"
# Helm 4 refuses a post-renderer's output that is only whitespace; a comment is
# a valid, empty YAML stream that both helms accept.
EMPTY_STREAM = b"# wavegen: no manifests\n"


def release_namespace(flag: str | None, environ: Mapping[str, str]) -> str | None:
    """The namespace objects without one land in: the flag, else helm's own environment variable."""
    if flag:
        return flag
    value = environ.get(HELM_NAMESPACE_ENV, "").strip()
    return value or None


def post_render(data: bytes, flags: HashingFlags, environ: Mapping[str, str] | None = None) -> tuple[bytes, int]:
    """The bytes to hand back to helm and the exit code; findings go to stderr."""
    from ..stream.engine import InputDocument, run

    env = os.environ if environ is None else environ
    options = options_from_flags(flags.with_namespace(release_namespace(flags.namespace, env)), env)
    result = run([InputDocument(INPUT_NAME, data)], options)
    report_findings(result.findings)
    if result.has_errors:
        return b"", EXIT_FINDINGS
    result.release_sources()  # only the output is built from here on
    output = result.outputs[0]
    if not output.strip():
        output = output + EMPTY_STREAM
    return output, EXIT_OK
