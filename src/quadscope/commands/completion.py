"""`quadscope completion bash|zsh`: a shell completion script generated from the parser.

Contract: prints the script `shtab` (https://github.com/iterative/shtab)
makes of the whole command line as `cli.build_parser()` builds it, so every
sub-command and option completes without a hand-kept list. Install with
`quadscope completion bash > /etc/bash_completion.d/quadscope` or, for zsh,
into a directory on `$fpath` as `_quadscope`.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

SHELLS = ("bash", "zsh")


def register(sub: Any) -> None:
    p = sub.add_parser("completion", description="Prints a completion script generated from quadscope's "
                       "options: `quadscope completion bash > /etc/bash_completion.d/quadscope`")
    p.add_argument("shell", choices=SHELLS, help="the shell to complete in")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import shtab

    from quadscope.cli import build_parser  # the whole parser, this command included

    sys.stdout.write(shtab.complete(build_parser(), shell=args.shell))
    return 0
