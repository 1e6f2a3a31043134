"""Typed errors. Each is one clear sentence for the user; the CLI maps them to exit codes.

Contract: raise these for user mistakes and environment problems only; the CLI
prints `quadscope: <message>` and exits with `exit_code`, never a traceback.
Programming errors stay ordinary exceptions. `exit_codes()` lists every code
the CLI can return with what it means: the one table `--help` and the README
show. `Stopped` is not an error: SIGTERM and SIGHUP raised as a KeyboardInterrupt
(cli.py installs the handlers), so every Ctrl-C path also handles them.
"""

from __future__ import annotations


class QuadscopeError(Exception):
    """Base: a user-facing failure with one sentence of explanation."""

    exit_code = 2


class UsageError(QuadscopeError):
    """The command line is wrong (missing {n}, bad sizes, conflicting options)."""

    exit_code = 2


class OutputError(UsageError):
    """An output cannot be written: its file or folder refuses it, or standard output is full.

    `quadscope list >/dev/full` once exited 4, the code of a bad database.
    """

    exit_code = 2


class SizesError(UsageError):
    """A --sizes spec that does not parse or yields too few sizes."""


class ProgramError(QuadscopeError):
    """The program to sweep does not exist or is not executable."""

    exit_code = 3


class StoreError(QuadscopeError):
    """The database is corrupt, not ours, or from a newer schema."""

    exit_code = 4


class UnknownRunError(QuadscopeError):
    """No stored sweep has that id or name."""

    exit_code = 5


class FitRefusedError(QuadscopeError):
    """Nothing to fit: every run failed, too few sizes succeeded, or doctor checked no probe.

    A doctor whose every probe was skipped (`--budget 0.001`, no C compiler) once exited 0.
    """

    exit_code = 6


class ToolMissingError(QuadscopeError):
    """An external tool (perf, a C compiler, chromium) is absent or not permitted."""

    exit_code = 7


class SweepBusyError(QuadscopeError):
    """Another live process is running the sweep asked for."""

    exit_code = 10  # 8 and 9 are the --fail-above gate's: failed, undecided


class SetupError(QuadscopeError):
    """A --setup or --prepare command failed: the run it prepares cannot be measured."""

    exit_code = 3


class SetupTimeoutError(SetupError):
    """A --setup or --prepare command ran past what it was allowed (`Job.untimed_timeout_s`)."""


class FleetError(QuadscopeError):
    """The Ray cluster given to --fleet did not answer, or has no node to run on."""

    exit_code = 11


class BisectError(QuadscopeError):
    """bisect could name no commit: GOOD is not good, BAD is not bad, or all between were skipped."""

    exit_code = 13


# Codes that are not errors raised here: the CLI's own and the CI gates' (analyse/gate.py).
OTHER_EXIT_CODES: dict[int, str] = {
    0: "success (every gate passed)",
    8: "a gate failed: a metric grows faster than --fail-above allows",
    9: "a gate could not be decided: the sweep cannot tell whether the metric is within the limit",
    70: "quadscope itself failed: one sentence and the path of the saved traceback",
    129: "stopped by SIGHUP (the terminal closed); every finished run is stored",
    130: "interrupted (Ctrl-C); every finished run is stored",
    12: "--fleet: some nodes did not finish (each is named); the others' results are stored",
    143: "stopped by SIGTERM; every finished run is stored",
}


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised where Ctrl-C raises KeyboardInterrupt so both stop alike.

    `signum` is the signal; the exit code is 128 + signum (143, 129), as a shell reports it.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def exit_codes() -> dict[int, str]:
    """Every exit code of the CLI, in order, each with one line saying what it means."""
    codes = dict(OTHER_EXIT_CODES)
    for cls in _subclasses(QuadscopeError):
        # Only quadscope's own errors: a test (or a plug-in) may subclass these too.
        if "exit_code" in vars(cls) and cls.__module__.startswith("quadscope."):
            doc = (cls.__doc__ or "").strip().splitlines()[0].rstrip(".")
            doc = doc[:1].lower() + doc[1:]
            codes[cls.exit_code] = f"{codes[cls.exit_code]}; {doc}" if cls.exit_code in codes else doc
    return dict(sorted(codes.items()))


def _subclasses(cls: type[QuadscopeError]) -> list[type[QuadscopeError]]:
    found: list[type[QuadscopeError]] = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found


# Exit codes that are outcomes, not errors: a scaling gate (`--fail-above`,
# `compare --fail-on`) that failed, and one the data cannot decide yet.
GATE_FAILED_EXIT = 8
GATE_UNDECIDED_EXIT = 9
PARTIAL_FLEET_EXIT = 12
