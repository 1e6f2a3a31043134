"""The `quadscope` command: parse, dispatch to one sub-command, map errors to exits.

Contract: this and `commands/*` are the only modules that print. A
`QuadscopeError` becomes `quadscope: <sentence>` on stderr and its exit code;
Ctrl-C becomes exit 130 after whatever was measured has been stored; SIGTERM
and SIGHUP are raised as `errors.Stopped` (a KeyboardInterrupt) and stop the
same way, exit 143 and 129. An
OSError the environment raised is one sentence and exit 4; any other
exception is a bug: one sentence naming a file with its traceback
(`crash.save_traceback`) and exit CRASH_EXIT (70).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import signal
import sys
import threading
from collections.abc import Iterator, Sequence

from quadscope import __version__
from quadscope.errors import QuadscopeError, Stopped, exit_codes

CRASH_EXIT = 70  # EX_SOFTWARE (sysexits.h): an internal error, not the user's

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


STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def _raise_stopped(signum: int, frame: object) -> None:
    raise Stopped(signum)


@contextlib.contextmanager
def stop_signals_raise() -> Iterator[None]:
    """While inside, SIGTERM and SIGHUP raise `Stopped`; the old handlers come back after."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set handlers: a caller in a thread keeps its own
        return
    old = {s: signal.signal(s, _raise_stopped) for s in STOP_SIGNALS}
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


def main(argv: Sequence[str] | None = None) -> int:
    args_given = list(sys.argv[1:] if argv is None else argv)
    for i, arg in enumerate(args_given, 1):
        if "\x00" in arg:  # no program can receive it, and os calls would raise on it
            print(f"quadscope: argument {i} holds a NUL character, which no command line "
                  "can carry; remove it", file=sys.stderr)
            return 2
    options = args_given[:args_given.index("--")] if "--" in args_given else args_given
    for arg in options:
        if arg.startswith("--") and arg.endswith("=--"):  # argparse would pass a list on
            print(f"quadscope: {arg}: an option's value cannot be `--`", file=sys.stderr)
            return 2
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a usage error already explained
        return exc.code if isinstance(exc.code, int) else 2
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        with stop_signals_raise():
            return int(args.func(args) or 0)
    except QuadscopeError as exc:
        print(f"quadscope: {exc}", file=sys.stderr)
        return exc.exit_code
    except Stopped as exc:
        print(f"quadscope: stopped by {signal.Signals(exc.signum).name}; every finished run "
              "is stored.", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("quadscope: interrupted; every finished run is stored.", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:  # the environment refused (a full disk, a vanished file)
        where = f" {exc.filename}" if exc.filename else ""
        print(f"quadscope: cannot use{where}: {exc.strerror or exc}", file=sys.stderr)
        return 4
    except Exception as exc:  # a bug: one sentence here, the traceback in a file
        from quadscope.crash import save_traceback

        saved = save_traceback(exc, args_given)
        where = f"the traceback is in {saved}" if saved else "no traceback file could be written"
        print(f"quadscope: internal error ({type(exc).__name__}: {str(exc)[:200]}); this is a "
              f"bug in quadscope: {where}; please attach it to an issue", file=sys.stderr)
        return CRASH_EXIT
