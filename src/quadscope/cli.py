"""The `quadscope` command: parse, dispatch to one sub-command, map errors to exits.

Contract: this and `commands/*` are the only modules that print. A
`QuadscopeError` becomes `quadscope: <sentence>` on stderr and its exit code;
Ctrl-C becomes exit 130 after whatever was measured has been stored.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from quadscope import __version__
from quadscope.errors import QuadscopeError, exit_codes

# One line per sub-command module; each has register(subparsers) and run(args).
COMMAND_MODULES: tuple[str, ...] = (
    "quadscope.commands.run",
    "quadscope.commands.stored",
    "quadscope.commands.report",
    "quadscope.commands.demo",
    "quadscope.commands.profile",
    "quadscope.commands.doctor",
    "quadscope.commands.history",
    "quadscope.commands.imports",
    "quadscope.commands.completion",
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        # argparse's default prints usage and exits 2; we keep the exit code but
        # make the sentence ours, so every user mistake reads the same way.
        self.exit(2, f"quadscope: {message} (see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="quadscope",
        description="Empirical scaling profiler: sweep a command over n and fit how it grows.",
        epilog="exit codes:\n" + "\n".join(f"  {code:>3}  {text}" for code, text in exit_codes().items()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"quadscope {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a usage error already explained
        return exc.code if isinstance(exc.code, int) else 2
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except QuadscopeError as exc:
        print(f"quadscope: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("quadscope: interrupted; every finished run is stored.", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
