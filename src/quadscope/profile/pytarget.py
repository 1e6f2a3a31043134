"""A `python:MODULE:FUNC[:SETUP]` target as a program a sampler can run and watch.

Contract: `as_program(command)` returns, for a Python function target, the
argv of a child Python (`sys.executable`, the interpreter that times the
calls, with this process's `sys.path`) that imports the function, builds its
argument (`SETUP(n)`, or n itself) and makes the call a given number of times
(the argv's last word, which `CallsSampler` appends), with `{n}` left in
place for `run.spec.substitute`; for any other command, None.
`profiled_sweep(sweep)` is the sweep with that command (unchanged for other
targets), so `driver.choose_sampler` picks the Python sampler (py-spy, with
perf's C frames where it works) and the profile names the user's function
with its file: `unique_words_slow (core.py) makes it grow`. When the function
named is the target itself, `with_call_growth` gives its class from the
sweep's own timed calls (`measured_calls`), which are many and unperturbed by
a sampler, rather than from a few sampled sizes.

`CallsSampler(sampler, calls, func)` wraps that sampler: at size n the child
makes `calls[n]` calls (`calls_per_run(runs)`: enough for `CALLS_S` of
calling, from the call's timed runs, at most `MAX_CALLS`), so the call
outweighs the child's start-up and setup. Each profile is then put per call
for the call and per run for the rest (`per_call`): the stacks through the
function (a frame named `func`) keep their weight, every other stack's weight
is multiplied by the calls, and the profile's time is its sampled time per
run over the calls. So the call's time is per call at every size, and the
start-up's and setup's time per run, as a script's would be. (Scaling the
child's samples to the runs' time, which is the call alone, inflated the
call's growth, n³ for an n² function; dividing every stack by the calls made
a fixed start-up look as if it grew.)

Why sampling, not a count per function: on Python 3.11 the deterministic
per-function hooks (`sys.setprofile`, opcode tracing) count calls and
bytecodes, and the costly part of a Python function is often one bytecode
doing O(n) work in C (`x in a_list`, `list.insert`): its opcode count grows
as n where its time grows as n², a confidently wrong class. Callgrind counts
that C work exactly but cannot tell which Python function ran it (3.11 has no
perf trampolines). Samples of the call's process see the time where it is
spent. The setup's own frame is sampled too, beside the call: it is the
user's code, named as such, and seldom the culprit.
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from quadscope.measure.pycount import LOAD_SOURCE, target_refs
from quadscope.measure.pyfunc import PREFIX
from quadscope.model import Run, Sweep
from quadscope.profile.attribute import FitFn
from quadscope.profile.faults import FaultReport
from quadscope.profile.records import CULPRIT_SENTENCE, Attribution
from quadscope.profile.sampled_sentence import Measured, sampled_culprit
from quadscope.profile.sampler import Overhead, Sampler
from quadscope.profile.stacks import StackProfile

COUNTED = "instructions"  # the exact meter's metric, when the sweep counted the calls
# argv: sys.path (JSON), MODULE:FUNC, MODULE:SETUP or "", n, calls.
CHILD = """\
import importlib, json, sys
path, target, setup, n, calls = sys.argv[1:]
sys.path[:0] = json.loads(path)
""" + LOAD_SOURCE + """\
func = load(target)
arg = load(setup)(int(n)) if setup else int(n)
for _ in range(int(calls)):
    func(arg)
"""
CALLS_S = 0.25  # of calling per profiled run
MAX_CALLS = 1000


def is_function_target(command: Sequence[str]) -> bool:
    return bool(command) and command[0].startswith(PREFIX)


def as_program(command: Sequence[str]) -> tuple[str, ...] | None:
    """The child Python's argv for a function target (n still `{n}`); None otherwise."""
    if not is_function_target(command):
        return None
    func, setup = target_refs(command[0])
    path = json.dumps([p for p in sys.path if p])
    size = command[-1] if len(command) > 1 else "{n}"
    return (sys.executable, "-c", CHILD, path, func, setup, size)


def profiled_sweep(sweep: Sweep) -> Sweep:
    """The sweep whose command a sampler runs: a function target's child Python, else itself."""
    program = as_program(sweep.command)
    return sweep if program is None else replace(sweep, command=program, shell=False)


