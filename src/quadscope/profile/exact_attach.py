"""Put Callgrind's exact per-function growth into the profile a user reads.

Contract: `exact_culprits(growth)` turns the ranked `ExactFunction`s into
`Culprit` rows (a library function's row shows the user function calling it:
`append_field → __strcat_avx2`; `self_s` is empty: the counts are
instructions, not seconds). `attach_exact(attribution, growth, counted)`
returns the sampled `Attribution` with those rows as its culprits (the
sampler's kernel rows kept after them: Callgrind sees no kernel), the culprit
sentence in `extra["culprit_sentence"]` (`Attribution.culprit_sentence`), the
counts' summary in `extra["callgrind"]`, a note saying which numbers came
from where, and one saying to rebuild with -g when the culprit has no line.
`exact_attribution(sweep_id, growth, counted, why)` is the profile from
Callgrind alone, for a machine where no sampler works (`why`: the sampler's
error, kept as a note): event "instructions", `samples` the total count per
size, no flame graph. `wants_exact(argv)` says whether a command is a native
program (not a Python interpreter or function target, whose functions
Callgrind cannot see).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from quadscope.measure.pyfunc import PREFIX as PYFUNC_PREFIX
from quadscope.profile.callgrind import CallgrindRuns
from quadscope.profile.exact_growth import ExactGrowth
from quadscope.profile.perfscript import is_kernel_dso
from quadscope.profile.python import python_argv
from quadscope.profile.records import CULPRIT_SENTENCE, Attribution, Culprit

MAX_ROWS = 10


def wants_exact(argv: Sequence[str]) -> bool:
    """A native program: neither a Python interpreter nor a `python:MODULE:FUNC` target."""
    return bool(argv) and not python_argv(argv) and not argv[0].startswith(PYFUNC_PREFIX)


def exact_culprits(growth: ExactGrowth, limit: int = MAX_ROWS) -> tuple[Culprit, ...]:
    total = growth.total_ir[-1] if growth.total_ir else 0
    out = []
    for r in growth.functions[:limit]:
        path = (r.caller, r.name) if r.caller else (r.name,)
        out.append(Culprit(
            r.name, r.obj, r.self_class, r.self_exponent, None, r.share_at_max,
            r.growth_share, r.superlinear_share,
            r.inclusive_ir[-1] / total if total else 0.0, (), path))
    return tuple(out)


def exact_summary(growth: ExactGrowth, counted: CallgrindRuns) -> dict[str, Any]:
    c = growth.culprit
    return {
        "sizes": list(growth.sizes),
        "total_ir": list(growth.total_ir),
        "spent_s": counted.spent_s,
        "budget_s": counted.budget_s,
        "culprit": None if c is None else {
            "name": c.name, "file": c.file, "line": c.line, "via": c.via, "cls": c.cls,
            "exponent": c.exponent, "share_at_max": c.share_at_max, "size_n": c.size_n,
            "grows_superlinearly": c.grows_superlinearly},
        "functions": [{"name": r.name, "obj": r.obj, "file": r.file, "line": r.line,
                       "user": r.user, "self_ir": list(r.self_ir),
                       "inclusive_ir": list(r.inclusive_ir), "self_class": r.self_class,
                       "inclusive_class": r.inclusive_class}
                      for r in growth.functions[:MAX_ROWS]],
    }


def exact_attribution(sweep_id: int, growth: ExactGrowth, counted: CallgrindRuns,
                      why: str) -> Attribution:
    superlinear = growth.culprit is not None and growth.culprit.grows_superlinearly
    base = Attribution(sweep_id, growth.sizes, "callgrind", "instructions", growth.total_ir, (),
                       (), "", "", superlinear,
                       notes=(f"no time samples ({why}): the culprits are Callgrind's counts "
                              "alone, with no kernel functions and no flame graph",))
    return attach_exact(base, growth, counted)


def attach_exact(a: Attribution, growth: ExactGrowth, counted: CallgrindRuns) -> Attribution:
    kernel = tuple(c for c in a.culprits if is_kernel_dso(c.dso))
    n0, n1 = growth.sizes[0], growth.sizes[-1]
    where = (f"per-function classes are exact instruction counts under callgrind at "
             f"n = {n0}..{n1} ({counted.spent_s:.1f} s of a {counted.budget_s:.1f} s budget)")
    if a.sampler != "callgrind":
        where += f"; times, the kernel and the flame graph are {a.sampler}'s samples"
    c = growth.culprit
    no_line = () if c is None or c.line else (
        f"{c.name} has no file:line: its program has no debug information; rebuild with -g",)
    notes = (*a.notes, *(n for n in counted.notes if n not in a.notes), where, *no_line)
    # Callgrind's sentence replaces the samples' one where it names a function.
    said = {CULPRIT_SENTENCE: growth.sentence} if c is not None or not a.culprit_sentence else {}
    extra = {**a.extra, **said, "callgrind": exact_summary(growth, counted)}
    return replace(a, culprits=(*exact_culprits(growth), *kernel), notes=notes, extra=extra)
