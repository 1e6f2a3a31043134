"""Typed errors. Each is one clear sentence for the user; the CLI maps them to exit codes.

Contract: raise these for user mistakes and environment problems only; the CLI
prints `quadscope: <message>` and exits with `exit_code`, never a traceback.
Programming errors stay ordinary exceptions.
"""

from __future__ import annotations


class QuadscopeError(Exception):
    """Base: a user-facing failure with one sentence of explanation."""

    exit_code = 2


class UsageError(QuadscopeError):
    """The command line is wrong (missing {n}, bad sizes, conflicting options)."""

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
    """Nothing to fit: every run failed, or too few sizes succeeded."""

    exit_code = 6


class ToolMissingError(QuadscopeError):
    """An external tool (perf, a C compiler, chromium) is absent or not permitted."""

    exit_code = 7


# Exit codes that are outcomes, not errors: a scaling gate (`--fail-above`,
# `compare --fail-on`) that failed, and one the data cannot decide yet.
GATE_FAILED_EXIT = 8
GATE_UNDECIDED_EXIT = 9