def calls_per_run(runs: Sequence[Run]) -> dict[int, int]:
    """Calls per profiled run at each timed size: `CALLS_S` of calling, 1 to `MAX_CALLS`."""
    by_size: dict[int, list[float]] = {}
    for r in runs:
        if r.variant == "A" and not r.warmup and r.measurement.ok and r.measurement.wall_s > 0:
            by_size.setdefault(r.size_n, []).append(r.measurement.wall_s)
    return {n: max(1, min(MAX_CALLS, math.ceil(CALLS_S / statistics.median(ts))))
            for n, ts in by_size.items()}


def function_name(command: Sequence[str]) -> str:
    """The called function's own name (`Parser.parse` -> `parse`), as a sampler's frame has it."""
    return target_refs(command[0])[0].split(":", 1)[1].split(".")[-1]


def per_call(prof: StackProfile, calls: int, func: str) -> StackProfile:
    """The call's stacks per call, every other stack per run (see the module docstring)."""
    if calls <= 1:
        return prof
    stacks = {st: w if any(f.symbol == func for f in st) else w * calls
              for st, w in prof.stacks.items()}
    total, was = sum(stacks.values()), prof.total_weight
    ref = prof.reference_s * total / (was * calls) if was else prof.reference_s
    return replace(prof, stacks=stacks, reference_s=ref,
                   extra={**prof.extra, "calls_per_run": calls})


class CallsSampler:
    """`sampler` on the child Python, making `calls[n]` calls at size n; time per call."""

    def __init__(self, sampler: Sampler, calls: Mapping[int, int], func: str) -> None:
        self.inner = sampler
        self.calls = dict(calls)
        self.func = func
        self.name = sampler.name
        self.notes = sampler.notes

    def _calls(self, size_n: int) -> int:
        return self.calls.get(size_n, 1)

    def sample(self, argv: Sequence[str], *, size_n: int, reference_s: float | None,
               out_dir: Path) -> StackProfile:
        k = self._calls(size_n)
        prof = self.inner.sample([*argv, str(k)], size_n=size_n, reference_s=None,
                                 out_dir=out_dir)
        return per_call(prof, k, self.func)

    def sample_faults(self, argv: Sequence[str], *, size_n: int, expected_faults: int | None,
                      out_dir: Path) -> FaultReport | None:
        return self.inner.sample_faults([*argv, str(self._calls(size_n))], size_n=size_n,
                                        expected_faults=expected_faults, out_dir=out_dir)

    def overhead(self, argv: Sequence[str], *, size_n: int) -> Overhead | None:
        return self.inner.overhead([*argv, "1"], size_n=size_n)


def measured_calls(command: Sequence[str], runs: Sequence[Run]) -> Measured:
    """The sweep's timed calls of a function target, for `sampled_sentence`."""
    good = [r for r in runs if r.variant == "A" and not r.warmup and r.measurement.ok]
    counted = tuple((r.size_n, float(v)) for r in good
                    if (v := r.measurement.values.get(COUNTED)) is not None)
    return Measured(function_name(command), tuple(r.size_n for r in good),
                    tuple(r.measurement.wall_s for r in good), counted)


def with_call_growth(a: Attribution, command: Sequence[str], runs: Sequence[Run], *,
                     fit: FitFn, seed: int = 0) -> Attribution:
    """`a` whose culprit sentence, when it names the target's own function, gives the
    class of the sweep's timed calls (settled by many runs) instead of the samples'."""
    if a.flame_tree is None:
        return a
    said = sampled_culprit(a.culprits, a.flame_tree, superlinear=a.superlinear,
                           size_n=a.sizes[-1], fit=fit, seed=seed,
                           measured=measured_calls(command, runs))
    if said is None or "by the sweep" not in said:
        return a
    return replace(a, extra={**a.extra, CULPRIT_SENTENCE: said})


NOTE = ("a python: function target is profiled by sampling a child Python that builds the "
        "argument and repeats the call (about 0.25 s of calls per run); times are per call, "
        "and the setup's frame is shown beside the call's")

__all__ = [
    "CALLS_S",
    "CHILD",
    "MAX_CALLS",
    "NOTE",
    "CallsSampler",
    "as_program",
    "calls_per_run",
    "function_name",
    "is_function_target",
    "measured_calls",
    "per_call",
    "profiled_sweep",
    "with_call_growth",
]
