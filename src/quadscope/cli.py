"""The `quadscope` command: parse, dispatch to one sub-command, map errors to exits.

Contract: this and `commands/*` are the only modules that print. A
`QuadscopeError` becomes `quadscope: <sentence>` on stderr (wrapped with a
hanging indent when stderr is a terminal: `notice.error`) and its exit code;
Ctrl-C becomes exit 130 after whatever was measured has been stored; SIGTERM
and SIGHUP are raised as `errors.Stopped` (a KeyboardInterrupt) and stop the
same way, exit 143 and 129. An
OSError the environment raised is one sentence and exit 4; any other
exception is a bug: one sentence naming a file with its traceback
(`crash.save_traceback`) and exit CRASH_EXIT (70).

Start-up: `COMMANDS` is the table of contents, one row per sub-command (its
name, its module and its line in `quadscope --help`). `main` builds the
options of the one sub-command named in argv and lists the others by name
and help only, so `quadscope --help` and `--version` import no command
module (no numpy, scipy, matplotlib: tests/test_startup.py), and `quadscope
run ...` imports the run command alone. `build_parser()` with no argument
builds every sub-command in full (shell completion, tests).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import os
import re
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from quadscope import __version__
from quadscope.errors import OutputError, QuadscopeError, Stopped, StoreError, exit_codes

CRASH_EXIT = 70  # EX_SOFTWARE (sysexits.h): an internal error, not the user's



@dataclass(frozen=True, slots=True)
class Command:
    """A sub-command: `module` has register(subparsers) and run(args); `help` is its line."""

    name: str
    module: str
    help: str


COMMANDS: tuple[Command, ...] = (
    Command("run", "quadscope.commands.run",
            "sweep a command over n and fit how every metric grows"),
    Command("list", "quadscope.commands.stored", "list stored sweeps"),
    Command("show", "quadscope.commands.stored",
            "re-fit and print a stored sweep (no re-running)"),
    Command("export", "quadscope.commands.stored",
            "write the report files of a stored sweep (no re-running)"),
    Command("compare", "quadscope.commands.stored",
            "compare two stored sweeps: class, constant or offset"),
    Command("report", "quadscope.commands.report",
            "write an HTML report and/or PNG plots of a stored sweep (nothing is re-run)"),
    Command("demo", "quadscope.commands.demo",
            "measure two built-in before/after stories (about 2 minutes; --quick: seconds)"),
    Command("profile", "quadscope.commands.profile",
            "sample a stored sweep and name the functions that make it grow"),
    Command("doctor", "quadscope.commands.doctor",
            "reproduce known Linux performance pathologies and check this machine for them"),
    Command("history", "quadscope.commands.history",
            "a named sweep across commits: class, exponent and cost at a reference n"),
    Command("bisect", "quadscope.commands.bisect",
            "find the first commit whose growth class exceeds GOOD's (a temporary worktree)"),
    Command("import", "quadscope.commands.imports",
            "store hyperfine --parameter-scan or pytest-benchmark JSON as sweeps"),
    Command("completion", "quadscope.commands.completion",
            "print a bash or zsh completion script"),
)
COMMAND_MODULES: tuple[str, ...] = tuple(dict.fromkeys(c.module for c in COMMANDS))


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        # argparse's default prints usage and exits 2; we keep the exit code but
        # make the sentence ours, so every user mistake reads the same way.
        from quadscope.notice import error_text  # here: `--help` imports only cli and errors

        self.exit(2, error_text(_clipped(f"{message} (see `{self.prog} --help`)"), sys.stderr)
                  + "\n")

    def _get_values(self, action: argparse.Action, arg_strings: list[str]) -> Any:
        # argparse calls this for values given on the command line only (never for
        # defaults), so here an empty value (`--only ''`, `--db=`) is told apart from
        # an option left out. Each option's empty default means "not given", so an
        # empty value given would be silently ignored: refuse it instead.
        if action.option_strings and arg_strings == [""]:
            self.error(f"{action.option_strings[-1]} is empty: give it a value, or leave the "
                       "option out")
        if action.type in (int, float):
            for value in arg_strings:
                _check_plain_number(self, action, value)
        return super()._get_values(action, arg_strings)


def _check_plain_number(parser: _Parser, action: argparse.Action, value: str) -> None:
    """int() and float() also read `1_000` and every script's digits (`--repeat １０` ran
    10 repeats); a number option takes ASCII digits alone, as --sizes does."""
    odd = next((ch for ch in value if not ch.isascii() or ch == "_"), None)
    if odd is None:
        return
    import unicodedata

    from quadscope.textsafe import visible

    name = action.option_strings[-1] if action.option_strings else action.dest
    what = ("a separator" if odd == "_" else
            f"U+{ord(odd):04X} ({unicodedata.name(odd, 'unnamed')})")
    parser.error(f"{name} '{visible(value)}' is not a number: it holds {what}; write it with "
                 "the ASCII digits 0-9, e.g. 10")


class _Registering:
    """The sub-parsers action as `register(sub)` sees it: each command's help comes from COMMANDS."""

    def __init__(self, sub: Any) -> None:
        self._sub = sub
        self.added: set[str] = set()

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        self.added.add(name)
        listed = {c.name: c.help for c in COMMANDS}
        parser: argparse.ArgumentParser = self._sub.add_parser(
            name, help=listed.get(name), **kwargs)
        return parser


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser; with `only`, just that sub-command's module is imported and its options built.

    The other sub-commands are listed (name and help) but take no options, which is
    all `--help`, `--version` and a usage error need. `only=""` builds none.
    """
    parser = _Parser(
        prog="quadscope",
        description="Empirical scaling profiler: sweep a command over n and fit how it grows.",
        epilog=exit_codes_text(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"quadscope {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    registering = _Registering(sub)
    wanted = [c.module for c in COMMANDS if only is None or c.name == only]
    for name in COMMAND_MODULES if only is None else dict.fromkeys(wanted):
        importlib.import_module(name).register(registering)
    for c in COMMANDS:
        if c.name not in registering.added:
            sub.add_parser(c.name, help=c.help)
    return parser


def exit_codes_text() -> str:
    """The exit codes under `quadscope --help`, each broken to the terminal's width as
    argparse breaks its own help (its width less 2), continuations under the text."""
    import shutil
    import textwrap

    width = max(shutil.get_terminal_size((80, 24)).columns - 2, 40)
    return "exit codes:\n" + "\n".join(
        textwrap.fill(text, width, initial_indent=f"  {code:>3}  ", subsequent_indent=" " * 7)
        for code, text in exit_codes().items())


def _command_named(args: Sequence[str]) -> str:
    """The sub-command argv names (its first word that is not an option), or ""."""
    for arg in args:
        if arg == "--":
            break
        if not arg.startswith("-"):
            return arg if arg in {c.name for c in COMMANDS} else ""
    return ""


class _Refused:
    """A stream (standard output, or its byte buffer) whose refused write (a full disk,
    /dev/full, an I/O error) is an `OutputError`, exit 2 as an unwritable --json file is,
    not the bare OSError that exited 4, the code of a bad database. A reader gone
    (BrokenPipeError) stays itself: `main` ends quietly then."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    @contextlib.contextmanager
    def _refusal(self) -> Iterator[None]:
        try:
            yield
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputError("cannot write to standard output: "
                              f"{exc.strerror or exc}") from None

    def write(self, data: Any) -> int:
        with self._refusal():
            return int(self._stream.write(data))

    def writelines(self, lines: Any) -> None:
        with self._refusal():
            self._stream.writelines(lines)

    def flush(self) -> None:
        with self._refusal():
            self._stream.flush()

    @property
    def buffer(self) -> _Refused:
        return _Refused(self._stream.buffer)


