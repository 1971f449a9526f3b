"""`wavegen krm`: the kustomize/kpt exec KRM function (a ResourceList on stdin and stdout)."""

from __future__ import annotations

import sys
from _collections_abc import Sequence

from ..inputs.flags import invoke_directly, read_command_line, with_hashing_flags
from ..inputs.options import HashingFlags

TYPE_CHECKING = False

if TYPE_CHECKING:
    import typer

EXAMPLE = """\b
Example (kustomize runs it from a transformers: entry; by hand):
  kustomize cfg cat --wrap-kind ResourceList overlays/prod | wavegen krm"""


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


def run_plain(argv: Sequence[str]) -> int | None:
    """`wavegen krm ARGV` without importing typer when ARGV has a plain shape; None hands ARGV to typer."""
    kwargs = read_command_line((), argv)
    if kwargs is None:
        return None
    return invoke_directly(lambda: krm(**kwargs))


def register(app: typer.Typer) -> None:
    app.command("krm", epilog=EXAMPLE)(with_hashing_flags(krm))
