"""`wavegen post-render`: the helm post-renderer (rendered manifests on stdin, the result on stdout)."""

from __future__ import annotations

import sys

import typer

from ..errors import EXIT_OK
from ..inputs.flags import with_hashing_flags
from ..inputs.options import HashingFlags

EXAMPLE = """\b
Example:
  helm install app ./chart -n prod --post-renderer "$(command -v wavegen)" \\
    --post-renderer-args post-render --post-renderer-args=--namespace=prod"""


@with_hashing_flags
def post_render(*, flags: HashingFlags) -> int:
    """Run as a helm post-renderer (rendered manifests on stdin, result on stdout).

    Writes the manifests back with config hashes on the pod templates. Objects without a namespace are taken to
    be in the release namespace: pass it with --namespace (helm does not tell post-renderers), or set
    HELM_NAMESPACE.
    """
    from ..integrations.post_render import post_render as run_post_render

    output, code = run_post_render(sys.stdin.buffer.read(), flags)
    if code == EXIT_OK:
        sys.stdout.buffer.write(output)
        sys.stdout.buffer.flush()
    return code


def register(app: typer.Typer) -> None:
    app.command("post-render", epilog=EXAMPLE)(post_render)