@contextlib.contextmanager
def stdout_refusals_said() -> Iterator[None]:
    """While inside, standard output is `_Refused`; the stream itself comes back after."""
    real = sys.stdout
    sys.stdout = _Refused(real)
    try:
        yield
    finally:
        if isinstance(sys.stdout, _Refused):
            sys.stdout = real


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
            _say(f"argument {i} holds a NUL character, which no command line can carry; "
                 "remove it")
            return 2
    options = args_given[:args_given.index("--")] if "--" in args_given else args_given
    for arg in options:
        if arg.startswith("--") and arg.endswith("=--"):  # argparse would pass a list on
            _say(f"{arg}: an option's value cannot be `--`")
            return 2
    _stderr_somewhere()
    _ignore_odd_sizes()
    if sys.stdout is None:  # started with standard output closed (`quadscope run ... >&-`)
        _say("standard output is closed, so there is nowhere to print; redirect it to a "
             "file or to /dev/null (`>/dev/null`) instead of closing it")
        return 2
    _encode_what_it_can(sys.stdout)
    try:  # Ctrl-C while the command's modules load (a second at load) was a traceback
        parser = build_parser(_command_named(args_given))
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a usage error already explained
        return exc.code if isinstance(exc.code, int) else 2
    except KeyboardInterrupt:
        _say("interrupted before anything ran")
        return 130
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        with stop_signals_raise(), stdout_refusals_said():
            try:
                return int(args.func(args) or 0)
            finally:
                _close_readers()
    except QuadscopeError as exc:
        _say(str(exc))
        return exc.exit_code
    except Stopped as exc:
        _say(f"stopped by {signal.Signals(exc.signum).name}{_kept(args.command)}")
        return exc.exit_code
    except KeyboardInterrupt:
        _say(f"interrupted{_kept(args.command)}")
        return 130
    except BrokenPipeError:
        return 0
    except SystemExit as exc:  # a parser used again inside a command (bisect's options after refs)
        if isinstance(exc.__context__, BrokenPipeError):  # rich's Console on a closed pipe
            return 0  # as above: the reader has all it wanted
        return exc.code if isinstance(exc.code, int) else 2
    except OSError as exc:  # the environment refused (a full disk, a vanished file)
        where = f" {exc.filename}" if exc.filename else ""
        _say(f"cannot use{where}: {exc.strerror or exc}")
        return StoreError.exit_code
    except Exception as exc:  # a bug: one sentence here, the traceback in a file
        from quadscope.crash import save_traceback

        saved = save_traceback(exc, args_given)
        where = f"the traceback is in {saved}" if saved else "no traceback file could be written"
        _say(f"internal error ({type(exc).__name__}: {str(exc)[:200]}); this is a "
             f"bug in quadscope: {where}; please attach it to an issue")
        return CRASH_EXIT


