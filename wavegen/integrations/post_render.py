"""Helm post-renderer: the rendered manifest stream on stdin, the same stream with config hashes on stdout."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from typing import Any

from ..errors import EXIT_FINDINGS, EXIT_OK
from ..inputs.options import add_core_flags

# Helm reads its release namespace from this variable too, so when it is set it
# is the namespace helm installs into. Neither Helm 3 nor Helm 4 passes the
# -n/--namespace flag itself to a post-renderer.
HELM_NAMESPACE_ENV = "HELM_NAMESPACE"
INPUT_NAME = "<helm>"
# Helm 4 refuses a post-renderer's output that is only whitespace; a comment is
# a valid, empty YAML stream that both helms accept.
EMPTY_STREAM = b"# wavegen: no manifests\n"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "post-render",
        help="run as a helm post-renderer (rendered manifests on stdin, result on stdout)",
        description=(
            "Read the manifests helm rendered on stdin and write them to stdout with config hashes on the pod "
            "templates. Objects without a namespace are taken to be in the release namespace: pass it with "
            f"--namespace (helm does not tell post-renderers), or set {HELM_NAMESPACE_ENV}."
        ),
    )
    add_core_flags(parser)
    parser.set_defaults(func=cmd_post_render)


def release_namespace(flag: str | None, environ: Mapping[str, str]) -> str | None:
    """The namespace objects without one land in: the flag, else helm's own environment variable."""
    if flag:
        return flag
    value = environ.get(HELM_NAMESPACE_ENV, "").strip()
    return value or None


def post_render(data: bytes, args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> tuple[bytes, int]:
    """The bytes to hand back to helm and the exit code; findings go to stderr."""
    from ..cli.main import report_findings
    from ..inputs.options import options_from_args
    from ..stream.engine import InputDocument, run

    env = os.environ if environ is None else environ
    args.namespace = release_namespace(args.namespace, env)
    options = options_from_args(args, env)
    result = run([InputDocument(INPUT_NAME, data)], options)
    report_findings(result.findings)
    if result.has_errors:
        return b"", EXIT_FINDINGS
    output = result.outputs[0]
    if not output.strip():
        output = output + EMPTY_STREAM
    return output, EXIT_OK


def cmd_post_render(args: argparse.Namespace) -> int:
    output, code = post_render(sys.stdin.buffer.read(), args)
    if code == EXIT_OK:
        sys.stdout.buffer.write(output)
        sys.stdout.buffer.flush()
    return code
