"""A fuzz of the command line: random argv from the real parser's options and hostile values.

Contract: `fuzz(count, seed, sandbox)` builds `count` argv with `random.Random(seed)`
from the options of `cli.build_parser()` as it is (every sub-command, every
option, its positionals, and a command tail for `run`), each option given a
hostile value (nan, inf, -1, 1e400, '', '{n}', unicode, control characters,
a 5,000-character string, paths that do not exist, are directories or are
files) or a plausible one, runs each through `cli.main` and returns a
`FuzzResult`: how many it tried, the exit codes, and every argv that reached
the crash handler (exit 70) or printed a traceback.

Bounded in time: nothing measures. `guard_measuring(Stopped)` stops every argv
valid enough to measure with a clean exit 99 (executor, sampler, doctor and
demo builds are replaced), analyses of a stored sweep are memoised per sweep,
file renderers write stub bytes, and one parser serves every argv (argparse
keeps no state between parses); 5,000 argv take seconds.
Files land in the sandbox: the working directory is one of its folders.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import random
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

from bad_inputs import Stopped, guard_measuring, run_argv
from quadscope import render
from quadscope.cli import CRASH_EXIT, build_parser

HOSTILE: tuple[str, ...] = (
    "nan", "NaN", "inf", "-inf", "-1", "0", "1", "1e400", "-1e400", "9223372036854775808",
    "9007199254740993", "1e3", "2.5", "", " ", "{n}", "{i}", "{}", "%s", "ünïcødé", "日本語",
    "١٢٣", "\x07\x1b[31mred", "tab\there", "new\nline", "x" * 5000, "--", "-", "last",
    "latest", "good", "allfailed", "999", "1e3..1e6", "1,2,3,4", "1..1e9*1.0000001",
    "0..1e18+1", "wall_s", "n^2", "python:os:getpid", "python:", "/bin/true {n}",
    "'unbalanced", "{missing}", "{dir}", "{file}", "{db}", "{corrupt}", "{foreign}",
    "{good}", "{list}", "{types}", "{text}", "{dirjson}", "{out}/new", "{out}/../x.json",
    "{notexec}",
)
TAILS: tuple[tuple[str, ...], ...] = (
    (), ("--",), ("--", "/bin/true", "{n}"), ("--", "/bin/true"), ("--", "{dir}", "{n}"),
    ("--", "python:os:getpid", "{n}"), ("--", "python:os:getpid", "{n}", "x"),
    ("--", "/bin/true", "{n}", "--vs", "/bin/true", "{n}"), ("--", "/bin/true", "{n}", "--vs"),
    ("--", ""), ("--", "no-such-program", "{n}"), ("--", "\x1b", "{n}"),
)


@dataclass
class FuzzResult:
    tried: int = 0
    seconds: float = 0.0
    exits: Counter[int] = field(default_factory=Counter)
    crashes: list[tuple[list[str], str]] = field(default_factory=list)

    @property
    def clear(self) -> int:
        """Argv answered with a sentence (or a clean success), not a crash."""
        return self.tried - len(self.crashes)


def _options(parser: argparse.ArgumentParser) -> dict[str, list[argparse.Action]]:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {name: [a for a in p._actions if not isinstance(a, argparse._HelpAction)]
            for name, p in sub.choices.items()}


def random_argv(rng: random.Random, commands: dict[str, list[argparse.Action]],
                paths: dict[str, str]) -> list[str]:
    """One argv: a sub-command, its positionals, 0-5 options, hostile values, maybe a tail."""

    def value() -> str:
        text = rng.choice(HOSTILE)
        for key, path in paths.items():
            text = text.replace("{" + key + "}", path)
        return text

    name = rng.choice(sorted(commands))
    actions = commands[name]
    argv = [name]
    flagged = [a for a in actions if a.option_strings]
    for action in rng.sample(flagged, k=min(len(flagged), rng.randint(0, 5))):
        flag = rng.choice(action.option_strings)
        if action.nargs == 0:
            argv.append(flag)
        elif rng.random() < 0.2:
            argv.append(f"{flag}={value()}")
        else:
            argv += [flag, value()]
    for action in actions:
        positional = not action.option_strings and action.nargs != argparse.REMAINDER
        if positional and rng.random() < 0.95:
            argv.append(value())
    if any(a.nargs == argparse.REMAINDER for a in actions):
        argv += [value() if x == "{n}" and rng.random() < 0.1 else x for x in rng.choice(TAILS)]
    if rng.random() < 0.05:
        argv.insert(rng.randrange(len(argv) + 1), value())
    return argv


def _stub_renderers() -> contextlib.ExitStack:
    """File renderers write a few stub bytes: a PNG costs a second, and what is fuzzed here is
    the handling of the paths (renderers have their own tests). A folder renderer still
    writes nothing when nothing was fitted, as the real ones do."""
    stack = contextlib.ExitStack()
    for r in render.file_renderers():

        def stub(self: Any, analysis: Any, _folder: bool = r.folder) -> Any:
            if not _folder:
                return b"stub\n"
            return {"stub.txt": b"stub\n"} if any(analysis.fits.values()) else {}

        stack.enter_context(mock.patch.object(r, "render", stub))
    return stack


def _memo_analyses() -> contextlib.ExitStack:
    """`analyse` of a stored sweep is a pure function of it: compute each once."""
    from quadscope.analyse import analysis as analysis_module

    real = analysis_module.analyse
    cache: dict[tuple[Any, ...], Any] = {}

    @functools.wraps(real)
    def memo(sweep: Any, runs: Any, **kw: Any) -> Any:
        key = (repr(sweep), len(runs), repr(sorted(kw.items(), key=lambda kv: kv[0])))
        if key not in cache:
            cache[key] = real(sweep, runs, **kw)
        return cache[key]

    stack = contextlib.ExitStack()
    # The commands import `analyse` where they use it: patching its module reaches them all.
    stack.enter_context(mock.patch.object(analysis_module, "analyse", memo))
    return stack


@contextlib.contextmanager
def _in(folder: Path) -> Iterator[None]:
    old = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(old)


def fuzz(count: int, seed: int, sandbox: dict[str, str]) -> FuzzResult:
    """Run `count` random argv (see the module docstring) and collect what reached the crash handler."""
    rng = random.Random(seed)
    result = FuzzResult()
    cwd = Path(sandbox["out"]) / "cwd"
    cwd.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    parser = build_parser()
    with guard_measuring(Stopped), _memo_analyses(), _stub_renderers(), _in(cwd), \
            mock.patch("quadscope.cli.build_parser", lambda *_: parser), \
            mock.patch.dict(os.environ, {"XDG_CACHE_HOME": str(cwd / ".cache"),
                                         "QUADSCOPE_DB": str(Path(sandbox["db"]))}):
        for _ in range(count):
            argv = random_argv(rng, _options(parser), sandbox)
            try:
                code, _, err = run_argv(argv)
            except BaseException as exc:
                code, err = CRASH_EXIT, f"escaped main: {type(exc).__name__}: {exc}"
            result.tried += 1
            result.exits[code] += 1
            if code == CRASH_EXIT or "Traceback" in err:
                result.crashes.append((argv, err))
    result.seconds = time.monotonic() - t0
    return result