# What a stopped command kept, by what it does: one that measures stores each run as it
# ends; `import` stores each sweep in one transaction. A stopped `import` once said
# "every finished run is stored" of a file it had not stored a sweep of.
_KEPT = {"run": "; every finished run is stored.", "demo": "; every finished run is stored.",
         "profile": "; every finished run is stored.", "doctor": "; every finished run is stored.",
         "bisect": "; every finished run is stored.", "history": "; every finished run is stored.",
         "import": "; each sweep is stored whole or not at all: `quadscope list` shows those "
                   "that were."}


def _kept(command: str | None) -> str:
    """The end of the sentence for a stopped `command`: what it kept, or "."."""
    return _KEPT.get(command or "", ".")


def _close_readers() -> None:
    """The read-only stores the command opened, closed (`commands.common.close_readers`);
    looked up, not imported: a command that opened none may not have loaded it."""
    common = sys.modules.get("quadscope.commands.common")
    if common is not None:
        common.close_readers()


def _stderr_somewhere() -> None:
    """Standard error closed (`quadscope run ... 2>&-`): /dev/null takes its place.

    Python then has no sys.stderr (or, started through a bash script such as an
    interpreter shim, one on the script's own read-only descriptor), so the first
    warning ended the command with exit 1 and no word, nothing stored; and the next
    file opened would take descriptor 2, where a child's error output would land.
    The command runs as if stderr went to /dev/null.
    """
    if _writable(2):
        if sys.stderr is None:
            sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 (for good)
        return
    fd = os.open(os.devnull, os.O_WRONLY)
    if fd != 2:
        os.dup2(fd, 2)
        os.close(fd)
    if sys.stderr is None:
        sys.stderr = open(2, "w", encoding="utf-8", closefd=False)  # noqa: SIM115 (for good)


def _ignore_odd_sizes() -> None:
    """COLUMNS or LINES that are not ASCII digits are left out, as if unset: rich reads
    any `str.isdigit()` text with int(), so `COLUMNS=²` ended every command with exit 70."""
    for name in ("COLUMNS", "LINES"):
        value = os.environ.get(name)
        if value is not None and not (value.isascii() and value.isdigit()):
            del os.environ[name]


def _writable(fd: int) -> bool:
    """Whether descriptor `fd` is open for writing."""
    import fcntl

    try:
        return fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE != os.O_RDONLY
    except OSError:
        return False


def _encode_what_it_can(stream: object) -> None:
    """A character the output's encoding lacks (`—` under LANG=C, PYTHONIOENCODING=ascii,
    a path's undecodable byte) is written as an escape, as stderr already does, rather
    than failing the command."""
    if isinstance(stream, io.TextIOWrapper) and stream.errors != "backslashreplace":
        stream.reconfigure(errors="backslashreplace")


def _say(sentence: str) -> None:
    """Print `quadscope: <sentence>` on stderr, its control characters made visible, wrapped
    at the terminal's width with a hanging indent when stderr is one (`notice.error`).

    Error sentences quote what others wrote (paths, commands, a child's
    stderr, names from an imported file); this is the one place they reach the
    terminal, so it is the one place they are neutralised (textsafe.visible).
    """
    from quadscope.notice import error  # here: `--help` imports only cli and errors

    error(_clipped(sentence))


_LONG_WORD = re.compile(r"\S{301,}")


def _clipped(sentence: str) -> str:
    """`sentence` with every word past 300 characters (a 100,000-character name or --sizes
    quoted back) cut to its start and end, so the sentence stays one readable line."""
    return _LONG_WORD.sub(lambda m: f"{m.group()[:200]}…[{len(m.group()) - 240:,} characters]…"
                          f"{m.group()[-40:]}", sentence)

