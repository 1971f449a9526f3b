"""`wavegen krm`: the kustomize/kpt exec KRM function (a ResourceList on stdin and stdout)."""

from __future__ import annotations

import sys

import typer

from ..inputs.flags import with_hashing_flags
from ..inputs.options import HashingFlags

EXAMPLE = """\b
Example (kustomize runs it from a transformers: entry; by hand):
  kustomize cfg cat --wrap-kind ResourceList overlays/prod | wavegen krm"""


@with_hashing_flags
def krm(*, flags: HashingFlags) -> int:
    """Run as a kustomize/kpt exec KRM function (ResourceList on stdin and stdout).

    Reads a ResourceList (config.kubernetes.io/v1 or v1beta1) on stdin and writes it to stdout with config hashes
    on the pod templates and findings in 'results'. Options come from functionConfig (a ConfigMap's data or a
    wavegen.io/v1alpha1 ConfigHash's spec); flags override them.
    """
    from ..integrations.krm import process

    outcome = process(sys.stdin.buffer.read(), flags)
    sys.stdout.buffer.write(outcome.output)
    sys.stdout.buffer.flush()
    # Orchestrators show stderr to people; results are for machines. Say it in both.
    for result in outcome.results:
        print(f"wavegen: {result['severity']}: {result['message']}", file=sys.stderr)
    return outcome.exit_code


def register(app: typer.Typer) -> None:
    app.command("krm", epilog=EXAMPLE)(krm)
